#include "uprof/arch/arch.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <set>

namespace uprof {
namespace {

class ArchTable : public ::testing::TestWithParam<Arch> {};

TEST_P(ArchTable, RegistersAreUniqueAndFindable) {
  const auto& a = arch_info(GetParam());
  std::set<int> perf, dwarf;
  for (auto& r : a.regs) {
    EXPECT_TRUE(perf.insert(r.perf_index).second) << r.name;
    if (r.dwarf_number >= 0) {
      EXPECT_TRUE(dwarf.insert(r.dwarf_number).second) << r.name;
    }
    EXPECT_EQ(find_reg_by_name(a, r.name), &r);
    if (!r.alias.empty()) {
      EXPECT_EQ(find_reg_by_name(a, r.alias), &r);
    }
    EXPECT_EQ(find_reg_by_perf_index(a, r.perf_index), &r);
  }
  for (auto idx : a.int_arg_regs) EXPECT_NE(find_reg_by_perf_index(a, idx), nullptr);
  EXPECT_EQ(arch_from_e_machine(a.e_machine), GetParam());
  EXPECT_EQ(arch_from_name(a.name), GetParam());
}

INSTANTIATE_TEST_SUITE_P(BothArches, ArchTable, ::testing::Values(Arch::X86_64, Arch::Arm64),
                         [](auto& p) { return std::string(arch_info(p.param).name); });

TEST(Arch, X86NumberingMatchesKernelAndPsAbi) {
  const auto& a = arch_info(Arch::X86_64);
  // asm/perf_regs.h: DI = 5, SI = 4, R8 = 16; psABI DWARF: rdi = 5, rsi = 4, rdx = 1.
  EXPECT_EQ(find_reg_by_name(a, "di")->perf_index, 5);
  EXPECT_EQ(find_reg_by_name(a, "rsi")->perf_index, 4);
  EXPECT_EQ(find_reg_by_name(a, "r8")->perf_index, 16);
  EXPECT_EQ(find_reg_by_dwarf(a, 1)->name, "dx");
  EXPECT_EQ(find_reg_by_dwarf(a, 3)->name, "bx");
  EXPECT_EQ(a.int_arg_regs.size(), 6u);
  EXPECT_EQ(a.stack_args_offset, 8u);
}

TEST(Arch, Arm64NumberingMatchesKernelAndAapcs) {
  const auto& a = arch_info(Arch::Arm64);
  EXPECT_EQ(find_reg_by_name(a, "x7")->perf_index, 7);
  EXPECT_EQ(find_reg_by_name(a, "lr")->perf_index, 30);
  EXPECT_EQ(find_reg_by_name(a, "sp")->perf_index, 31);
  EXPECT_EQ(find_reg_by_name(a, "pc")->perf_index, 32);
  EXPECT_EQ(find_reg_by_dwarf(a, 31)->name, "sp");
  EXPECT_EQ(a.insn_align, 4u);
  EXPECT_EQ(a.int_arg_regs.size(), 8u);
  EXPECT_EQ(arch_from_e_machine(EM_AARCH64), Arch::Arm64);
}

}  // namespace
}  // namespace uprof
