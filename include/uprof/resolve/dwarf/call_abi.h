// The calling conventions as data about types: where SysV x86-64 and AAPCS64
// put each argument at a function's first instruction, and the return value
// at its return, in the terms of a perf sample (registers by perf index,
// stack bytes above sp). Pure: the types come from DWARF elsewhere.
//
//   x86-64  long f10(long a1, ..., long a9, int a10)   a1 = di ... a6 = r9, a7 = sp+8 ... a10 = sp+32
//   arm64   same                                       a1 = x0 ... a8 = x7, a9 = sp+0, a10 = sp+8
//   x86-64  long f_pair(struct pair p)                 p = di:si (two 8-byte pieces)
//   arm64   long f_big(struct big b)   (40 bytes)      b = [x0] (a pointer to the caller's copy)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/resolve/dwarf/dwarf_expr.h"
#include "uprof/resolve/dwarf/value_type.h"

namespace uprof {

// What the calling conventions need to know of a type beyond ValueType: how
// its bytes split into floating-point and integer parts.
struct AbiShape {
  uint32_t align = 8;
  // x86-64 eightbyte classes of a value of at most 16 bytes, bit i for eightbyte i:
  // `struct { double d; long l; }` is sse 0b01, integer 0b10.
  uint8_t int_eightbytes = 0;
  uint8_t sse_eightbytes = 0;
  bool x87 = false;           // holds a 16-byte float (long double): x86-64 passes it in memory
  uint8_t hfa_members = 0;    // arm64: 1-4 when a homogeneous floating-point aggregate (v registers)
  // A C++ class that is not trivially copyable is passed by invisible
  // reference (Itanium C++ ABI), whatever its size: `Tracked t` arrives as a pointer.
  bool by_reference = false;
  bool unknown_layout = false;  // a member could not be read: no register can be vouched for
};

struct AbiValue {
  ValueType type;
  AbiShape shape;
};

// Where the calling convention puts each parameter at the function's first
// instruction, from the types alone: SysV x86-64 (rdi rsi rdx rcx r8 r9, then
// rsp+8, +16, ...; a return value in memory takes rdi first) or AAPCS64 (x0-x7,
// then sp+0, +8, ...; x8 for a return in memory). Floating-point values in
// xmm / v registers are unavailable: user-register samples do not carry them.
std::vector<ExprLocation> abi_entry_locations(Arch arch, const AbiValue* return_type, std::span<const AbiValue> params);
// Where the return value is at a return probe; empty when a sample cannot hold it.
std::vector<LocationPiece> abi_return_location(Arch arch, const AbiValue* return_type);

}  // namespace uprof
