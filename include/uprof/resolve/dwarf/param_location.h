// Where each formal parameter of a function lives at one probe address, in the
// terms of a perf sample: user registers by perf index, bytes of the user stack
// above the stack pointer at the probe (PERF_SAMPLE_STACK_USER), or constants.
// `uprof record -e add ./prog` uses it to capture `a` and `b` by name and type:
//
//   x86-64 -O2, at add's entry:  a = di (4 bytes), b = si
//   arm64  -O0, after prologue:  a = sp+12, b = sp+8          (DW_OP_fbreg -4 / -8, CFA = sp+16)
//   x86-64 -O0, after prologue:  a = [bp - 4], b = [bp - 8]   (DW_OP_fbreg -20 / -24, CFA = rbp+16)
//   arm64  -O2, after `a` dies:  a = <unavailable: entry value of a register not captured>
//
// At the function's first instruction the calling convention (call_abi.h)
// decides where DWARF names a home the prologue has not written yet (-O0
// `DW_OP_fbreg -20`); everywhere else the DWARF location list evaluated at the
// exact address does. A value DWARF cannot place is reported unavailable with
// the reason, never as a wrong register.
//
// x86-64 -O0 homes are relative to rbp, whose distance from rsp the CFI does
// not give: they come as deref pieces ([bp - 4]) that a user-stack sample holds
// only when the address is at or above rsp, which a leaf function's red zone
// (homes below rsp, no `sub rsp`) is not.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/resolve/dwarf/dwarf_expr.h"
#include "uprof/resolve/dwarf/value_type.h"
#include "uprof/spec/value_request.h"
#include "uprof/util/result.h"

typedef struct Elf Elf;

namespace uprof {

class DwarfIndex;

struct ParamLocation {
  std::string name;
  ValueType type;
  bool available = false;
  // When not available: "optimized out", "entry value of a register not captured",
  // "frame base not valid before the prologue", "in a floating-point register",
  // "unsupported DWARF op DW_OP_xxx", ...
  std::string reason;
  std::vector<LocationPiece> pieces;
  bool artificial = false;    // C++ `this`
  uint64_t type_offset = 0;   // its type's DIE (for resolve_access), 0 when it has none
};

struct FunctionParams {
  std::string function;       // qualified name: "shapes::Acc::add"
  ValueType return_type;      // Kind::Unknown, name "void", for void
  std::vector<ParamLocation> params;
  // Where the return value is at a return probe, by the ABI: rax / x0; small
  // structs rax:rdx / x0:x1; an x86-64 struct returned in memory is at [rax].
  // Empty for void, floating-point and arm64 in-memory (x8) returns.
  std::vector<LocationPiece> return_value;
  // The symbol at the entry is a compiler clone (`scale.constprop.0`,
  // `f.isra.0`, `g.part.0`): its calling convention may differ from the
  // source, so only DWARF is trusted for it, never the ABI.
  bool clone = false;
  // Go code (DW_LANG_Go): its DWARF gives no function a return type (results are listed as
  // parameters), so an asked-for $retval stays the raw return register.
  bool go = false;
};

struct ParamsOptions {
  // The file whose .eh_frame describes the code when `elf_with_dwarf` is a
  // separate debug file (there .eh_frame is SHT_NOBITS): the stripped binary.
  Elf* elf_with_cfi = nullptr;
  // Who places parameters at the function's first instruction. The default:
  // DWARF where it is valid there, the calling convention where DWARF names a
  // home the prologue has not written (-O0) or nothing at all. DwarfOnly and
  // AbiOnly let tests hold the ABI model against gcc's own DWARF. A clone's
  // convention is unknown: it always gets DWARF only.
  enum class AtEntry : uint8_t { DwarfThenAbi, DwarfOnly, AbiOnly } at_entry = AtEntry::DwarfThenAbi;
  // A source line or an inlined copy: `params` are the variables in scope at pc
  // (resolve/dwarf/scope_variables.h), placed by DWARF alone.
  bool in_scope = false;
  // With in_scope, an inlined copy's DW_TAG_inlined_subroutine: its own variables, even
  // where its entry lies outside the ranges it lists.
  uint64_t scope_die = 0;
};

// `elf_with_dwarf` is the file holding the DWARF (the binary or its debug
// file); `pc` is the probe's link-time virtual address, inside the function
// whose entry is `function_entry`; `arch` comes from the ELF. Errors name the
// function and the reason: "params: add (0x1139): pc 0x2000 is outside it".
Result<FunctionParams> params_at(Elf* elf_with_dwarf, Arch arch, uint64_t function_entry, uint64_t pc,
                                 const ParamsOptions& options = {});
// The same with an index already built over `elf_with_dwarf` (no re-reading of its DWARF).
Result<FunctionParams> params_at(const DwarfIndex& index, Elf* elf_with_dwarf, Arch arch, uint64_t function_entry,
                                 uint64_t pc, const ParamsOptions& options = {});

// Where an access path leads from a parameter's value: follow `hops` (address =
// load8(address + hop), starting from the value), then read `type` at address +
// `offset`. A char array there (`char name[16]`) or a char pointer is a string:
// `string` says so (the pointer's load is one more hop, offset 0).
struct MemberAccess {
  std::vector<int32_t> hops{};
  int32_t offset = 0;
  ValueType type{};
  bool string = false;
};

// `type_offset`: the parameter's type DIE (ParamLocation::type_offset); `text` names
// the value in errors: "params: 'p->nme': struct item has no member 'nme' (it has id,
// name, label, weight)".
Result<MemberAccess> resolve_access(Dwarf* dbg, uint64_t type_offset, const std::vector<AccessStep>& path,
                                    std::string_view text);

}  // namespace uprof
