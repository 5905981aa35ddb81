// The facts code outside arch/ asks the table for, both architectures side by side:
// one row of expectations per architecture, checked on any host.
#include "uprof/arch/arch.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace uprof {
namespace {

struct Expected {
  Arch arch;
  uint16_t e_machine;
  uint8_t id;                     // byte 12 of a data file's header
  uint32_t fixed_insn_size;
  uint32_t entry_cfa;
  int16_t link_reg;               // as a perf index
  std::string_view link_name;
  std::string_view return_hi;     // bytes 8-15 of a 16-byte return
  bool returns_result_address;
  bool char_is_signed;
  bool float_in_register_unavailable;
  std::string_view triplet;
  uint32_t ld_so_cache_flags;
  DwarfRange fp_dwarf;
  std::vector<std::string_view> callee_saved;
  std::vector<std::string_view> not_operands;
  std::string_view go_g;          // Go's ABIInternal: the register holding the running g
};

const Expected kRows[] = {
    {.arch = Arch::X86_64, .e_machine = EM_X86_64, .id = 1, .fixed_insn_size = 0, .entry_cfa = 8, .link_reg = -1,
     .link_name = "", .return_hi = "dx", .returns_result_address = true, .char_is_signed = true,
     .float_in_register_unavailable = true, .triplet = "x86_64-linux-gnu", .ld_so_cache_flags = 0x0303,
     .fp_dwarf = {17, 48}, .callee_saved = {"bx", "bp", "r12", "r13", "r14", "r15"},
     .not_operands = {"flags", "cs", "ss", "ds", "es", "fs", "gs"}, .go_g = "r14"},
    {.arch = Arch::Arm64, .e_machine = EM_AARCH64, .id = 2, .fixed_insn_size = 4, .entry_cfa = 0, .link_reg = 30,
     .link_name = "x30", .return_hi = "x1", .returns_result_address = false, .char_is_signed = false,
     .float_in_register_unavailable = false, .triplet = "aarch64-linux-gnu", .ld_so_cache_flags = 0x0a03,
     .fp_dwarf = {64, 95},
     .callee_saved = {"x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29"},
     .not_operands = {"pc"}, .go_g = "x28"},
};

class ArchFacts : public ::testing::TestWithParam<Expected> {};

TEST_P(ArchFacts, TableSaysWhatTheCodeAsks) {
  const Expected& e = GetParam();
  const ArchInfo& a = arch_info(e.arch);
  EXPECT_EQ(a.e_machine, e.e_machine);
  EXPECT_EQ(arch_from_id(e.id), e.arch);
  EXPECT_EQ(a.fixed_insn_size, e.fixed_insn_size);
  if (a.fixed_insn_size) {
    EXPECT_EQ(a.insn_align, a.fixed_insn_size);  // a fixed-width probe offset is aligned to it
  }
  EXPECT_EQ(a.entry_cfa, e.entry_cfa);
  EXPECT_EQ(a.stack_args_offset, a.entry_cfa);  // the first stack argument sits at the entry's CFA
  EXPECT_EQ(a.link_reg, e.link_reg);
  if (a.link_reg >= 0) {
    EXPECT_EQ(find_reg_by_perf_index(a, static_cast<unsigned>(a.link_reg))->name, e.link_name);
  }
  EXPECT_EQ(find_reg_by_perf_index(a, a.return_reg_hi)->name, e.return_hi);
  EXPECT_EQ(find_reg_by_perf_index(a, a.go_g_reg)->name, e.go_g);
  EXPECT_EQ(a.returns_result_address, e.returns_result_address);
  EXPECT_EQ(a.char_is_signed, e.char_is_signed);
  EXPECT_EQ(a.float_in_register_unavailable, e.float_in_register_unavailable);
  EXPECT_EQ(a.multiarch_triplet, e.triplet);
  EXPECT_EQ(a.ld_so_cache_flags, e.ld_so_cache_flags);
  EXPECT_EQ(a.fp_dwarf_regs.first, e.fp_dwarf.first);
  EXPECT_EQ(a.fp_dwarf_regs.last, e.fp_dwarf.last);
  // No register a sample carries has a floating-point DWARF number.
  for (auto& r : a.regs) EXPECT_FALSE(a.fp_dwarf_regs.contains(r.dwarf_number)) << r.name;

  std::set<std::string_view> saved, not_operand;
  for (auto& r : a.regs) {
    if (r.callee_saved) saved.insert(r.name);
    if (!r.operand) not_operand.insert(r.name);
  }
  EXPECT_EQ(saved, std::set<std::string_view>(e.callee_saved.begin(), e.callee_saved.end()));
  EXPECT_EQ(not_operand, std::set<std::string_view>(e.not_operands.begin(), e.not_operands.end()));
}

TEST_P(ArchFacts, EveryRegisterPartNamesARegister) {
  const ArchInfo& a = arch_info(GetParam().arch);
  std::set<std::string_view> names;
  for (auto& p : a.reg_parts) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_EQ(find_reg_by_name(a, p.name), nullptr) << p.name << " is a part, not a register";
    FoundPart f = find_reg_by_part(a, p.name);
    ASSERT_NE(f.reg, nullptr) << p.name;
    EXPECT_EQ(f.reg->name, p.reg);
    EXPECT_EQ(f.byte_offset, p.byte_offset);
  }
  // A whole register finds itself, by its name and its alias.
  for (auto& r : a.regs) {
    EXPECT_EQ(find_reg_by_part(a, r.name).reg, &r);
    if (!r.alias.empty()) {
      EXPECT_EQ(find_reg_by_part(a, r.alias).reg, &r);
    }
  }
  EXPECT_EQ(find_reg_by_part(a, "nosuch").reg, nullptr);
}

