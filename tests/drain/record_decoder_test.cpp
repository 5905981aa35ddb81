#include "uprof/drain/record_decoder.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstring>

#include <array>

#include "drain/record_builder.h"

namespace uprof {
namespace {

using test::RecordBuilder;

constexpr uint64_t kBase = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
// x86-64 perf register numbers: AX 0, SI 4, DI 5.
constexpr uint64_t kX86DiSiAx = (1ull << 5) | (1ull << 4) | (1ull << 0);
constexpr uint64_t kArm64All = (1ull << 33) - 1;

SampleFormat x86(uint64_t extra_type, uint64_t mask) {
  return SampleFormat{.sample_type = kBase | extra_type, .regs_mask = mask,
                      .reg_count = perf_reg_count(arch_info(Arch::X86_64)), .sample_id_all = true};
}

SampleFormat arm64(uint64_t extra_type, uint64_t mask) {
  return SampleFormat{.sample_type = kBase | extra_type, .regs_mask = mask,
                      .reg_count = perf_reg_count(arch_info(Arch::Arm64)), .sample_id_all = true};
}

std::vector<std::byte> bytes_of(std::initializer_list<uint8_t> v) {
  std::vector<std::byte> out;
  for (uint8_t b : v) out.push_back(std::byte{b});
  return out;
}

TEST(RecordDecoder, ArchRegisterCounts) {
  EXPECT_EQ(perf_reg_count(arch_info(Arch::X86_64)), 24u);
  EXPECT_EQ(perf_reg_count(arch_info(Arch::Arm64)), 33u);
}

TEST(RecordDecoder, MinimalSample) {
  auto rec = test::sample_record(77, 1000, 1001, 123456789);
  auto s = decode_sample(rec, x86(0, 0));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->id, 77u);
  EXPECT_EQ(s->pid, 1000u);
  EXPECT_EQ(s->tid, 1001u);
  EXPECT_EQ(s->time, 123456789u);
  EXPECT_EQ(s->regs_abi, 0u);
  EXPECT_EQ(s->nregs, 0);
  EXPECT_TRUE(s->stack.empty());
  EXPECT_EQ(s->misc, PERF_RECORD_MISC_USER);
}

TEST(RecordDecoder, X86RegistersInMaskBitOrder) {
  // add(7, 70) at entry: AX is garbage (0xdead), SI = 70, DI = 7; the kernel writes
  // them lowest bit first: AX (0), SI (4), DI (5).
  const std::array<uint64_t, 3> regs{0xdead, 70, 7};
  auto rec = test::sample_record(5, 42, 42, 1, regs);
  auto s = decode_sample(rec, x86(PERF_SAMPLE_REGS_USER, kX86DiSiAx));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->regs_abi, uint64_t{PERF_SAMPLE_REGS_ABI_64});
  EXPECT_EQ(s->regs_mask, kX86DiSiAx);
  EXPECT_EQ(s->nregs, 3);
  EXPECT_EQ(s->regs[0], 0xdeadu);
  EXPECT_EQ(s->reg(5), 7u);    // DI
  EXPECT_EQ(s->reg(4), 70u);   // SI
  EXPECT_EQ(s->reg(0), 0xdeadu);
  EXPECT_EQ(s->reg(1), std::nullopt);  // BX was not asked for
  EXPECT_EQ(s->reg(64), std::nullopt);
}

TEST(RecordDecoder, Arm64AllRegisters) {
  std::array<uint64_t, 33> regs{};
  for (unsigned i = 0; i < 33; ++i) regs[i] = 0x1000 + i;
  regs[30] = 0xfffffffff000;  // LR at a return probe: the uretprobe trampoline
  auto rec = test::sample_record(9, 1, 2, 3, regs);
  auto s = decode_sample(rec, arm64(PERF_SAMPLE_REGS_USER, kArm64All));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->nregs, 33);
  EXPECT_EQ(s->reg(0), 0x1000u);   // x0
  EXPECT_EQ(s->reg(31), 0x101fu);  // sp
  EXPECT_EQ(s->reg(32), 0x1020u);  // pc
  EXPECT_EQ(s->reg(30), 0xfffffffff000u);
}

TEST(RecordDecoder, NoRegistersWhenAbiIsNone) {
  // The kernel writes abi 0 and nothing else when it has no user registers.
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE).u64(1).u32(2).u32(3).u64(4).u64(0).build();
  auto s = decode_sample(rec, x86(PERF_SAMPLE_REGS_USER, kX86DiSiAx));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->regs_abi, 0u);
  EXPECT_EQ(s->regs_mask, 0u);
  EXPECT_EQ(s->reg(5), std::nullopt);
}

