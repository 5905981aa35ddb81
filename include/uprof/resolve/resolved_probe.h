// A probe point resolved down to what the kernel needs (a path and a file offset),
// with what a person needs to recognise it (function, offset in it, build-id).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/model/recording.h"
#include "uprof/resolve/insn/exit_sites.h"
#include "uprof/resolve/usdt/usdt_args.h"
#include "uprof/spec/value_request.h"

namespace uprof {

struct ResolvedProbe {
  std::string spec;               // the -e text it came from
  std::string path;               // absolute path of the file to probe
  std::string build_id;           // lowercase hex, "" when the file has none
  Arch arch = Arch::X86_64;
  std::string function;           // display name (demangled); "" for a raw offset outside any function
  std::string symbol;             // the ELF symbol name
  uint64_t function_addr = 0;     // link-time address of the function
  uint64_t function_size = 0;
  uint64_t offset_in_function = 0;
  uint64_t vaddr = 0;             // link-time address of the probed instruction
  uint64_t file_offset = 0;       // what perf_event_attr.config2 takes
  bool is_return = false;
  // What the spec asks to capture; after apply_typed_values, only what DWARF does not answer.
  std::vector<ValueRequest> values;
  // Typed values from DWARF (typed_values.h), captured before the raw ones:
  // parameters at the probe address, and the typed return value.
  std::vector<ValueSpec> typed_entry, typed_return;
  // The typed return value was not asked for by name ($retval): it is
  // captured when there is a return probe, and dropped quietly when not.
  bool typed_return_implicit = true;
  // Why a return probe on this function could abort the program (record/unwind_risk.h);
  // "" when it cannot.
  std::string return_risk;
  // For a function at risk: its exit instructions, where its returns are measured
  // instead (resolve/insn/exit_sites.h); empty, with the reason, when they cannot all be seen.
  std::vector<ExitSite> exits{};
  std::string exits_blocker{};
  // A USDT probe (usdt:PROVIDER:NAME): `function` is "PROVIDER:NAME", `$argN` names
  // the note's N-th argument, and the probe has no return. `semaphore_offset` is the
  // file offset of the probe's semaphore (the uprobe's ref_ctr_offset), 0 when none.
  bool usdt = false;
  std::vector<UsdtArg> usdt_args{};
  uint64_t semaphore_offset = 0;
  // The probe is named after another function than its symbol's:
  // a compiler clone under its source function's name ("scale" at `scale.constprop.0`):
  // its clone marks, ".constprop.0";
  std::string clone{};
  // the implementation an IFUNC resolves to ("strlen" at `__strlen_evex`): how that
  // was known, "IFUNC, selected for this CPU".
  std::string ifunc_choice{};
  // A point of code counted by name, with no return of its own (ProbeInfo::site): a
  // source line (`function` is "lines.c:24", as the spec wrote it) or an inlined copy
  // of a function (`function` is its name, "sq"; `inlined_into` the function whose code
  // holds the copy, "squares").
  bool site = false;
  std::string inlined_into{};
  uint64_t inlined_die = 0;       // the copy's DW_TAG_inlined_subroutine: its parameters are the values

  // "add", "loop_sum+0x1c", "add%return", "0x1139", "lines.c:24".
  std::string label() const;
  // The label and what the probe really is, when its symbol is another's:
  // "scale [clone .constprop.0]", "strlen -> __strlen_evex (IFUNC, selected for this CPU)",
  // "sq (inlined into squares+0x15)", "lines.c:24 (in loop_sum+0x10)".
  std::string describe() const;
};

// What a person should know about how specs resolved, one line each: the implementation
// each IFUNC selects, and the functions probed at more than one entry point (clones).
//   strlen -> __strlen_evex (IFUNC, selected for this CPU)
//   ns::Klass::scale(int, int): 2 entry points, the function and its clone .constprop.0, counted as one function
//   twice: 3 sites: 1 out-of-line, 2 inlined (an inlined copy counts calls: it has no return to time)
//   lines.c:23: 2 sites (loop_sum, loop_sum+0x15)
std::vector<std::string> resolution_notes(const std::vector<ResolvedProbe>& probes);

}  // namespace uprof
