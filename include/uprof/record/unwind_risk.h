// Which functions must not get a return probe, why, and where their returns are measured
// instead. A return probe replaces the return address on the top of the stack at the
// function's entry with the kernel's trampoline, and the kernel keeps the real one in a
// per-thread stack of pending returns. That is sound only where the top of the stack is a
// return address, the function returns through it once, on the stack it was called on,
// and nothing unwinds through the frame. The hazards, in the order they are decided:
//
//   EntryPoint     the ELF entry point (crt's _start): the top of its stack is argc; the
//                  trampoline written over it made a program print argc=-8192
//   ReturnsTwice   setjmp, getcontext, swapcontext and the longjmp family by name: the
//                  return address they save (the trampoline) is resumed later, after the
//                  kernel has consumed or dropped its pending return
//   NeverReturns   no ret and no jump out of its code (`_start` ends in hlt, a function
//                  that ends calling abort): nothing to measure; a function only ever
//                  jumped to (entered by a jump or a ret, not a call, so its stack top
//                  is not a return address: __restore_rt, __start_context) leaves this
//                  way too, or by a jump to the address on its stack (an exit at the
//                  entry's stack pointer means the top was a return address)
//   GoCode         every function of a Go file (record/process_traits.h: go_file): Go's
//                  runtime walks and copies goroutine stacks (growth, GC, tracebacks,
//                  preemption) and dies on a return address it does not know ("unexpected
//                  return pc for main.work"); the entry probe goes past the stack-growth
//                  check (resolve/insn/go_prologue.h), and the samples of both probes
//                  carry the goroutine's g, by which pairing goes (analyse/pairing.h)
//   CxxCode        a function that calls out, in a file whose language unwinds: it
//                  names a personality routine other than C's (__gxx_personality_v0,
//                  Rust's rust_eh_personality; record/process_traits.h): a C++
//                  exception or a Rust panic unwinding through the trampoline, which
//                  has no unwind information, aborts the program (Rust: "failed to
//                  initiate panic, error 5", the unwinder's end of stack)
//   CInCxxProcess  the same for any other file's function that calls out, in a process
//                  with such a runtime (record/process_traits.h): libc's qsort, whose
//                  comparator may throw
//   StackSwitching every function in a process that switches stacks (swapcontext,
//                  boost.context): the kernel tells live pending returns from stale ones by
//                  the stack pointer, on one stack; on another it pops the wrong one, and
//                  the program returns to the wrong caller
//
// The first three get an entry probe only (counted, no latency); the others are measured
// at their own exit instructions (resolve/insn/exit_sites.h), or, when those cannot all be
// seen, get an entry probe only. --unsafe-returns gives the last three return probes, never
// a Go function's.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "uprof/record/process_traits.h"
#include "uprof/resolve/insn/exit_sites.h"
#include "uprof/resolve/resolved_probe.h"
#include "uprof/resolve/resolver.h"
#include "uprof/util/result.h"

namespace uprof {

enum class ReturnHazard : uint8_t {
  EntryPoint,
  ReturnsTwice,
  NeverReturns,
  CxxCode,
  CInCxxProcess,
  StackSwitching,
  GoCode,
};

// Why a function's return probe could change the program, and where its returns are
// measured instead.
struct ReturnRisk {
  ReturnHazard hazard = ReturnHazard::CxxCode;
  // Its exit instructions (resolve/insn/exit_sites.h); empty, with the reason
  // (`exits_blocker`), when they cannot all be seen or the hazard allows none.
  std::vector<ExitSite> exits{};
  std::string exits_blocker{};
  // GoCode: where `goid` is in the file's runtime.g (resolve/dwarf/go_runtime.h), for the
  // entry probe's $goid; nullopt without DWARF.
  std::optional<uint32_t> goid_offset{};
  // CxxCode and CInCxxProcess: the language that unwinds ("C++", "Rust"); "" reads as C++.
  std::string language{};
  // "C++", "Rust": `language`, C++ when not known.
  std::string runtime_language() const;
  // What unwinds, for a person: "a C++ exception", "a Rust panic".
  std::string unwinding() const;
  // Whether --unsafe-returns may put a return probe there anyway (the hazards that depend
  // on what the program does at run time, not the three that always hold).
  bool overridable() const;
  // Why, for the function as a probe names it, in a clause: "a C++ exception (a Rust
  // panic) unwinding through f would abort the program under a return probe (...)", "_start is the
  // program's entry point: the top of its stack is argc, not a return address".
  std::string why(const std::string& function) const;
};

// The functions at risk, by (path, function_addr): the stage's answer, read by placement,
// the probe table and `uprof probe`.
struct ReturnRisks {
  std::map<std::pair<std::string, uint64_t>, ReturnRisk> by_function;
  // The process traits the risks were decided with (for the notes: why C code is at risk).
  ProcessTraits traits{};
  // The risk of the function `p` is the entry (or the return) of; nullptr when it has none,
  // or when `p` is no function entry (a point inside, a line, an inlined copy, USDT).
  const ReturnRisk* of(const ResolvedProbe& p) const;
  // Whether `p`'s function may have a return probe (with --unsafe-returns or not).
  bool return_probe_allowed(const ResolvedProbe& p, bool unsafe_returns) const;
};

// The function-entry probes at risk, each with why, and its exit instructions, or why
// they cannot all be seen, for processes with `traits`.
Result<ReturnRisks> unwind_risks(Resolver& resolver, const std::vector<ResolvedProbe>& probes,
                                 const ProcessTraits& traits = {});

// After placement: a function whose entry site is one of its exits (a function that is
// one jump, or whose entry moved onto its tail call) gets no exit probes: the two would
// fire at one instruction, in either order.
void drop_exits_at_entry(const std::vector<ResolvedProbe>& probes, ReturnRisks& risks);

// Pure: how the function's code (from its symbol) leaves: whether it calls out of itself (a
// call, a jump out of its code, an indirect jump), and whether it can leave at all (a
// return, a jump out, an indirect jump). Code that does not decode to its end is assumed
// to do both.
struct CodeFlow {
  bool calls_out = true;
  bool can_leave = true;
};
CodeFlow code_flow(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr);
// Pure: whether the function's code (from its symbol) calls out of itself.
bool calls_out(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr);
// Pure: whether the function's code can leave it: a return, a jump out of its code or an
// indirect jump (code that does not decode to its end is assumed to leave).
bool can_leave(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr);
// Pure: whether `name` is one of the functions that return twice or on another stack.
bool returns_twice(const std::string& name);

}  // namespace uprof