TEST(RecordDecoder, UserStack) {
  // Asked for 16 bytes; the kernel copied 16 and says 16 are valid. x86-64 at a
  // function's entry: [sp] is the return address, [sp+8] the 7th integer argument.
  auto stack = bytes_of({0x10, 0x11, 0x40, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0});
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE)
                 .u64(3).u32(10).u32(11).u64(99)
                 .u64(PERF_SAMPLE_REGS_ABI_64).u64(0x7ffd0000)  // SP only
                 .u64(16).raw(stack).u64(16)
                 .build();
  auto s = decode_sample(rec, x86(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 1ull << 7));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->reg(7), 0x7ffd0000u);
  ASSERT_EQ(s->stack.size(), 16u);
  EXPECT_EQ(s->stack_dyn_size, 16u);
  EXPECT_EQ(s->valid_stack()[8], std::byte{7});
  EXPECT_EQ(s->stack[2], std::byte{0x40});
}

TEST(RecordDecoder, UserStackPartlyValid) {
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE)
                 .u64(3).u32(10).u32(11).u64(99)
                 .u64(16).raw(std::vector<std::byte>(16, std::byte{0xaa})).u64(8)
                 .build();
  auto s = decode_sample(rec, x86(PERF_SAMPLE_STACK_USER, 0));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->stack.size(), 16u);
  EXPECT_EQ(s->valid_stack().size(), 8u);
}

TEST(RecordDecoder, UserStackSizeZeroHasNoDynSize) {
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE).u64(3).u32(10).u32(11).u64(99).u64(0).build();
  auto s = decode_sample(rec, x86(PERF_SAMPLE_STACK_USER, 0));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->stack.empty());
}

TEST(RecordDecoder, OptionalFieldsInKernelOrder) {
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE)
                 .u64(1)                 // IDENTIFIER
                 .u64(0x401136)          // IP
                 .u32(5).u32(6)          // TID
                 .u64(7)                 // TIME
                 .u64(0xabc)             // ADDR
                 .u64(1)                 // ID
                 .u64(8)                 // STREAM_ID
                 .u32(1).u32(0)          // CPU, res
                 .u64(1)                 // PERIOD
                 .build();
  SampleFormat f{.sample_type = kBase | PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
                                PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD};
  auto s = decode_sample(rec, f);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->ip, 0x401136u);
  EXPECT_EQ(s->addr, 0xabcu);
  EXPECT_EQ(s->stream_id, 8u);
  EXPECT_EQ(s->cpu, 1u);
  EXPECT_EQ(s->period, 1u);
}

TEST(RecordDecoder, TruncatedRegistersNameOffsetAndField) {
  const std::array<uint64_t, 3> regs{1, 2, 3};
  auto full = test::sample_record(5, 42, 42, 1, regs);
  // Cut the last register in half and fix up the header so only the body is short.
  std::vector<std::byte> cut(full.begin(), full.end() - 4);
  uint16_t size = static_cast<uint16_t>(cut.size());
  std::memcpy(cut.data() + 6, &size, 2);
  auto s = decode_sample(cut, x86(PERF_SAMPLE_REGS_USER, kX86DiSiAx));
  ASSERT_FALSE(s.ok());
  const std::string& m = s.error().message;
  EXPECT_NE(m.find("PERF_RECORD_SAMPLE"), std::string::npos) << m;
  EXPECT_NE(m.find("byte 40"), std::string::npos) << m;  // registers start after abi at 32
  EXPECT_NE(m.find("3 registers"), std::string::npos) << m;
}

TEST(RecordDecoder, EveryTruncationIsAnErrorNotACrash) {
  auto stack = std::vector<std::byte>(16, std::byte{1});
  auto full = RecordBuilder(PERF_RECORD_SAMPLE)
                  .u64(3).u32(10).u32(11).u64(99)
                  .u64(PERF_SAMPLE_REGS_ABI_64).u64(1).u64(2).u64(3)
                  .u64(16).raw(stack).u64(16)
                  .build();
  SampleFormat f = x86(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, kX86DiSiAx);
  ASSERT_TRUE(decode_sample(full, f).ok());
  for (std::size_t n = 0; n < full.size(); ++n) {
    std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<long>(n));
    if (n >= 8) {
      uint16_t size = static_cast<uint16_t>(n);
      std::memcpy(cut.data() + 6, &size, 2);
    }
    auto s = decode_sample(cut, f);
    EXPECT_FALSE(s.ok()) << "a " << n << "-byte prefix decoded";
    if (!s.ok()) {
      EXPECT_EQ(s.error().message.rfind("decode: ", 0), 0u) << s.error().message;
    }
  }
}

