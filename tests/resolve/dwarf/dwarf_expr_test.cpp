// DWARF location expressions -> sample locations, on hand-built expressions of
// the shapes gcc 12 emits (each case names where it was seen), for both arches.
#include "uprof/resolve/dwarf/dwarf_expr.h"

#include <dwarf.h>
#include <gtest/gtest.h>

#include <ostream>
#include <vector>

namespace uprof {

// Readable failures (gtest finds it by ADL); static: each test file has its own.
static void PrintTo(const LocationPiece& p, std::ostream* os) {
  static const char* kWhere[] = {"reg", "stack", "const"};
  *os << kWhere[static_cast<int>(p.where)] << "{perf_reg=" << p.perf_reg << " stack_offset=" << p.stack_offset
      << " size=" << p.size << " constant=" << p.constant << " deref=" << p.deref << "@" << p.deref_offset << "}";
}

namespace {

using Ops = std::vector<Dwarf_Op>;
using W = LocationPiece::Where;

Dwarf_Op op(uint8_t atom, Dwarf_Word n = 0, Dwarf_Word n2 = 0) { return Dwarf_Op{atom, n, n2, 0}; }
Dwarf_Op sword(uint8_t atom, int64_t n) { return op(atom, static_cast<Dwarf_Word>(n)); }

LocationPiece reg(unsigned perf, uint32_t size) {
  return {.where = W::Register, .perf_reg = static_cast<uint16_t>(perf), .size = size};
}
LocationPiece stack(int32_t off, uint32_t size, bool deref = false) {
  return {.where = W::Stack, .stack_offset = off, .size = size, .deref = deref};
}
LocationPiece deref(unsigned perf, int32_t off, uint32_t size) {
  return {.where = W::Register, .perf_reg = static_cast<uint16_t>(perf), .size = size, .deref = true, .deref_offset = off};
}
LocationPiece constant(int64_t v, uint32_t size) { return {.where = W::Constant, .size = size, .constant = v}; }

class DwarfExprTest : public ::testing::TestWithParam<Arch> {
 protected:
  bool x86() const { return GetParam() == Arch::X86_64; }
  const ArchInfo& info() const { return arch_info(GetParam()); }
  unsigned arg(int i) const { return info().int_arg_regs[i]; }
  int dwarf_of(unsigned perf) const { return find_reg_by_perf_index(info(), perf)->dwarf_number; }
  int sp_dwarf() const { return dwarf_of(info().sp_reg); }
  uint8_t reg_op(int i) const { return static_cast<uint8_t>(DW_OP_reg0 + dwarf_of(arg(i))); }
  uint8_t breg_op(int dwarf) const { return static_cast<uint8_t>(DW_OP_breg0 + dwarf); }

