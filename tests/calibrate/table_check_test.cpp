// The kernel-behaviour table against uprof bench's figures, on hand-made tables.
#include "uprof/calibrate/table_check.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

ProbeCostTable table(double step, double emulated, double optimized) {
  ProbeCostTable t;
  auto set = [&](InsnClass c, double ns, const char* insn) {
    ClassCost& cc = t.of(EngineKind::Bpf, c);
    cc.measured = ns > 0;
    cc.insn = insn;
    cc.entry_ns = ns;
  };
  set(InsnClass::SingleStepped, step, "lea");
  set(InsnClass::Emulated, emulated, "push %rbp");
  set(InsnClass::Optimized, optimized, "nop5");
  return t;
}

TEST(TableCheck, AgreesWhenEmulatedAndOptimizedAreCheaper) {
  auto c = check_kernel_table(table(20'000, 5'000, 2'000));
  EXPECT_TRUE(c.consistent);
  EXPECT_EQ(c.line, "kernel table: as measured (bpf: emulated 0.25x single-stepped, optimized 0.40x emulated per entry hit)");
}

TEST(TableCheck, SaysWhenAKernelSingleStepsWhatTheTableEmulates) {
  auto c = check_kernel_table(table(20'000, 19'000, 0));
  EXPECT_FALSE(c.consistent);
  EXPECT_NE(c.line.find("bpf: an emulated hit (push %rbp) costs 0.95x a single-stepped one (lea): this kernel seems to "
                        "single-step it"),
            std::string::npos)
      << c.line;
  auto o = check_kernel_table(table(20'000, 5'000, 9'000));
  EXPECT_FALSE(o.consistent);
  EXPECT_NE(o.line.find("an optimized hit (nop5) costs 1.80x an emulated one"), std::string::npos) << o.line;
  EXPECT_EQ(check_kernel_table(ProbeCostTable{}).line, "");
}

}  // namespace
}  // namespace uprof
