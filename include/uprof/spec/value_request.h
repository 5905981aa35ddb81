// One value to capture at a probe, parsed once from its -e token into what it names.
// The spellings are the tracefs uprobe interface's, plus DWARF names:
//   %di %si %ax ... (x86-64), %x0 ... %x30 %sp %lr (arm64)   a register
//   $arg1 .. $argN      the N-th integer argument of the calling convention at entry
//   $stackN             the N-th 8-byte word above the stack pointer at the probe
//   $retval             the return value (return probes only; typed by DWARF when untyped)
//   $comm               the thread's name: accepted, and always shown from the thread's comm
//   a, $params          a parameter by its DWARF name; every parameter
//   p->name, *p, a[2]   what a parameter points to, typed by DWARF (p->q->x, s.x too)
// Each register, argument, stack word or $retval may be named ("a=%di") and typed as
// tracefs types them ("%di:s32", "%si:u16", "%dx:x64" for hex); untyped values are s64.
// Memory, as tracefs spells it: "+8(%di)" is the 8 bytes at %di + 8, and it nests:
// "+0(+8(%di))" follows the pointer at %di + 8. ":string" reads a NUL-terminated
// string: "+0(%di):string" (tracefs), or "%di:string" / "$arg1:string" for the string
// a register points at (as bpftrace's str(arg0)).
// Globals: "@counter" is the value of the variable `counter` in the probed file,
// "@table+16" the bytes 16 past it, "@0x4010" those at a link-time address of the
// file; "+0(@name):string" follows a `char *` global, "@buf:string" reads a char array.
//
// Parsing knows no architecture: "%di" is a register *name* here. The plan binds it
// to an architecture's register table (record/value_binding.h), where "%di" on an
// arm64 file is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "uprof/util/result.h"

namespace uprof {

struct RegisterRef {
  std::string name;  // "di" for %di, "x0" for %x0
  bool operator==(const RegisterRef&) const = default;
};
struct ArgumentRef {
  unsigned n = 1;    // $arg1 is 1
  bool operator==(const ArgumentRef&) const = default;
};
struct StackRef {
  unsigned word = 0; // $stack2 is 2: 16 bytes above the stack pointer
  bool operator==(const StackRef&) const = default;
};
struct ReturnValueRef {
  bool operator==(const ReturnValueRef&) const = default;
};
// One step of a C access path after a parameter: `p->name` is Deref then Member "name",
// `*p` Deref, `arr[2]` Index 2 (on a pointer: the third element it points to).
struct AccessStep {
  enum class Kind : uint8_t { Member, Deref, Index } kind = Kind::Deref;
  std::string member{};
  int64_t index = 0;
  bool operator==(const AccessStep&) const = default;
};

struct ParamRef {
  std::string name;  // a DWARF parameter name
  // "p->name", "*p", "arr[2]", "p->q->x": what to follow from it, typed by DWARF.
  std::vector<AccessStep> path{};
  bool operator==(const ParamRef&) const = default;
};
struct AllParamsRef {
  bool operator==(const AllParamsRef&) const = default;
};
struct CommRef {
  bool operator==(const CommRef&) const = default;
};

// "@counter", "@table+16", "@0x4010": memory of the probed file's globals. The
// resolver fills in a symbol's address (its link-time value) and size.
struct GlobalRef {
  std::string symbol{};                 // "" for @0xADDR
  std::optional<uint64_t> address{};    // link-time address of the symbol, or ADDR
  int64_t offset = 0;                   // "+16" after the symbol
  uint8_t size = 0;                     // the symbol's size when 1, 2, 4 or 8 (else 0)
  bool operator==(const GlobalRef&) const = default;
};

using ValueTarget =
    std::variant<RegisterRef, ArgumentRef, StackRef, ReturnValueRef, ParamRef, AllParamsRef, CommRef, GlobalRef>;

// ":s32" -> 4 bytes, signed; ":x64" -> 8 bytes, printed in hex.
struct RawType {
  uint8_t size = 8;
  bool is_signed = true;
  bool hex = false;
  bool string = false;  // ":string" (also ":ustring", tracefs' name for a user string)
  bool operator==(const RawType&) const = default;
};

struct ValueRequest {
  std::string text;               // the token as written: "b=%si:u16"
  std::string label;              // "b"; "" when the token names no label
  ValueTarget target;
  std::optional<RawType> type;
  // "+8(%di)" -> {8}; "+0(+8(%di))" -> {8, 0}: the offsets of each memory read,
  // innermost first (each reads at the address the step inside it gave).
  std::vector<int32_t> memory{};

  // The name the value is shown by: the label, else the spelling without a type ("%si").
  std::string display_name() const;
  // Whether DWARF answers it: a parameter, $params, or a $retval with no label or type.
  bool wants_dwarf() const;
};

// An Error names the token: "spec: value '%di:s12': unknown type 's12' (...)".
Result<ValueRequest> parse_value_request(std::string_view token);

}  // namespace uprof
