// DWARF location expression -> where a perf sample finds the value: user
// registers by perf index, bytes of the user stack above the stack pointer at
// the probe, or a constant. Pure: the caller hands over the expression that is
// valid at the probe address (one entry of a location list), the CFA rule of
// the CFI row at that address and the function's frame base.
//
//   x86-64 -O2  DW_OP_reg5                           -> register di (perf 5)
//   x86-64 -O2  DW_OP_reg5 piece 8 DW_OP_reg4 piece 8 -> di:si (a 16-byte struct)
//   x86-64 -O2  DW_OP_fbreg 0, CFA = rsp+8 at entry  -> stack_offset 8 (7th argument)
//   arm64  -O0  DW_OP_fbreg -4, CFA = sp+16          -> stack_offset 12
//   x86-64 -O0  DW_OP_fbreg -20, CFA = rbp+16        -> memory at bp-4 (deref of a register)
//   x86-64 -O2  DW_OP_entry_value(DW_OP_reg5) DW_OP_stack_value
//                                                    -> di at the entry, unavailable elsewhere
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "uprof/arch/arch.h"

namespace uprof {

// One piece of a value (a struct split over registers is several).
struct LocationPiece {
  enum class Where : uint8_t { Register, Stack, Constant } where = Where::Register;
  uint16_t perf_reg = 0;      // Register: perf register index of the probed file's arch (x86-64 DI = 5, arm64 x0 = 0)
  int32_t stack_offset = 0;   // Stack: byte offset above the stack pointer at the probe address
  uint32_t size = 8;          // bytes of this piece (with deref: of the value the address points to)
  int64_t constant = 0;       // Constant: DW_AT_const_value / DW_OP_implicit_value / stack_value of constants
  // Register: the register holds the address of the value, which is at
  // [register + deref_offset] (arm64 large struct argument: `DW_OP_breg1 0`;
  // x86-64 -O0 home after the prologue: [rbp - 20]). Stack: the stack slot
  // holds that address (a by-reference argument passed on the stack). A sample
  // carries no user memory: such a value can only be read when the address
  // falls inside the copied user stack (address - sp within the dump).
  bool deref = false;
  int32_t deref_offset = 0;

  bool operator==(const LocationPiece&) const = default;
};

// The CFA at one address as its CFI row gives it: register + offset.
// x86-64 at a function's entry: rsp+8 (DWARF 7, 8); arm64: sp+0 (DWARF 31, 0).
struct CfaRule {
  int dwarf_reg = 0;
  int64_t offset = 0;
};

// The rule behind dwarf_frame_cfa()'s ops (`DW_OP_bregN off` for the common
// "register + offset" rule); nullopt for a CFA given as a general expression.
std::optional<CfaRule> cfa_rule_from_ops(std::span<const Dwarf_Op> ops);

struct ExprContext {
  Arch arch = Arch::X86_64;
  std::optional<CfaRule> cfa;              // at the probe address; nullopt when the CFI has none
  std::span<const Dwarf_Op> frame_base;    // DW_AT_frame_base at the probe address, usually DW_OP_call_frame_cfa
  bool at_entry = false;                   // the probe is at the function's first instruction
  uint32_t value_size = 8;                 // bytes of the value (its type), for an expression without DW_OP_piece
  // The operands libdw keeps behind an op, read by the caller with the
  // attribute the expression came from (dwarf_getlocation_attr,
  // dwarf_getlocation_implicit_value). Unset: those ops are unsupported.
  //   DW_OP_entry_value(DW_OP_reg5) -> 5 (DWARF number); nullopt for anything but one register op
  std::function<std::optional<int>(const Dwarf_Op&)> entry_value_register;
  //   DW_OP_implicit_value 4 <2a 00 00 00> -> its bytes
  std::function<std::optional<std::vector<uint8_t>>(const Dwarf_Op&)> implicit_value;
};

struct ExprLocation {
  bool available = false;
  std::string reason;                      // when not available: "optimized out", "unsupported DWARF op DW_OP_xxx", ...
  std::vector<LocationPiece> pieces;
  // A slot below the CFA, in the function's own frame: the prologue writes it
  // (`DW_OP_fbreg -20` at -O0), so before that it holds stale data.
  bool frame_slot = false;
  // The callee-saved registers read (bit per DWARF number): arm64 -O0 keeps a
  // by-reference argument in x19 (`DW_OP_breg19 0`). They hold the function's
  // values only between the prologue's save and the epilogue's restore.
  uint64_t callee_saved_regs = 0;
  bool uses_frame_base = false;            // DW_OP_fbreg was evaluated
};

// A location that was found, from its pieces; one that was not, with the reason.
inline ExprLocation placed(std::vector<LocationPiece> pieces) {
  ExprLocation e;
  e.available = true;
  e.pieces = std::move(pieces);
  return e;
}
inline ExprLocation unplaced(std::string reason) {
  ExprLocation e;
  e.reason = std::move(reason);
  return e;
}

// Translates one location expression. An empty expression is "optimized out".
ExprLocation translate_location(std::span<const Dwarf_Op> ops, const ExprContext& ctx);

// "DW_OP_fbreg", "DW_OP_GNU_entry_value"; "DW_OP_0xe0" for ops without a name here.
std::string dwarf_op_name(uint8_t atom);

// Whether a DWARF register of `arch` must be preserved across calls (x86-64
// rbx rbp r12-r15; arm64 x19-x29): at a function's entry it holds the caller's value.
bool dwarf_reg_callee_saved(Arch arch, int dwarf_reg);

}  // namespace uprof
