// BpfRecordConverter on hand-built records, laid out as the BPF program writes them
// (bpf_capture_abi.h): no kernel needed.
#include "uprof/engine/bpf/bpf_records.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "uprof/engine/bpf/bpf_capture_abi.h"
#include "uprof/model/string_value.h"

namespace uprof {
namespace {

CapturePlan add_plan() {
  CapturePlan plan{.arch = Arch::X86_64, .probes = {}};
  ValueSpec k{.name = "k", .source = ValueSource::Constant};
  k.constant = -3;
  plan.probes.push_back({.probe = 0, .path = "/bin/x", .file_offset = 0x1139, .is_return = false, .reads = {},
                         .values = {ValueSpec{.name = "a", .source = ValueSource::Register, .reg = 5},
                                    ValueSpec{.name = "b", .source = ValueSource::Register, .reg = 4}, k}});
  plan.probes.push_back({.probe = 1, .path = "/bin/x", .file_offset = 0x1139, .is_return = true, .reads = {},
                         .values = {ValueSpec{.name = "$retval", .source = ValueSource::ReturnValue, .reg = 0}}});
  return plan;
}

std::vector<std::byte> record(uint8_t kind, uint32_t probe, uint32_t pid, uint32_t tid, uint64_t time,
                              std::vector<uint64_t> values, uint32_t missing = 0, uint16_t cpu = 1,
                              std::size_t extra = 0) {
  uprof_bpf_record h{};
  h.kind = kind;
  h.nvalues = static_cast<uint8_t>(values.size());
  h.cpu = cpu;
  h.probe = probe;
  h.pid = pid;
  h.tid = tid;
  h.time = time;
  h.missing = missing;
  std::vector<std::byte> out(sizeof h + values.size() * 8 + extra);
  std::memcpy(out.data(), &h, sizeof h);
  if (!values.empty()) std::memcpy(out.data() + sizeof h, values.data(), values.size() * 8);
  return out;
}

TEST(BpfRecords, HitBecomesASampleWithItsSlotsAndConstants) {
  CapturePlan plan = add_plan();
  BpfRecordConverter c(plan);
  // Reserved in a size class larger than the record needs: the rest is ignored.
  auto e = c.convert(record(UPROF_BPF_HIT, 0, 4242, 4243, 5000, {1, 10, 0}, 0, 1, 40));
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->cpu, 1);
  EXPECT_EQ(e->event.kind, EventKind::Sample);
  EXPECT_EQ(e->event.probe, 0u);
  EXPECT_EQ(e->event.pid, 4242u);
  EXPECT_EQ(e->event.tid, 4243u);
  EXPECT_EQ(e->event.time, 5000u);
  ASSERT_EQ(e->event.nvalues, 3);
  EXPECT_EQ(e->event.values[0], 1u);
  EXPECT_EQ(e->event.values[1], 10u);
  EXPECT_EQ(static_cast<int64_t>(e->event.values[2]), -3);
  auto r = c.convert(record(UPROF_BPF_HIT, 1, 4242, 4243, 5100, {11}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->event.values[0], 11u);
  EXPECT_EQ(c.recorded(), (std::vector<uint64_t>{1, 1}));
  EXPECT_EQ(c.samples(), 2u);
}

TEST(BpfRecords, MissingSlotsAreCounted) {
  CapturePlan plan = add_plan();
  BpfRecordConverter c(plan);
  auto e = c.convert(record(UPROF_BPF_HIT, 0, 1, 1, 1, {0, 10, 0}, 0b1));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->event.missing, 1u);
  EXPECT_EQ(c.missing_values(), 1u);
}

TEST(BpfRecords, TaskRecords) {
  CapturePlan plan = add_plan();
  BpfRecordConverter c(plan);
  auto f = c.convert(record(UPROF_BPF_FORK, 0, 4300, 4300, 10, {4242, 4243}));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->event.kind, EventKind::Fork);
  EXPECT_EQ(f->event.pid, 4300u);
  ASSERT_EQ(f->event.nvalues, 2);
  EXPECT_EQ(f->event.values[0], 4242u);
  EXPECT_EQ(f->event.values[1], 4243u);
  auto x = c.convert(record(UPROF_BPF_EXIT, 0, 4300, 4301, 11, {0, 0}));
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->event.kind, EventKind::Exit);
  EXPECT_EQ(x->event.tid, 4301u);
  uint64_t name[2] = {};
  std::memcpy(name, "worker", 6);
  auto n = c.convert(record(UPROF_BPF_COMM, 0, 4300, 4301, 12, {name[0], name[1]}));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->event.kind, EventKind::Comm);
  EXPECT_EQ(n->event.comm, "worker");
  // A 16-byte name without a NUL is cut at 16.
  std::memcpy(name, "abcdefghijklmnop", 16);
  auto full = c.convert(record(UPROF_BPF_COMM, 0, 1, 1, 13, {name[0], name[1]}));
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->event.comm, "abcdefghijklmnop");
  EXPECT_EQ(c.samples(), 0u);
}

