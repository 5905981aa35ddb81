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

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "uprof/resolve/insn/exit_sites.h"
#include "uprof/resolve/resolved_probe.h"
#include "uprof/resolve/resolver.h"
#include "uprof/util/result.h"

namespace uprof {

// Why a function's return probe could abort the program, and where its returns are
// measured instead.
struct ReturnRisk {
  // Its exit instructions (resolve/insn/exit_sites.h); empty, with the reason
  // (`exits_blocker`), when they cannot all be seen.
  std::vector<ExitSite> exits{};
  std::string exits_blocker{};
  // Why, for the function as a probe names it: "a C++ exception unwinding through f would
  // abort the program under a return probe (the kernel's return trampoline has no unwind information)".
  static std::string why(const std::string& function);
};

// The functions at risk, by (path, function_addr): the stage's answer, read by placement,
// the probe table and `uprof probe`.
struct ReturnRisks {
  std::map<std::pair<std::string, uint64_t>, ReturnRisk> by_function;
  // The risk of the function `p` is the entry (or the return) of; nullptr when it has none,
  // or when `p` is no function entry (a point inside, a line, an inlined copy, USDT).
  const ReturnRisk* of(const ResolvedProbe& p) const;
};

// The function-entry probes at risk, each with why (in a few words), and its exit
// instructions, or why they cannot all be seen.
Result<ReturnRisks> unwind_risks(Resolver& resolver, const std::vector<ResolvedProbe>& probes);

// After placement: a function whose entry site is one of its exits (a function that is
// one jump, or whose entry moved onto its tail call) gets no exit probes: the two would
// fire at one instruction, in either order.
void drop_exits_at_entry(const std::vector<ResolvedProbe>& probes, ReturnRisks& risks);

// Pure: whether the function's code (from its symbol) calls out of itself.
bool calls_out(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr);

}  // namespace uprof
