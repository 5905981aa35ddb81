// Probe placement on hand-assembled function starts: where the site moves, and each
// rule that keeps it at the symbol. And the instruction-boundary check.
#include "uprof/resolve/insn/probe_placement.h"

#include <gtest/gtest.h>

#include <vector>

namespace uprof {
namespace {

uint64_t reg(Arch a, std::string_view name) { return 1ull << find_reg_by_name(arch_info(a), name)->perf_index; }

struct Fn {
  std::vector<uint8_t> code;
  uint64_t regs_read = 0;
  bool ret = true;
  std::vector<uint64_t> targets{};  // direct branch targets elsewhere in the file
  bool reads_memory = false;
};

Placement place(Arch arch, const Fn& f) {
  auto d = InsnDecoder::open(arch);
  EXPECT_TRUE(d.ok());
  PlacementInput in;
  in.function_vaddr = 0x1000;
  in.function_file_offset = 0x1000;
  in.code = f.code;
  in.regs_read = f.regs_read;
  in.has_return_probe = f.ret;
  in.reads_memory = f.reads_memory;
  in.branch_targets_in = [&](uint64_t lo, uint64_t hi) {
    for (uint64_t t : f.targets)
      if (t > lo && t <= hi) return true;
    return false;
  };
  return place_entry(*d, in);
}

const std::vector<uint8_t> kEndbr{0xf3, 0x0f, 0x1e, 0xfa};
std::vector<uint8_t> cat(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(ProbePlacement, PastEndbr64ToAPush) {
  auto p = place(Arch::X86_64, {cat(kEndbr, {0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3})});
  EXPECT_EQ(p.offset, 4u);
  EXPECT_EQ(p.at_symbol.cls, InsnClass::SingleStepped);
  EXPECT_EQ(p.at_site.cls, InsnClass::Emulated);
  EXPECT_EQ(describe_move(p), "endbr64 (single-stepped) -> +0x4");
}

TEST(ProbePlacement, PastATestToItsJcc) {
  // endbr64; test %rdi,%rdi; je +3; movsbl (%rdi),%eax; ret: the probe reads %di
  auto p = place(Arch::X86_64, {cat(kEndbr, {0x48, 0x85, 0xff, 0x74, 0x04, 0x0f, 0xbe, 0x07, 0xc3}), reg(Arch::X86_64, "di")});
  EXPECT_EQ(p.offset, 7u);
  EXPECT_EQ(p.skipped, "endbr64; testq %rdi, %rdi");
}

TEST(ProbePlacement, AnEmulatedFirstInstructionStays) {
  auto p = place(Arch::X86_64, {{0x55, 0xc3}});
  EXPECT_FALSE(p.moved());
  EXPECT_TRUE(p.kept_because.empty());
}

TEST(ProbePlacement, EachRuleKeepsTheSymbol) {
  // sub $8,%rsp writes the stack pointer
  auto sp = place(Arch::X86_64, {cat(kEndbr, {0x48, 0x83, 0xec, 0x08, 0x55, 0xc3})});
  EXPECT_FALSE(sp.moved());
  EXPECT_NE(sp.kept_because.find("writes the stack pointer"), std::string::npos) << sp.kept_because;
  // mov %edi,-4(%rsp) writes memory
  auto mem = place(Arch::X86_64, {cat(kEndbr, {0x89, 0x7c, 0x24, 0xfc, 0x55, 0xc3})});
  EXPECT_NE(mem.kept_because.find("writes memory"), std::string::npos) << mem.kept_because;
  // mov %rsi,%rdi writes a register the probe reads
  auto r = place(Arch::X86_64, {cat(kEndbr, {0x48, 0x89, 0xf7, 0x55, 0xc3}), reg(Arch::X86_64, "di")});
  EXPECT_NE(r.kept_because.find("writes %di, which the probe reads"), std::string::npos) << r.kept_because;
  // ...and moves when the probe does not read it
  EXPECT_EQ(place(Arch::X86_64, {cat(kEndbr, {0x48, 0x89, 0xf7, 0x55, 0xc3}), reg(Arch::X86_64, "si")}).offset, 7u);
  // a branch elsewhere in the file lands on the push
  auto loop = place(Arch::X86_64, {cat(kEndbr, {0x55, 0x5d, 0xc3}), 0, true, {0x1004}});
  EXPECT_NE(loop.kept_because.find("a branch of the file targets"), std::string::npos) << loop.kept_because;
  // a branch inside the function back to +4 (dec %rdi; jnz) is in the file's targets too,
  // which the caller scans; a target at the symbol itself is harmless
  EXPECT_EQ(place(Arch::X86_64, {cat(kEndbr, {0x55, 0x5d, 0xc3}), 0, true, {0x1000}}).offset, 4u);
  // a jump through a register with no readable table
  auto ind = place(Arch::X86_64, {cat(kEndbr, {0x55, 0xff, 0xe0})});
  EXPECT_NE(ind.kept_because.find("jumps through a register"), std::string::npos) << ind.kept_because;
  // five single-stepped instructions, then the push: too far (four would do)
  EXPECT_EQ(place(Arch::X86_64, {cat(kEndbr, {0x48, 0x89, 0xc8, 0x48, 0x89, 0xc8, 0x48, 0x89, 0xc8, 0x55, 0xc3})}).offset, 13u);
  auto far = place(Arch::X86_64,
                   {cat(kEndbr, {0x48, 0x89, 0xc8, 0x48, 0x89, 0xc8, 0x48, 0x89, 0xc8, 0x48, 0x89, 0xc8, 0x55, 0xc3})});
  EXPECT_NE(far.kept_because.find("within 4 instructions"), std::string::npos) << far.kept_because;
}

TEST(ProbePlacement, Arm64BtiToASimulatedBranchButNotPastPaciasp) {
  // bti c; cbz x0, +8; mov x0, x1; ret
  std::vector<uint8_t> bti_cbz{0x5f, 0x24, 0x03, 0xd5, 0x40, 0x00, 0x00, 0xb4, 0xe0, 0x03, 0x01, 0xaa, 0xc0, 0x03, 0x5f, 0xd6};
  auto p = place(Arch::Arm64, {bti_cbz, reg(Arch::Arm64, "x0")});
  EXPECT_EQ(p.offset, 4u);
  EXPECT_EQ(p.at_site.insn, "cbz");
  // paciasp; cbz x0: paciasp signs x30, which a return probe replaces
  std::vector<uint8_t> pac_cbz{0x3f, 0x23, 0x03, 0xd5, 0x40, 0x00, 0x00, 0xb4, 0xc0, 0x03, 0x5f, 0xd6};
  auto keep = place(Arch::Arm64, {pac_cbz, 0, true});
  EXPECT_FALSE(keep.moved());
  EXPECT_NE(keep.kept_because.find("x30"), std::string::npos) << keep.kept_because;
  EXPECT_EQ(place(Arch::Arm64, {pac_cbz, 0, false}).offset, 4u);  // entry only: nothing reads x30
}

// A refused first instruction (insn_class.h) is no site at all: the probe goes to the
// first instruction the kernel takes, single-stepped or not, past a memory write too when
// the probe reads no memory.
TEST(ProbePlacement, PastARefusedFirstInstruction) {
  // lock decl (%rdi); jne +0xb; xor %eax,%eax; ret: libc's pthread_spin_lock
  const std::vector<uint8_t> spin{0xf0, 0xff, 0x0f, 0x75, 0x0b, 0x31, 0xc0, 0xc3};
  auto p = place(Arch::X86_64, {spin, reg(Arch::X86_64, "di")});
  EXPECT_EQ(p.offset, 3u);
  EXPECT_EQ(p.at_symbol.cls, InsnClass::Rejected);
  EXPECT_EQ(describe_move(p), "lock decl (%rdi) (refused: lock prefix) -> +0x3");
  // a probe that reads memory (a string at %rdi) would read what the decrement wrote
  auto reads = place(Arch::X86_64, {spin, reg(Arch::X86_64, "di"), true, {}, true});
  EXPECT_FALSE(reads.moved());
  EXPECT_NE(reads.kept_because.find("writes memory"), std::string::npos) << reads.kept_because;
  // lock incl (%rdi); mov (%rdi),%eax; ret: to a single-stepped instruction
  auto stepped = place(Arch::X86_64, {{0xf0, 0xff, 0x07, 0x8b, 0x07, 0xc3}});
  EXPECT_EQ(stepped.offset, 3u);
  EXPECT_EQ(stepped.at_site.cls, InsnClass::SingleStepped);
  // vmovd %esi,%xmm0; mov %rdi,%rax: past a VEX instruction the kernel refuses
  EXPECT_EQ(place(Arch::X86_64, {{0xc5, 0xf9, 0x6e, 0xc6, 0x48, 0x89, 0xf8, 0xc3}}).offset, 4u);
  // ...nor onto the function's return: lock incl (%rdi); ret
  auto ret = place(Arch::X86_64, {{0xf0, 0xff, 0x07, 0xc3}});
  EXPECT_FALSE(ret.moved());
  // ...nor onto a branch target
  auto target = place(Arch::X86_64, {{0xf0, 0xff, 0x07, 0x8b, 0x07, 0xc3}, 0, true, {0x1003}});
  EXPECT_FALSE(target.moved());
}

TEST(ProbePlacement, NeverBetweenALoadExclusiveAndItsStore) {
  auto word = [](uint32_t w) {
    return std::vector<uint8_t>{uint8_t(w), uint8_t(w >> 8), uint8_t(w >> 16), uint8_t(w >> 24)};
  };
  // ldaxr w1, [x0]; cbnz w1, ...; stxr w2, w3, [x0]: the cbnz is simulated, but a
  // breakpoint there clears the exclusive monitor and the stxr fails every time
  auto code = cat(cat(word(0x885ffc01), word(0x35000061)), word(0x88027c03));
  auto p = place(Arch::Arm64, {code});
  EXPECT_FALSE(p.moved());
  EXPECT_NE(p.kept_because.find("must not be separated"), std::string::npos) << p.kept_because;
  // the same behind a bti c, which alone would move
  auto bti = place(Arch::Arm64, {cat(word(0xd503245f), code)});
  EXPECT_FALSE(bti.moved());
}

TEST(InsnBoundary, MidInstructionOffsetsAreRefusedWithTheNearestBoundaries) {
  auto d = InsnDecoder::open(Arch::X86_64);
  ASSERT_TRUE(d.ok());
  std::vector<uint8_t> code = cat(kEndbr, {0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3});
  EXPECT_TRUE(check_boundary(*d, code, 4, "paint").ok());
  EXPECT_TRUE(check_boundary(*d, code, 5, "paint").ok());
  auto s = check_boundary(*d, code, 1, "paint");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "paint+0x1 is inside the instruction at paint+0x0 (endbr64, 4 bytes): the nearest boundaries are "
            "paint+0x0 and paint+0x4; --force probes it as given");
  auto m = check_boundary(*d, code, 6, "paint");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("paint+0x5 and paint+0x8"), std::string::npos) << m.error().message;
}

}  // namespace
}  // namespace uprof