// A record whose thread lost records before it (UPROF_BPF_LOST_BEFORE, the count in
// `reserved`'s high half) comes with a Lost event of that thread, at its time.
TEST(BpfRecords, AThreadsRecordAfterItsDropsCarriesALostEvent) {
  CapturePlan plan = add_plan();
  BpfRecordConverter c(plan);
  auto plain = c.convert(record(UPROF_BPF_HIT, 1, 4242, 4243, 5000, {11}));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->lost_before);
  auto marked_hit = record(UPROF_BPF_HIT | UPROF_BPF_LOST_BEFORE, 1, 4242, 4243, 5100, {12});
  const uint32_t three = 3u << 16;
  std::memcpy(marked_hit.data() + offsetof(uprof_bpf_record, reserved), &three, 4);
  auto hit = c.convert(marked_hit);
  ASSERT_TRUE(hit.ok()) << hit.error().message;
  EXPECT_EQ(hit->event.kind, EventKind::Sample);
  EXPECT_EQ(hit->event.values[0], 12u);
  ASSERT_TRUE(hit->lost_before);
  EXPECT_EQ(hit->lost_before->kind, EventKind::Lost);
  EXPECT_EQ(hit->lost_before->pid, 4242u);
  EXPECT_EQ(hit->lost_before->tid, 4243u);
  EXPECT_EQ(hit->lost_before->time, 5100u);
  EXPECT_EQ(hit->lost_before->lost, 3u);
  EXPECT_EQ(hit->lost_before->probe, UINT32_MAX);
  // A task record takes the mark too: an exit after drops.
  auto marked_exit = record(UPROF_BPF_EXIT | UPROF_BPF_LOST_BEFORE, 0, 4242, 4243, 5200, {0, 0});
  const uint32_t one = 1u << 16;
  std::memcpy(marked_exit.data() + offsetof(uprof_bpf_record, reserved), &one, 4);
  auto exit = c.convert(marked_exit);
  ASSERT_TRUE(exit.ok()) << exit.error().message;
  EXPECT_EQ(exit->event.kind, EventKind::Exit);
  ASSERT_TRUE(exit->lost_before);
  EXPECT_EQ(exit->lost_before->lost, 1u);
  EXPECT_EQ(c.lost_marked(), 4u);
  EXPECT_EQ(c.samples(), 2u);
}

TEST(BpfRecords, BadRecordsAreErrorsNamingWhatIsWrong) {
  CapturePlan plan = add_plan();
  BpfRecordConverter c(plan);
  auto shorter = record(UPROF_BPF_HIT, 0, 1, 1, 1, {1, 2, 3});
  shorter.resize(sizeof(uprof_bpf_record) + 10);
  auto cut = c.convert(shorter);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find("at byte 32"), std::string::npos) << cut.error().message;
  auto tiny = c.convert(std::vector<std::byte>(12));
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.error().message.find("12 bytes"), std::string::npos) << tiny.error().message;
  auto beyond = c.convert(record(UPROF_BPF_HIT, 7, 1, 1, 1, {}));
  ASSERT_FALSE(beyond.ok());
  EXPECT_NE(beyond.error().message.find("probe 7"), std::string::npos);
  auto wrong_count = c.convert(record(UPROF_BPF_HIT, 1, 1, 1, 1, {1, 2}));
  ASSERT_FALSE(wrong_count.ok());
  auto kind = c.convert(record(9, 0, 1, 1, 1, {}));
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(kind.error().message.find("unknown kind 9"), std::string::npos);
  EXPECT_EQ(c.samples(), 0u);
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

