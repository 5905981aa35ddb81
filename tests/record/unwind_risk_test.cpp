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

bool leaves(std::vector<uint8_t> code) {
  auto d = InsnDecoder::open(Arch::X86_64);
  EXPECT_TRUE(d.ok());
  return can_leave(*d, code, 0x1000);
}

// crt's _start: `xor %ebp,%ebp; ...; call *__libc_start_main@GOT(%rip); hlt` never leaves.
TEST(UnwindRisk, CodeWithoutAReturnOrAJumpOutNeverLeaves) {
  EXPECT_FALSE(leaves({0x31, 0xed, 0xff, 0x15, 0x00, 0x10, 0x00, 0x00, 0xf4}));  // xor; call *(%rip); hlt
  EXPECT_FALSE(leaves({0xe8, 0x00, 0x10, 0x00, 0x00, 0xeb, 0xf9}));              // call abort; jmp back (inside)
  EXPECT_TRUE(leaves({0x31, 0xc0, 0xc3}));                                        // xor; ret
  EXPECT_TRUE(leaves({0x45, 0x31, 0xc0, 0xe9, 0x00, 0x10, 0x00, 0x00}));          // xor; jmp qsort_r: a tail call
  EXPECT_TRUE(leaves({0x74, 0x40, 0xf4}));                                        // je far away; hlt
  EXPECT_TRUE(leaves({0xff, 0xe0}));                                              // jmp *%rax
  EXPECT_TRUE(leaves({0x0f}));                                                    // cut short: assume it may
}

TEST(UnwindRisk, TheFunctionsThatReturnTwiceAreKnownByName) {
  for (const char* f : {"setjmp", "_setjmp", "__sigsetjmp", "getcontext", "swapcontext", "setcontext", "longjmp"})
    EXPECT_TRUE(returns_twice(f)) << f;
  for (const char* f : {"qsort", "makecontext", "vfork", "main"}) EXPECT_FALSE(returns_twice(f)) << f;
}

TEST(UnwindRisk, OnlyTheRunTimeHazardsCanBeOverridden) {
  using H = ReturnHazard;
  for (H h : {H::CxxCode, H::CInCxxProcess, H::StackSwitching}) EXPECT_TRUE(ReturnRisk{.hazard = h}.overridable());
  for (H h : {H::EntryPoint, H::ReturnsTwice, H::NeverReturns, H::GoCode})
    EXPECT_FALSE(ReturnRisk{.hazard = h}.overridable());
  EXPECT_NE(ReturnRisk{.hazard = H::GoCode}.why("main.work").find("main.work is Go code"), std::string::npos);
  EXPECT_EQ(ReturnRisk{.hazard = H::EntryPoint}.why("_start"),
            "_start is the program's entry point: the top of its stack is argc, not a return address, and a return "
            "probe would overwrite it");
}

// The reason names what unwinds: a C++ exception, a Rust panic.
TEST(UnwindRisk, TheReasonNamesTheLanguageThatUnwinds) {
  using H = ReturnHazard;
  const std::string trampoline =
      " would abort the program under a return probe (the kernel's return trampoline has no unwind information)";
  EXPECT_EQ((ReturnRisk{.hazard = H::CxxCode, .language = "C++"}.why("f(int)")),
            "a C++ exception unwinding through f(int)" + trampoline);
  EXPECT_EQ((ReturnRisk{.hazard = H::CxxCode, .language = "Rust"}.why("m::mid")),
            "a Rust panic unwinding through m::mid" + trampoline);
  EXPECT_EQ((ReturnRisk{.hazard = H::CInCxxProcess, .language = "Rust"}.why("qsort")),
            "a Rust panic a callback raises, unwinding through qsort in a process with the Rust runtime," + trampoline);
  EXPECT_EQ(ReturnRisk{.hazard = H::CxxCode}.why("g()"), "a C++ exception unwinding through g()" + trampoline);
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
