// A function's exits, decoded from hand-assembled bytes of both arches: returns and
// tail-call jumps are exits, branches inside the function and calls are not, and an
// indirect jump leaves the function without exit probes.
#include "uprof/resolve/insn/exit_sites.h"

#include <gtest/gtest.h>

#include <vector>

namespace uprof {
namespace {

ExitScan scan(Arch arch, std::vector<uint8_t> code) {
  auto d = InsnDecoder::open(arch);
  EXPECT_TRUE(d.ok());
  return find_exit_sites(*d, code, 0x1000);
}

TEST(ExitSites, X86ReturnsAndTailCalls) {
  auto s = scan(Arch::X86_64, {
                                  0x40, 0xf6, 0xc7, 0x03,        // +0x0 test $3,%dil
                                  0x74, 0x05,                    // +0x4 je +0xb (inside)
                                  0xe9, 0xf5, 0xf8, 0xff, 0xff,  // +0x6 jmp 0x900 (a tail call)
                                  0xc3,                          // +0xb ret
                                  0xe8, 0x00, 0x01, 0x00, 0x00,  // +0xc call (not an exit)
                                  0xc2, 0x08, 0x00,              // +0x11 ret $8
                              });
  EXPECT_EQ(s.blocker, "");
  ASSERT_EQ(s.sites.size(), 3u);
  EXPECT_EQ(s.sites[0].offset, 0x6u);
  EXPECT_TRUE(s.sites[0].tail_call);
  EXPECT_EQ(s.sites[1].offset, 0xbu);
  EXPECT_FALSE(s.sites[1].tail_call);
  EXPECT_EQ(s.sites[1].text, "retq");
  EXPECT_EQ(s.sites[2].offset, 0x11u);
}

TEST(ExitSites, X86IndirectJumpOrUndecodableCodeGivesNone) {
  auto indirect = scan(Arch::X86_64, {0x48, 0x85, 0xff, 0xff, 0xe0, 0xc3});  // test; jmp *%rax; ret
  EXPECT_TRUE(indirect.sites.empty());
  EXPECT_EQ(indirect.blocker, "an indirect jump at +0x3 (jmpq *%rax) may leave it");
  auto bad = scan(Arch::X86_64, {0xc3, 0xe8, 0x00});  // ret; a call cut short
  EXPECT_TRUE(bad.sites.empty());
  EXPECT_EQ(bad.blocker, "the instruction at +0x1 does not decode");
  auto none = scan(Arch::X86_64, {0xe8, 0x00, 0x01, 0x00, 0x00, 0x0f, 0x0b});  // call abort; ud2
  EXPECT_EQ(none.blocker, "it has no exit instruction");
}

// inner at 0x1000 of a stripped file: `test; je COLD; jmp leaf`, and its split-off part
// at 0x2000 (`push; call; pop; ret`), which the file does not name.
TEST(ExitSites, AJumpToCodeNoFunctionStartsIsAPartScannedWithinItsFde) {
  auto d = InsnDecoder::open(Arch::X86_64);
  ASSERT_TRUE(d.ok());
  const std::vector<uint8_t> body{
      0x40, 0xf6, 0xc7, 0x03,              // +0x0 test $3,%dil
      0x0f, 0x84, 0xf6, 0x0f, 0x00, 0x00,  // +0x4 je 0x2000
      0xe9, 0xf1, 0xfe, 0xff, 0xff,        // +0xa jmp 0xf00 (leaf)
  };
  const std::vector<uint8_t> cold{0x55, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x5d, 0xc3, 0xcc};
  const CodePart parts[] = {{.vaddr = 0x1000, .code = body}};
  std::vector<uint64_t> asked;
  ExitRules rules{
      .cfa_above_sp = [](uint64_t) { return std::optional<int64_t>(8); },
      .part_at = [&](uint64_t target) -> std::optional<CodePart> {
        asked.push_back(target);
        if (target != 0x2000) return std::nullopt;
        return CodePart{.vaddr = 0x2000, .code = cold};
      },
      .is_function = [](uint64_t addr) { return addr == 0xf00; },
      .entry_cfa = 8,
  };
  ExitScan s = find_exit_sites(*d, parts, rules);
  EXPECT_EQ(s.blocker, "");
  ASSERT_EQ(s.sites.size(), 2u);
  EXPECT_EQ(s.sites[0].vaddr, 0x100au);  // the tail call to leaf
  EXPECT_TRUE(s.sites[0].tail_call);
  EXPECT_EQ(s.sites[1].vaddr, 0x2007u);  // the part's ret
  EXPECT_EQ(s.sites[1].part, 1u);
  EXPECT_EQ(s.sites[1].offset, 7u);
  EXPECT_EQ(asked, std::vector<uint64_t>{0x2000});

  // Without the part's bounds the exits cannot all be seen.
  rules.part_at = [](uint64_t) { return std::optional<CodePart>(); };
  EXPECT_EQ(find_exit_sites(*d, parts, rules).blocker, "the jump at +0x4 (je 0x2000) goes to code whose bounds are not known");
  // A conditional tail call cannot be probed; a jump out with the frame set up is no tail call.
  rules.is_function = [](uint64_t) { return true; };
  EXPECT_EQ(find_exit_sites(*d, parts, rules).blocker,
            "a conditional tail call at +0x4 (je 0x2000) cannot be probed when taken only");
  const std::vector<uint8_t> framed{0x55, 0xe9, 0xfa, 0xfe, 0xff, 0xff};  // push %rbp; jmp 0xf00
  const CodePart framed_parts[] = {{.vaddr = 0x1000, .code = framed}};
  rules.cfa_above_sp = [](uint64_t pc) { return std::optional<int64_t>(pc == 0x1000 ? 8 : 16); };
  EXPECT_EQ(find_exit_sites(*d, framed_parts, rules).blocker,
            "the jump at +0x1 (jmp 0xf00) leaves with its frame still set up");
}

TEST(ExitSites, Arm64ReturnsAndTailCalls) {
  auto s = scan(Arch::Arm64, {
                                 0x40, 0x00, 0x00, 0x94,  // +0x0 bl +0x100 (not an exit)
                                 0xc0, 0xff, 0xff, 0x17,  // +0x4 b 0xf04 (a tail call)
                                 0xc0, 0x03, 0x5f, 0xd6,  // +0x8 ret
                             });
  EXPECT_EQ(s.blocker, "");
  ASSERT_EQ(s.sites.size(), 2u);
  EXPECT_EQ(s.sites[0].offset, 0x4u);
  EXPECT_TRUE(s.sites[0].tail_call);
  EXPECT_EQ(s.sites[1].offset, 0x8u);
  EXPECT_EQ(s.sites[1].text, "ret");
  auto br = scan(Arch::Arm64, {0x20, 0x00, 0x1f, 0xd6, 0xc0, 0x03, 0x5f, 0xd6});  // br x1; ret
  EXPECT_EQ(br.blocker, "an indirect jump at +0x0 (br x1) may leave it");
}

}  // namespace
}  // namespace uprof