  // The context at a function's first instruction: CFA = rsp+8 / sp+0.
  ExprContext entry(uint32_t size = 8) const {
    ExprContext c;
    c.arch = GetParam();
    c.cfa = CfaRule{sp_dwarf(), x86() ? 8 : 0};
    c.frame_base = frame_base_;
    c.at_entry = true;
    c.value_size = size;
    c.entry_value_register = [](const Dwarf_Op& o) -> std::optional<int> { return static_cast<int>(o.number); };
    return c;
  }
  ExprContext body(CfaRule cfa, uint32_t size = 8) const {
    ExprContext c = entry(size);
    c.cfa = cfa;
    c.at_entry = false;
    return c;
  }
  Ops frame_base_{op(DW_OP_call_frame_cfa)};
};

TEST_P(DwarfExprTest, FirstArgumentRegister) {
  // -O2 `DW_OP_reg5 (rdi)` / `DW_OP_reg0 (x0)` for `int a`.
  auto r = translate_location(Ops{op(reg_op(0))}, entry(4));
  ASSERT_TRUE(r.available) << r.reason;
  EXPECT_EQ(r.pieces, std::vector{reg(x86() ? 5 : 0, 4)});
  EXPECT_FALSE(r.frame_slot);
  EXPECT_EQ(r.callee_saved_regs, 0u);
}

TEST_P(DwarfExprTest, SixteenByteStructInTwoRegisterPieces) {
  // f_pair at -O2: `DW_OP_reg5 piece 8 DW_OP_reg4 piece 8` / `DW_OP_reg0 piece 8 DW_OP_reg1 piece 8`.
  Ops ops{op(reg_op(0)), op(DW_OP_piece, 8), op(reg_op(1)), op(DW_OP_piece, 8)};
  auto r = translate_location(ops, entry(16));
  ASSERT_TRUE(r.available) << r.reason;
  EXPECT_EQ(r.pieces, (std::vector{reg(arg(0), 8), reg(arg(1), 8)}));
}

TEST_P(DwarfExprTest, StackArgumentAtEntryIsAboveTheStackPointer) {
  // x86-64 a7 / arm64 a9: `DW_OP_fbreg 0` with CFA = rsp+8 / sp+0; the next one `DW_OP_fbreg 8`.
  auto first = translate_location(Ops{sword(DW_OP_fbreg, 0)}, entry(8));
  ASSERT_TRUE(first.available) << first.reason;
  EXPECT_EQ(first.pieces, std::vector{stack(x86() ? 8 : 0, 8)});
  EXPECT_FALSE(first.frame_slot);  // the caller's frame
  EXPECT_TRUE(first.uses_frame_base);
  auto next = translate_location(Ops{sword(DW_OP_fbreg, 8)}, entry(4));
  EXPECT_EQ(next.pieces, std::vector{stack(x86() ? 16 : 8, 4)});
}

TEST_P(DwarfExprTest, HomeSlotAfterThePrologue) {
  if (x86()) {
    // -O0 `DW_OP_fbreg -20` with CFA = rbp+16: [rbp - 4], a slot of this frame.
    auto r = translate_location(Ops{sword(DW_OP_fbreg, -20)}, body({6, 16}, 4));
    ASSERT_TRUE(r.available) << r.reason;
    EXPECT_EQ(r.pieces, std::vector{deref(6, -4, 4)});
    EXPECT_TRUE(r.frame_slot);
  } else {
    // -O0 `DW_OP_fbreg -4` with CFA = sp+16 (`sub sp, sp, #16`): sp+12.
    auto r = translate_location(Ops{sword(DW_OP_fbreg, -4)}, body({31, 16}, 4));
    ASSERT_TRUE(r.available) << r.reason;
    EXPECT_EQ(r.pieces, std::vector{stack(12, 4)});
    EXPECT_TRUE(r.frame_slot);
  }
}

TEST_P(DwarfExprTest, HomeSlotBelowTheStackPointerIsUnavailable) {
  // The same home read at the entry, CFA = rsp+8: rsp-12, never copied by a user-stack sample.
  auto r = translate_location(Ops{sword(DW_OP_fbreg, -20)}, entry(4));
  EXPECT_FALSE(r.available);
  EXPECT_NE(r.reason.find("below the stack pointer"), std::string::npos) << r.reason;
  EXPECT_TRUE(r.frame_slot);
}

TEST_P(DwarfExprTest, ByReferenceInARegister) {
  // arm64 -O2 `DW_OP_breg0 0` for a 40-byte struct; x86-64 -O2 `DW_OP_breg5 0` for a C++ class.
  auto r = translate_location(Ops{op(breg_op(dwarf_of(arg(0))), 0)}, entry(40));
  ASSERT_TRUE(r.available) << r.reason;
  EXPECT_EQ(r.pieces, std::vector{deref(arg(0), 0, 40)});
}

TEST_P(DwarfExprTest, CalleeSavedRegisterIsFlagged) {
  // arm64 -O0 keeps the pointer in x19 (`DW_OP_breg19 0`); x86-64 would use rbx (DWARF 3).
  int reg = x86() ? 3 : 19;
  auto r = translate_location(Ops{op(breg_op(reg), 0)}, body({sp_dwarf(), 48}, 40));
  ASSERT_TRUE(r.available) << r.reason;
  EXPECT_EQ(r.callee_saved_regs, uint64_t{1} << reg);
  EXPECT_TRUE(r.pieces[0].deref);
}

TEST_P(DwarfExprTest, EntryValueIsTheRegisterOnlyAtTheEntry) {
  // -O2 after the register is reused: `DW_OP_entry_value(DW_OP_reg5) DW_OP_stack_value`.
  Ops ops{op(DW_OP_entry_value, static_cast<Dwarf_Word>(dwarf_of(arg(0)))), op(DW_OP_stack_value)};
  auto at_entry = translate_location(ops, entry(8));
  ASSERT_TRUE(at_entry.available) << at_entry.reason;
  EXPECT_EQ(at_entry.pieces, std::vector{reg(arg(0), 8)});
  auto later = translate_location(ops, body({sp_dwarf(), 16}, 8));
  EXPECT_FALSE(later.available);
  EXPECT_EQ(later.reason, "entry value of a register not captured");
  // Without a reader for the op's block, nothing is guessed.
  ExprContext bare = entry(8);
  bare.entry_value_register = nullptr;
  auto unread = translate_location(ops, bare);
  EXPECT_FALSE(unread.available);
  EXPECT_NE(unread.reason.find("DW_OP_entry_value"), std::string::npos) << unread.reason;
}

TEST_P(DwarfExprTest, Constants) {
  // `DW_OP_lit3 DW_OP_stack_value` (scale.constprop's k), `DW_OP_consts -10 DW_OP_stack_value`.
  auto lit = translate_location(Ops{op(DW_OP_lit3), op(DW_OP_stack_value)}, body({sp_dwarf(), 16}, 8));
  EXPECT_EQ(lit.pieces, std::vector{constant(3, 8)});
  auto neg = translate_location(Ops{sword(DW_OP_consts, -10), op(DW_OP_stack_value)}, body({sp_dwarf(), 16}, 4));
  EXPECT_EQ(neg.pieces, std::vector{constant(-10, 4)});
  ExprContext c = entry(4);
  c.implicit_value = [](const Dwarf_Op&) { return std::optional<std::vector<uint8_t>>({0xfe, 0xff, 0xff, 0xff}); };
  auto imp = translate_location(Ops{op(DW_OP_implicit_value, 4)}, c);
  EXPECT_EQ(imp.pieces, std::vector{constant(0xfffffffe, 4)});
}

TEST_P(DwarfExprTest, RegisterValueAsStackValue) {
  // `DW_OP_breg0 0 DW_OP_stack_value` is the register; `DW_OP_breg0 1 DW_OP_stack_value` is computed.
  uint8_t b = breg_op(dwarf_of(arg(0)));
  auto same = translate_location(Ops{op(b, 0), op(DW_OP_stack_value)}, entry(8));
  EXPECT_EQ(same.pieces, std::vector{reg(arg(0), 8)});
  auto computed = translate_location(Ops{op(b, 1), op(DW_OP_stack_value)}, entry(8));
  EXPECT_FALSE(computed.available);
  EXPECT_NE(computed.reason.find("computed"), std::string::npos) << computed.reason;
}

TEST_P(DwarfExprTest, UnavailableCasesSayWhy) {
  auto c = body({sp_dwarf(), 16}, 8);
  auto why = [&](Ops ops) { return translate_location(ops, c).reason; };
  EXPECT_EQ(why({}), "optimized out");
  EXPECT_EQ(why({op(DW_OP_piece, 8), op(reg_op(1)), op(DW_OP_piece, 8)}), "optimized out in part (bytes 0-7)");
  // x86-64 -O2 f_float's `d`: DW_OP_reg17 (xmm0); arm64: DW_OP_regx 64 (v0).
  EXPECT_EQ(why({x86() ? op(DW_OP_reg17) : op(DW_OP_regx, 64)}), "in a floating-point register");
  // x86-64 -O2 f_clobber's `a` right after `mov %rdi, g_sink`: DW_OP_addr 0x4028.
  EXPECT_EQ(why({op(DW_OP_addr, 0x4028)}), "in memory at 0x4028 (a global), which a sample does not carry");
  EXPECT_EQ(why({op(DW_OP_lit2), op(DW_OP_lit1), op(DW_OP_mul), op(DW_OP_stack_value)}), "unsupported DWARF op DW_OP_mul");
  EXPECT_EQ(why({op(0xfa, 0x57d)}), "removed from this clone's signature (DW_OP_GNU_parameter_ref)");
  ExprContext no_cfa = c;
  no_cfa.cfa.reset();
  EXPECT_NE(translate_location(Ops{sword(DW_OP_fbreg, 0)}, no_cfa).reason.find("no CFI row"), std::string::npos);
}

TEST_P(DwarfExprTest, OtherFrameBases) {
  // clang -O0 style `DW_AT_frame_base: DW_OP_reg6 (rbp)` / arm64 x29: the base is the register's value.
  int fp = x86() ? 6 : 29;
  frame_base_ = {op(static_cast<uint8_t>(DW_OP_reg0 + fp))};
  auto r = translate_location(Ops{sword(DW_OP_fbreg, -8)}, body({sp_dwarf(), 16}, 8));
  ASSERT_TRUE(r.available) << r.reason;
  EXPECT_EQ(r.pieces, std::vector{deref(x86() ? 6 : 29, -8, 8)});
  EXPECT_EQ(r.callee_saved_regs, uint64_t{1} << fp);
}

INSTANTIATE_TEST_SUITE_P(BothArches, DwarfExprTest, ::testing::Values(Arch::X86_64, Arch::Arm64),
                         [](auto& p) { return std::string(arch_info(p.param).name); });

TEST(DwarfExprNames, OpsAndCfaRules) {
  EXPECT_EQ(dwarf_op_name(DW_OP_fbreg), "DW_OP_fbreg");
  EXPECT_EQ(dwarf_op_name(DW_OP_breg19), "DW_OP_breg19");
  EXPECT_EQ(dwarf_op_name(DW_OP_reg5), "DW_OP_reg5");
  EXPECT_EQ(dwarf_op_name(0xf3), "DW_OP_GNU_entry_value");
  EXPECT_EQ(dwarf_op_name(0xe5), "DW_OP_0xe5");
  Ops rsp8{op(DW_OP_breg7, 8)};
  auto rule = cfa_rule_from_ops(rsp8);
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->dwarf_reg, 7);
  EXPECT_EQ(rule->offset, 8);
  EXPECT_FALSE(cfa_rule_from_ops(Ops{op(DW_OP_breg7, 8), op(DW_OP_deref)}));
  EXPECT_TRUE(dwarf_reg_callee_saved(Arch::Arm64, 19));
  EXPECT_FALSE(dwarf_reg_callee_saved(Arch::Arm64, 8));
  EXPECT_TRUE(dwarf_reg_callee_saved(Arch::X86_64, 3));   // rbx
  EXPECT_FALSE(dwarf_reg_callee_saved(Arch::X86_64, 5));  // rdi
}

}  // namespace
}  // namespace uprof
