// A parsed value (spec/value_request.h) bound to an architecture: which register
// or stack slot one hit reads, and the slot it fills in an event. Pure.
//
//   %di      on x86-64 -> Register, perf index 5
//   $arg7    on x86-64 -> Stack, 8 bytes above sp (past the return address)
//   $arg9    on arm64  -> Stack, at [sp]
//   $retval  on arm64  -> ReturnValue, x0 (perf index 0)
#pragma once

#include <optional>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/model/capture_plan.h"
#include "uprof/model/recording.h"
#include "uprof/resolve/usdt/usdt_args.h"
#include "uprof/spec/value_request.h"
#include "uprof/util/result.h"

namespace uprof {

struct BoundValue {
  ValueSpec spec;
  bool for_return = false;  // belongs on the return probe ($retval)
};

// $comm is the thread's name at the hit (ValueSource::Comm). A DWARF request (a parameter, $params) is not bound here: DWARF makes its slots
// (resolve/typed_values.h); asking this for one is an Error. So is a register
// the architecture does not have.
// Memory reads and strings (spec "+8(%di)", "%si:string") bind to the base slot with
// `hops` and a final `deref`; a string keeps at most `string_max` bytes.
inline constexpr uint16_t kDefaultStringMax = 64;
inline constexpr uint16_t kMaxStringMax = 1024;
Result<std::optional<BoundValue>> bind_value(const ValueRequest& value, const ArchInfo& arch,
                                             uint16_t string_max = kDefaultStringMax);

// A global (`@counter`, GlobalRef with its address resolved) read at a probe whose
// instruction is at link-time address `site`: the instruction pointer is `site` plus
// the file's load bias there, so the global is at ip + (address - site), read as a
// memory value from %ip (%pc) by both engines. Sized by its symbol (1, 2, 4 or 8
// bytes; else 8) unless typed. Only at a probe whose ip is its own site: not on a
// return probe, where ip is the caller's.
Result<BoundValue> bind_global(const ValueRequest& value, const ArchInfo& arch, uint64_t site,
                               uint16_t string_max = kDefaultStringMax);

// A value at a USDT probe: `$argN` is the note's N-th argument, typed by its size and
// sign ("-4@%eax": a signed 4-byte value in rax; "8@16(%rbp)": the 8 bytes at rbp+16,
// read from memory; "4@$5": the constant 5). `$argN:string` reads the string the
// argument points to, `$argN:x64` retypes it. Other values (%di, $stack1) bind as on
// any probe; $retval and DWARF names are refused: a USDT probe has no return and
// its arguments no names. `probe` is "PROVIDER:NAME", for messages.
Result<std::optional<BoundValue>> bind_usdt_value(const ValueRequest& value, const std::vector<UsdtArg>& args,
                                                  const std::string& probe, const ArchInfo& arch,
                                                  uint16_t string_max = kDefaultStringMax);

// The user-stack bytes copied for a value behind an address (arm64 large struct
// arguments live in the caller's frame, x86-64 -O0 homes below rbp).
inline constexpr uint32_t kDerefStackBytes = 1024;

// What the kernel must copy for a probe's value slots: the register mask and the
// user-stack bytes (0 when no value lives on the stack).
ProbeReads reads_for(const std::vector<ValueSpec>& values, const ArchInfo& arch);

}  // namespace uprof