// A HIT_TEXT record: every slot, then the text; string slots say offset << 32 | bytes
// copied with the NUL. "key7" whole, a string of exactly string_max bytes (not cut),
// one longer (cut at string_max), and a pointer that could not be read.
TEST(BpfRecords, TextHitsCarryTheirStringsWholeOrCut) {
  CapturePlan plan{.arch = Arch::X86_64, .probes = {}};
  ValueSpec s{.name = "s", .source = ValueSource::Register, .reg = 5};
  s.deref = true;
  s.kind = ValueKind::String;
  s.string_max = 4;
  ValueSpec n{.name = "n", .source = ValueSource::Register, .reg = 4};
  plan.probes.push_back({.probe = 0, .path = "/bin/x", .file_offset = 0x1139, .is_return = false, .reads = {},
                         .values = {s, n, s, s}});
  BpfRecordConverter c(plan);
  const std::string text = std::string("key7\0", 5) + std::string("abcde\0", 6);
  std::vector<uint64_t> slots(UPROF_BPF_TEXT_SLOTS, 0);
  slots[0] = 5;                     // "key7" + NUL at 0: exactly string_max, kept whole
  slots[1] = 42;                    // a number
  slots[2] = uint64_t{5} << 32 | 6; // "abcde" + NUL: one more than string_max, cut
  auto rec = record(UPROF_BPF_HIT_TEXT, 0, 10, 10, 7, slots, /*missing=*/1u << 3);
  rec[offsetof(uprof_bpf_record, nvalues)] = std::byte{4};
  uint32_t len = static_cast<uint32_t>(text.size());
  std::memcpy(rec.data() + offsetof(uprof_bpf_record, reserved), &len, 4);
  rec.insert(rec.end(), reinterpret_cast<const std::byte*>(text.data()),
             reinterpret_cast<const std::byte*>(text.data()) + text.size());
  auto e = c.convert(rec);
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->event.nvalues, 4);
  EXPECT_EQ(string_value(e->event, 0).bytes, "key7");
  EXPECT_FALSE(string_value(e->event, 0).cut);
  EXPECT_EQ(e->event.values[1], 42u);
  EXPECT_EQ(string_value(e->event, 2).bytes, "abcd");
  EXPECT_TRUE(string_value(e->event, 2).cut);
  EXPECT_EQ(e->event.missing, 1u << 3);
  EXPECT_FALSE(e->lost_before);

  // The text bytes are `reserved`'s low half: a drop count beside them changes nothing.
  auto marked = rec;
  marked[offsetof(uprof_bpf_record, kind)] = std::byte{UPROF_BPF_HIT_TEXT | UPROF_BPF_LOST_BEFORE};
  const uint32_t both = 2u << 16 | len;
  std::memcpy(marked.data() + offsetof(uprof_bpf_record, reserved), &both, 4);
  auto m = c.convert(marked);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(string_value(m->event, 0).bytes, "key7");
  ASSERT_TRUE(m->lost_before);
  EXPECT_EQ(m->lost_before->lost, 2u);

  // A string slot pointing past the text is a broken record, named.
  slots[0] = uint64_t{9} << 32 | 5;
  auto bad = record(UPROF_BPF_HIT_TEXT, 0, 10, 10, 7, slots);
  bad[offsetof(uprof_bpf_record, nvalues)] = std::byte{4};
  bad.insert(bad.end(), reinterpret_cast<const std::byte*>(text.data()),
             reinterpret_cast<const std::byte*>(text.data()) + text.size());
  auto b = c.convert(bad);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "BPF record: probe 0 string 0 at 9+5, past its 11 text bytes");
}

