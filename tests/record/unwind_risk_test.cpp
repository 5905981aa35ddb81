// Which functions call out of themselves (so a C++ exception can unwind through them),
// on hand-assembled x86-64 code.
#include "uprof/record/unwind_risk.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

bool out(std::vector<uint8_t> code) {
  auto d = InsnDecoder::open(Arch::X86_64);
  EXPECT_TRUE(d.ok());
  return calls_out(*d, code, 0x1000);
}

TEST(UnwindRisk, LeavesAndLocalBranchesStayInsideCallsAndTailJumpsLeave) {
  EXPECT_FALSE(out({0x8d, 0x04, 0x37, 0xc3}));                     // lea (%rdi,%rsi),%eax; ret
  EXPECT_FALSE(out({0x48, 0x85, 0xff, 0x74, 0x01, 0xc3, 0xc3}));   // test; je +1 (inside); ret; ret
  EXPECT_TRUE(out({0xe8, 0x00, 0x00, 0x00, 0x00, 0xc3}));          // call; ret
  EXPECT_TRUE(out({0xe9, 0x00, 0x10, 0x00, 0x00}));                // jmp far away: a tail call
  EXPECT_TRUE(out({0xff, 0xe0}));                                  // jmp *%rax
  EXPECT_TRUE(out({0x0f}));                                        // cut short: assume the worst
}

// `endbr64; jmp other`: placement moved the entry onto the jump, which is also the exit.
TEST(UnwindRisk, AnExitAtTheEntrySiteLeavesTheFunctionWithoutExitProbes) {
  ResolvedProbe thunk;
  thunk.path = "/bin/x";
  thunk.function = "thunk";
  thunk.function_addr = 0x1000;
  thunk.vaddr = 0x1004;
  ResolvedProbe f = thunk;
  f.function = "f";
  f.function_addr = 0x1008;
  f.vaddr = 0x1008;
  ReturnRisks risks;
  risks.by_function[{"/bin/x", 0x1000}].exits = {
      ExitSite{.vaddr = 0x1004, .offset = 4, .part = 0, .tail_call = true, .text = "jmp 0x2000"}};
  risks.by_function[{"/bin/x", 0x1008}].exits = {
      ExitSite{.vaddr = 0x1010, .offset = 0x10, .part = 0, .tail_call = false, .text = "retq"}};
  std::vector<ResolvedProbe> probes{thunk, f};
  drop_exits_at_entry(probes, risks);
  EXPECT_TRUE(risks.of(probes[0])->exits.empty());
  EXPECT_EQ(risks.of(probes[0])->exits_blocker, "its entry site is also an exit (jmp 0x2000)");
  EXPECT_EQ(risks.of(probes[1])->exits.size(), 1u);
  EXPECT_EQ(risks.of(probes[1])->exits_blocker, "");
}

}  // namespace
}  // namespace uprof