TEST(RecordDecoder, HeaderSizeMustMatch) {
  auto rec = test::sample_record(1, 2, 3, 4);
  rec.push_back(std::byte{0});
  auto s = decode_sample(rec, x86(0, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("header says"), std::string::npos) << s.error().message;
}

TEST(RecordDecoder, LeftoverBytesMeanAWrongFormat) {
  // A sample with registers decoded as if it had none: caught, not silently accepted.
  const std::array<uint64_t, 1> regs{9};
  auto rec = test::sample_record(1, 2, 3, 4, regs);
  auto s = decode_sample(rec, x86(0, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("left over"), std::string::npos) << s.error().message;
}

TEST(RecordDecoder, BadAbiAndDynSize) {
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE).u64(1).u32(2).u32(3).u64(4).u64(7).u64(1).build();
  auto s = decode_sample(rec, x86(PERF_SAMPLE_REGS_USER, 1));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("byte 32: regs abi 7"), std::string::npos) << s.error().message;

  rec = RecordBuilder(PERF_RECORD_SAMPLE)
            .u64(1).u32(2).u32(3).u64(4)
            .u64(8).u64(0).u64(9)  // dyn_size 9 > size 8
            .build();
  s = decode_sample(rec, x86(PERF_SAMPLE_STACK_USER, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("dyn_size 9"), std::string::npos) << s.error().message;

  rec = RecordBuilder(PERF_RECORD_SAMPLE).u64(1).u32(2).u32(3).u64(4).u64(4096).u64(0).build();
  s = decode_sample(rec, x86(PERF_SAMPLE_STACK_USER, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("stack size 4096"), std::string::npos) << s.error().message;
}

TEST(RecordDecoder, UnsupportedFormatsAreNamed) {
  auto rec = test::sample_record(1, 2, 3, 4);
  auto s = decode_sample(rec, x86(PERF_SAMPLE_CALLCHAIN, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("PERF_SAMPLE_CALLCHAIN"), std::string::npos) << s.error().message;
  // A register the architecture does not have.
  s = decode_sample(rec, x86(PERF_SAMPLE_REGS_USER, 1ull << 30));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("24 registers"), std::string::npos) << s.error().message;
}

TEST(RecordDecoder, LostWithTrailer) {
  // { id, lost } then the sample_id trailer for IDENTIFIER | TID | TIME: pid, tid, time, id.
  auto rec = RecordBuilder(PERF_RECORD_LOST).u64(12).u64(345).u32(7).u32(8).u64(999).u64(12).build();
  auto l = decode_lost(rec, x86(0, 0));
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->id, 12u);
  EXPECT_EQ(l->lost, 345u);
  ASSERT_TRUE(l->sample_id.has_value());
  EXPECT_EQ(l->sample_id->pid, 7u);
  EXPECT_EQ(l->sample_id->time, 999u);
  EXPECT_EQ(l->sample_id->id, 12u);

  auto no_trailer = RecordBuilder(PERF_RECORD_LOST).u64(12).u64(3).build();
  SampleFormat f = x86(0, 0);
  f.sample_id_all = false;
  l = decode_lost(no_trailer, f);
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_FALSE(l->sample_id.has_value());
  // With sample_id_all the trailer is required.
  EXPECT_FALSE(decode_lost(no_trailer, x86(0, 0)).ok());
  auto cut = RecordBuilder(PERF_RECORD_LOST).u64(12).build();
  auto e = decode_lost(cut, f);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("PERF_RECORD_LOST of 16 bytes: byte 16: lost"), std::string::npos)
      << e.error().message;
}

TEST(RecordDecoder, ThrottleAndUnthrottle) {
  auto rec = RecordBuilder(PERF_RECORD_THROTTLE).u64(500).u64(4).u64(4)
                 .u32(1).u32(1).u64(500).u64(4).build();
  auto d = decode_record(rec, x86(0, 0));
  ASSERT_TRUE(d.ok()) << d.error().message;
  auto* t = std::get_if<ThrottleRecord>(&*d);
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->throttle);
  EXPECT_EQ(t->time, 500u);
  EXPECT_EQ(t->id, 4u);

  auto un = RecordBuilder(PERF_RECORD_UNTHROTTLE).u64(600).u64(4).u64(4)
                .u32(1).u32(1).u64(600).u64(4).build();
  d = decode_record(un, x86(0, 0));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_FALSE(std::get<ThrottleRecord>(*d).throttle);
}

TEST(RecordDecoder, OtherRecordsAreReportedNotParsed) {
  auto rec = RecordBuilder(PERF_RECORD_MMAP2).u64(1).u64(2).u64(3).build();
  auto d = decode_record(rec, x86(0, 0));
  ASSERT_TRUE(d.ok()) << d.error().message;
  auto* o = std::get_if<OtherRecord>(&*d);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->type, uint32_t{PERF_RECORD_MMAP2});
  EXPECT_EQ(o->size, 32u);
  EXPECT_EQ(record_type_name(PERF_RECORD_MMAP2), "PERF_RECORD_MMAP2");
  EXPECT_EQ(record_type_name(4242), "PERF_RECORD_4242");
}

