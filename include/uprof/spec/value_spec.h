// Raw values to capture at a probe, spelled as the tracefs uprobe interface spells
// them, resolved against an architecture's register table:
//   %di %si %ax ... (x86-64), %x0 ... %x30 %sp %lr (arm64)   a register
//   $arg1 .. $argN      the N-th integer argument of the calling convention at entry
//                       (x86-64: rdi rsi rdx rcx r8 r9, then the stack; arm64: x0-x7, then the stack)
//   $stackN             the N-th 8-byte word above the stack pointer at the probe
//   $retval             the integer return value (return probes only)
//   $comm               the thread's name: accepted, and always shown from the thread's comm
// Each may be named ("a=%di") and typed as tracefs types them ("%di:s32", "%si:u16",
// "%dx:x64" for hex); untyped values are s64.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/store/recording.h"
#include "uprof/util/result.h"

namespace uprof {

struct ParsedValue {
  ValueSpec spec;
  bool for_return = false;  // belongs on the return probe ($retval)
};

// nullopt for $comm (nothing to capture); an Error naming the token otherwise.
Result<std::optional<ParsedValue>> parse_value_token(std::string_view token, const ArchInfo& arch);

// What the kernel must sample for a set of values: the register mask and the
// user-stack bytes (0 when no value lives on the stack).
struct SampleNeeds {
  uint64_t regs_mask = 0;
  uint32_t stack_bytes = 0;
};
// The user-stack bytes copied for a value behind an address (arm64 large struct
// arguments live in the caller's frame, x86-64 -O0 homes below rbp).
inline constexpr uint32_t kDerefStackBytes = 1024;
SampleNeeds sample_needs(const std::vector<ValueSpec>& values, const ArchInfo& arch);

}  // namespace uprof
