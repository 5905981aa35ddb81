// PerfRecordConverter on hand-built records, laid out as the kernel writes them for
// the attrs uprof opens (attach/event_attr.h): no kernel needed.
#include "uprof/engine/perf/perf_records.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstring>

#include "drain/record_builder.h"
#include "uprof/attach/event_attr.h"

namespace uprof {
namespace {

using test::RecordBuilder;
using test::sample_record;

constexpr uint64_t kEntryId = 41, kReturnId = 42, kSideBandId = 50;
constexpr uint16_t kDi = 5, kSi = 4, kAx = 0;

ValueSpec reg(std::string name, uint16_t r, ValueSource src = ValueSource::Register) {
  return ValueSpec{.name = std::move(name), .source = src, .reg = r};
}

// `add a b` on x86-64: probe 0 reads di and si at entry, probe 1 ax at the return.
CapturePlan add_plan() {
  CapturePlan plan{.arch = Arch::X86_64, .probes = {}};
  plan.probes.push_back({.probe = 0, .path = "/bin/x", .file_offset = 0x1139, .is_return = false,
                         .reads = {.regs_mask = (1u << kDi) | (1u << kSi), .stack_bytes = 0},
                         .values = {reg("a", kDi), reg("b", kSi)}});
  plan.probes.push_back({.probe = 1, .path = "/bin/x", .file_offset = 0x1139, .is_return = true,
                         .reads = {.regs_mask = 1u << kAx, .stack_bytes = 0},
                         .values = {reg("$retval", kAx, ValueSource::ReturnValue)}});
  return plan;
}

struct Converter {
  CapturePlan plan = add_plan();
  PerfRecordConverter c{plan, 1000};
  Converter() {
    c.add_id(kEntryId, 0, build_sample_attr(plan.probes[0].reads));
    c.add_id(kReturnId, 1, build_sample_attr(plan.probes[1].reads));
    c.add_id(kSideBandId, std::nullopt, build_sample_attr(ProbeReads{}));
  }
  Event one(const std::vector<std::byte>& rec) {
    auto e = c.convert(rec);
    EXPECT_TRUE(e) << e.error().message;
    EXPECT_TRUE(e && e->has_value());
    return e && *e ? **e : Event{};
  }
};

TEST(PerfRecords, ASampleBecomesItsProbesValueSlots) {
  Converter k;
  // Registers come in mask-bit order: si (bit 4) before di (bit 5).
  const uint64_t entry_regs[] = {10, 1};
  Event e = k.one(sample_record(kEntryId, 4242, 4243, 5000, entry_regs));
  EXPECT_EQ(e.kind, EventKind::Sample);
  EXPECT_EQ(e.probe, 0u);
  EXPECT_EQ(e.pid, 4242u);
  EXPECT_EQ(e.tid, 4243u);
  EXPECT_EQ(e.time, 5000u);
  ASSERT_EQ(e.nvalues, 2);
  EXPECT_EQ(e.values[0], 1u);   // a = di
  EXPECT_EQ(e.values[1], 10u);  // b = si
  EXPECT_EQ(e.missing, 0u);

  const uint64_t ret_regs[] = {11};
  Event r = k.one(sample_record(kReturnId, 4242, 4243, 5900, ret_regs));
  EXPECT_EQ(r.probe, 1u);
  ASSERT_EQ(r.nvalues, 1);
  EXPECT_EQ(r.values[0], 11u);
  EXPECT_EQ(k.c.recorded(), (std::vector<uint64_t>{1, 1}));
  EXPECT_EQ(k.c.samples(), 2u);
  EXPECT_EQ(k.c.missing_values(), 0u);
}

TEST(PerfRecords, RegistersTheKernelCouldNotGiveAreMissingNotZeroes) {
  Converter k;
  // abi 0: the kernel had no user registers (a hit in a kernel thread's context).
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE).u64(kEntryId).u32(1).u32(1).u64(7).u64(0).build();
  Event e = k.one(rec);
  EXPECT_EQ(e.missing, 0b11u);
  EXPECT_EQ(k.c.missing_values(), 2u);
}

TEST(PerfRecords, LostSamplesAreChargedToTheirProbe) {
  Converter k;
  // LOST: id, lost, then the sample_id trailer (pid, tid, time, identifier).
  auto rec = RecordBuilder(PERF_RECORD_LOST).u64(kReturnId).u64(345).u32(7).u32(8).u64(999).u64(kReturnId).build();
  Event e = k.one(rec);
  EXPECT_EQ(e.kind, EventKind::Lost);
  EXPECT_EQ(e.probe, 1u);
  EXPECT_EQ(e.lost, 345u);
  EXPECT_EQ(e.time, 1000u);        // no record before it in its ring: from the start
  EXPECT_EQ(e.lost_until, 1000u);  // its own time (999), never before the gap's start
  EXPECT_EQ(k.c.lost_records(), (std::vector<uint64_t>{0, 345}));
  EXPECT_EQ(k.c.samples(), 0u);
}

// The kernel writes LOST just before the first record that fits again: the drops lie
// between the ring's record before it and the LOST record's own time. Any thread that
// ran on the ring's CPU may have lost events: tid 0. Each ring has its own.
TEST(PerfRecords, ALossSpansItsRingsGap) {
  Converter k;
  const uint64_t regs[] = {10, 1};
  k.one(sample_record(kEntryId, 7, 8, 5000, regs));  // ring 0
  ASSERT_TRUE(k.c.convert(sample_record(kEntryId, 7, 9, 5500, regs), 1));
  auto rec = RecordBuilder(PERF_RECORD_LOST).u64(kEntryId).u64(12).u32(7).u32(8).u64(9000).u64(kEntryId).build();
  Event e = k.one(rec);  // ring 0
  EXPECT_EQ(e.kind, EventKind::Lost);
  EXPECT_EQ(e.time, 5000u);
  EXPECT_EQ(e.lost_until, 9000u);
  EXPECT_EQ(e.tid, 0u);
  EXPECT_EQ(e.pid, 0u);
  auto other = k.c.convert(rec, 1);
  ASSERT_TRUE(other && *other);
  EXPECT_EQ((*other)->time, 5500u);
}

// Drops the kernel counted that no LOST record reported (the ring still full at the end)
// become one loss of every thread at the end; none when every drop was reported.
TEST(PerfRecords, DropsNoRecordReportedAreALossAtTheEnd) {
  EXPECT_FALSE(unreported_loss(40, 40, 7000));
  EXPECT_FALSE(unreported_loss(30, 40, 7000));  // the side band's own drops
  auto e = unreported_loss(45, 40, 7000);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, EventKind::Lost);
  EXPECT_EQ(e->lost, 5u);
  EXPECT_EQ(e->time, 7000u);
  EXPECT_EQ(e->tid, 0u);
}