TEST(RecordDecoder, DispatchesSamples) {
  const std::array<uint64_t, 3> regs{77, 70, 7};
  auto rec = test::sample_record(5, 42, 42, 1, regs);
  auto d = decode_record(rec, x86(PERF_SAMPLE_REGS_USER, kX86DiSiAx));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(std::get<Sample>(*d).reg(0), 77u);
}

TEST(RecordDecoder, IdentifierBeforeTheLayoutIsKnown) {
  EXPECT_EQ(**record_identifier(test::sample_record(31, 1, 1, 1)), 31u);
  auto lost = RecordBuilder(PERF_RECORD_LOST).u64(32).u64(1).u32(0).u32(0).u64(0).u64(32).build();
  EXPECT_EQ(**record_identifier(lost), 32u);
  auto thr = RecordBuilder(PERF_RECORD_THROTTLE).u64(1).u64(33).u64(33).build();
  EXPECT_EQ(**record_identifier(thr), 33u);
  // Other records: the trailer's IDENTIFIER is the last u64.
  auto comm = RecordBuilder(PERF_RECORD_COMM).u32(1).u32(1).u64(0x74736574796d).u64(34).build();
  EXPECT_EQ(**record_identifier(comm), 34u);
  auto tiny = RecordBuilder(PERF_RECORD_EXIT).build();
  EXPECT_FALSE(record_identifier(tiny)->has_value());
  auto cut = RecordBuilder(PERF_RECORD_SAMPLE).u32(1).build();
  EXPECT_FALSE(record_identifier(cut).ok());
  EXPECT_FALSE(record_identifier(std::span<const std::byte>{}).ok());
}

// MMAP2 from the side band (record -g on the perf engine): a file's mapping, its name
// NUL-padded to 8 bytes, then the sample_id trailer (pid/tid, time, identifier).
TEST(RecordDecoder, Mmap2NamesTheFileItsRangeAndOffset) {
  RecordBuilder b(PERF_RECORD_MMAP2);
  b.u32(4242).u32(4243).u64(0x7f0000001000).u64(0x2000).u64(0x1000);  // pid tid addr len pgoff
  b.u32(0xfe).u32(1).u64(1835023).u64(7);                               // maj min ino ino_generation
  b.u32(PROT_READ | PROT_EXEC).u32(MAP_PRIVATE);
  const char name[16] = "/usr/lib/libz.s";  // 15 characters and the NUL
  for (int i = 0; i < 16; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, name + i, 8);
    b.u64(w);
  }
  b.u32(4242).u32(4243).u64(99).u64(41);  // trailer: pid tid, time, identifier
  const auto rec = b.build();
  auto m = decode_mmap2(rec, x86(0, 0));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->pid, 4242u);
  EXPECT_EQ(m->addr, 0x7f0000001000u);
  EXPECT_EQ(m->len, 0x2000u);
  EXPECT_EQ(m->pgoff, 0x1000u);
  EXPECT_EQ(m->maj, 0xfeu);
  EXPECT_EQ(m->ino, 1835023u);
  EXPECT_EQ(m->prot, static_cast<uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(m->filename, "/usr/lib/libz.s");
  ASSERT_TRUE(m->sample_id.has_value());
  EXPECT_EQ(m->sample_id->time, 99u);
  // Cut inside the fixed fields: an error naming the field and its byte.
  auto cut = RecordBuilder(PERF_RECORD_MMAP2).u32(1).u32(1).u64(0).build();
  auto bad = decode_mmap2(cut, x86(0, 0));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("PERF_RECORD_MMAP2"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("len"), std::string::npos) << bad.error().message;
  // Another record's bytes are refused by name.
  EXPECT_FALSE(decode_mmap2(RecordBuilder(PERF_RECORD_COMM).u32(1).u32(1).u64(0).u64(34).build(), x86(0, 0)).ok());
}

TEST(RecordDecoder, FormatFromAttr) {
  perf_event_attr a{};
  a.sample_type = kBase | PERF_SAMPLE_REGS_USER;
  a.sample_regs_user = kX86DiSiAx;
  a.sample_id_all = 1;
  SampleFormat f = sample_format(a, arch_info(Arch::X86_64));
  EXPECT_EQ(f.sample_type, a.sample_type);
  EXPECT_EQ(f.regs_mask, kX86DiSiAx);
  EXPECT_EQ(f.reg_count, 24u);
  EXPECT_TRUE(f.sample_id_all);
}

}  // namespace
}  // namespace uprof