INSTANTIATE_TEST_SUITE_P(BothArches, ArchFacts, ::testing::ValuesIn(kRows),
                         [](auto& p) { return std::string(arch_info(p.param.arch).name); });

TEST(ArchFacts, PartsAsGccAndCapstoneSpellThem) {
  const ArchInfo& x86 = arch_info(Arch::X86_64);
  EXPECT_EQ(find_reg_by_part(x86, "eax").reg->name, "ax");
  EXPECT_EQ(find_reg_by_part(x86, "al").byte_offset, 0);
  EXPECT_EQ(find_reg_by_part(x86, "ah").byte_offset, 1);  // bits 8-15: a USDT operand refuses it
  EXPECT_EQ(find_reg_by_part(x86, "r12d").reg->name, "r12");
  EXPECT_EQ(find_reg_by_part(x86, "r8l").reg->name, "r8");
  EXPECT_EQ(find_reg_by_part(x86, "rip").reg->name, "ip");
  const ArchInfo& arm = arch_info(Arch::Arm64);
  EXPECT_EQ(find_reg_by_part(arm, "w3").reg->name, "x3");
  EXPECT_EQ(find_reg_by_part(arm, "wsp").reg->name, "sp");
  EXPECT_EQ(find_reg_by_part(arm, "lr").reg->name, "x30");
  EXPECT_EQ(find_reg_by_part(arm, "w31").reg, nullptr);  // 31 is sp or xzr, never a w register here
  EXPECT_EQ(find_reg_by_part(arm, "eax").reg, nullptr);  // each architecture its own names
}

TEST(ArchFacts, EveryArchitectureOnceById) {
  std::set<uint8_t> ids;
  for (const ArchInfo* a : all_arches()) {
    EXPECT_TRUE(ids.insert(static_cast<uint8_t>(a->arch)).second) << a->name;
    EXPECT_EQ(&arch_info(a->arch), a);
    EXPECT_EQ(arch_from_id(static_cast<uint8_t>(a->arch)), a->arch);
  }
  EXPECT_EQ(all_arches().size(), 2u);
  EXPECT_EQ(arch_from_id(0), std::nullopt);
  EXPECT_EQ(arch_from_id(3), std::nullopt);
}

TEST(ArchFacts, PerArchPicksTheFilesArchitecture) {
  constexpr PerArch<std::string_view> kSyntax{.x86_64 = "AT&T", .arm64 = "A64"};
  EXPECT_EQ(kSyntax[Arch::X86_64], "AT&T");
  EXPECT_EQ(kSyntax[Arch::Arm64], "A64");
}

}  // namespace
}  // namespace uprof