// record --off-cpu: a probe's hits carry their thread's totals (ns per OffCpuKind) right
// after the record's values, in a size class with room to spare.
TEST(BpfRecords, OffCpuTotalsFollowTheValues) {
  CapturePlan plan = add_plan();
  plan.probes[0].offcpu = OffCpuRole::Enter;
  plan.probes[1].offcpu = OffCpuRole::Leave;
  BpfRecordConverter c(plan);
  // The entry: 3 values, then runnable 5, lock 0, io 7, sleep 1000, syscall 0, other 2; 8 bytes of class padding.
  auto entry = record(UPROF_BPF_HIT, 0, 9, 9, 100, {1, 2, 0, 5, 0, 7, 1000, 0, 2, 0xdead});
  entry[offsetof(uprof_bpf_record, nvalues)] = std::byte{3};
  auto ev = c.convert(entry);
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_EQ(ev->event.nvalues, 3);
  EXPECT_EQ(ev->event.values[1], 2u);
  EXPECT_EQ(ev->event.offcpu, (OffCpuTimes{5, 0, 7, 1000, 0, 2}));
  // A probe without them: the next record of the converter (reused) carries none.
  plan.probes[1].offcpu = OffCpuRole::None;
  BpfRecordConverter plain(plan);
  auto first = plain.convert(entry);
  ASSERT_TRUE(first.ok());
  auto ret_rec = record(UPROF_BPF_HIT, 1, 9, 9, 200, {11, 99, 99, 99, 99, 99, 99});
  ret_rec[offsetof(uprof_bpf_record, nvalues)] = std::byte{1};
  auto ret = plain.convert(ret_rec);
  ASSERT_TRUE(ret.ok());
  EXPECT_EQ(ret->event.offcpu, OffCpuTimes{});
}

TEST(BpfRecords, OffCpuTotalsMissingAreABrokenRecordNamed) {
  CapturePlan plan = add_plan();
  plan.probes[1].offcpu = OffCpuRole::Leave;
  BpfRecordConverter c(plan);
  auto r = c.convert(record(UPROF_BPF_HIT, 1, 9, 9, 200, {11}, 0, 1, /*extra=*/16));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "BPF record: probe 1's off-CPU totals need 48 bytes at byte 40, the record has 16");
}

// In a HIT_TEXT record the totals are in the fixed value area, after the record's values.
TEST(BpfRecords, OffCpuTotalsOfATextHit) {
  CapturePlan plan{.arch = Arch::X86_64, .probes = {}};
  ValueSpec s{.name = "s", .source = ValueSource::Register, .reg = 5};
  s.deref = true;
  s.kind = ValueKind::String;
  s.string_max = 8;
  plan.probes.push_back({.probe = 0, .path = "/bin/x", .file_offset = 0x1139, .is_return = false, .reads = {},
                         .values = {s}, .offcpu = OffCpuRole::Enter});
  BpfRecordConverter c(plan);
  std::vector<uint64_t> slots(UPROF_BPF_TEXT_SLOTS, 0);
  slots[0] = 3;  // "ab" + NUL at 0
  for (std::size_t k = 0; k < UPROF_BPF_OFFCPU_KINDS; k++) slots[1 + k] = 10 * (k + 1);
  auto rec = record(UPROF_BPF_HIT_TEXT, 0, 10, 10, 7, slots);
  rec[offsetof(uprof_bpf_record, nvalues)] = std::byte{1};
  const std::string text("ab\0", 3);
  uint32_t len = 3;
  std::memcpy(rec.data() + offsetof(uprof_bpf_record, reserved), &len, 4);
  rec.insert(rec.end(), reinterpret_cast<const std::byte*>(text.data()),
             reinterpret_cast<const std::byte*>(text.data()) + text.size());
  auto e = c.convert(rec);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(string_value(e->event, 0).bytes, "ab");
  EXPECT_EQ(e->event.offcpu, (OffCpuTimes{10, 20, 30, 40, 50, 60}));
}

}  // namespace
}  // namespace uprof