TEST(PerfRecords, TaskRecordsFromTheSideBand) {
  Converter k;
  // COMM: pid, tid, "worker\0\0", sample_id (pid, tid, time, identifier).
  auto comm = RecordBuilder(PERF_RECORD_COMM)
                  .u32(10).u32(11).u64(0x72656b726f77ull).u32(10).u32(11).u64(2000).u64(kSideBandId).build();
  Event c = k.one(comm);
  EXPECT_EQ(c.kind, EventKind::Comm);
  EXPECT_EQ(c.comm, "worker");
  EXPECT_EQ(c.tid, 11u);
  EXPECT_EQ(c.time, 2000u);
  // FORK: pid, ppid, tid, ptid, time, sample_id.
  auto fork = RecordBuilder(PERF_RECORD_FORK)
                  .u32(20).u32(10).u32(20).u32(11).u64(2100).u32(20).u32(20).u64(2100).u64(kSideBandId).build();
  Event f = k.one(fork);
  EXPECT_EQ(f.kind, EventKind::Fork);
  EXPECT_EQ(f.pid, 20u);
  ASSERT_EQ(f.nvalues, 2);
  EXPECT_EQ(f.values[0], 10u);  // parent pid
  EXPECT_EQ(f.values[1], 11u);  // parent tid
  // A side band's LOST belongs to no probe.
  auto lost = RecordBuilder(PERF_RECORD_LOST).u64(kSideBandId).u64(2).u32(0).u32(0).u64(2200).u64(kSideBandId).build();
  Event l = k.one(lost);
  EXPECT_EQ(l.probe, UINT32_MAX);
  EXPECT_EQ(k.c.lost_records(), (std::vector<uint64_t>{0, 0}));
}

TEST(PerfRecords, RecordsTheRecordingDoesNotKeep) {
  Converter k;
  auto mmap = RecordBuilder(PERF_RECORD_MMAP2).u64(0).u64(0).build();
  auto e = k.c.convert(mmap);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_FALSE(e->has_value());
  EXPECT_EQ(k.c.mapping(), nullptr);
}

// record -g: the side band's MMAP2 of a file becomes a /proc/PID/maps line for the
// unwinder (no event); anonymous memory is no mapping uprof can unwind through.
TEST(PerfRecords, TheSideBandsFileMappingsBecomeMapsLines) {
  Converter k;
  auto mmap2 = [](const char (&name)[16]) {
    RecordBuilder b(PERF_RECORD_MMAP2);
    b.u32(7).u32(7).u64(0x7f0000001000).u64(0x2000).u64(0x1000).u32(0xfe).u32(1).u64(99).u64(0);
    b.u32(PROT_READ | PROT_EXEC).u32(MAP_PRIVATE);
    for (int i = 0; i < 16; i += 8) {
      uint64_t w = 0;
      std::memcpy(&w, name + i, 8);
      b.u64(w);
    }
    return b.u32(7).u32(7).u64(1500).u64(kSideBandId).build();
  };
  auto e = k.c.convert(mmap2("/usr/lib/libz.s"));
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_FALSE(e->has_value());
  ASSERT_NE(k.c.mapping(), nullptr);
  EXPECT_EQ(k.c.mapping()->pid, 7u);
  EXPECT_EQ(k.c.mapping()->time, 1500u);
  EXPECT_EQ(k.c.mapping()->maps_line, "7f0000001000-7f0000003000 r-xp 00001000 fe:01 99 /usr/lib/libz.s");
  const char anon_name[16] = "//anon";
  auto anon = k.c.convert(mmap2(anon_name));
  ASSERT_TRUE(anon) << anon.error().message;
  EXPECT_EQ(k.c.mapping(), nullptr);
}

TEST(PerfRecords, BadRecordsAreErrorsThatNameThem) {
  Converter k;
  const uint64_t regs[] = {1, 2};
  auto unknown = k.c.convert(sample_record(99, 1, 1, 1, regs));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "record: a PERF_RECORD_SAMPLE of unknown event id 99");
  // Cut after the time: the registers it promises are not there.
  auto cut = RecordBuilder(PERF_RECORD_SAMPLE).u64(kEntryId).u32(1).u32(1).u64(7).u64(PERF_SAMPLE_REGS_ABI_64).build();
  auto e = k.c.convert(cut);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("PERF_RECORD_SAMPLE"), std::string::npos) << e.error().message;
  EXPECT_EQ(k.c.samples(), 0u);
}

}  // namespace
}  // namespace uprof
