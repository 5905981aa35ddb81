// Which return probes a C++ exception could unwind through. A return probe replaces the
// function's return address with the kernel's trampoline, which has no unwind
// information: an exception unwinding through such a frame makes the C++ runtime call
// std::terminate (the program aborts with SIGABRT). perf and bpftrace abort the same way.
//
// The rule: a function is at risk when its file is C++ with exception handling (it names
// the C++ personality routine, __gxx_personality_v0, which every C++ unwind table uses
// and C code built with -fexceptions, glibc's, does not) and the function calls out (a
// call, a jump out of its own code, or an indirect jump): an exception can only pass
// through a frame that has a callee. A leaf cannot be unwound through, and keeps its
// return probe.
//
// Not covered: C code that an exception is thrown through (a qsort comparator that
// throws, in libc's qsort).
#pragma once

#include <vector>

#include "uprof/resolve/resolved_probe.h"
#include "uprof/resolve/resolver.h"
#include "uprof/util/result.h"

namespace uprof {

// Sets `return_risk` on each function-entry probe at risk (why, in a few words), and
// its exit instructions (`exits`), or why they cannot all be seen (`exits_blocker`).
Status mark_unwind_risk(Resolver& resolver, std::vector<ResolvedProbe>& probes);

// After placement: a function whose entry site is one of its exits (a function that is
// one jump, or whose entry moved onto its tail call) gets no exit probes: the two would
// fire at one instruction, in either order.
void drop_exits_at_entry(std::vector<ResolvedProbe>& probes);

// Pure: whether the function's code (from its symbol) calls out of itself.
bool calls_out(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr);

}  // namespace uprof
