// A probe point resolved down to what the kernel needs (a path and a file offset),
// with what a person needs to recognise it (function, offset in it, build-id).
//
// Every probe has the same core; what differs by kind is a variant, each kind holding
// only its own facts:
//
//   FunctionPoint  add, add+0x1c, add%return, BIN:0x1139[%return]   a function's code
//   LineSite       lines.c:24, loop_sum:3                            a source line's statement
//   InlinedSite    sq (inlined into squares)                         an inlined copy's entry
//   UsdtPoint      usdt:python:function__entry                       a USDT note
//
// The resolver makes them. Later stages return their own values rather than filling
// fields here: the return risk and exit sites (record/unwind_risk.h, ReturnRisks), the
// placement (record/site_placement.h, Placement); two still write into the core: the
// typed values (resolve/typed_values.h) and placement's move of vaddr/file_offset.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/model/recording.h"
#include "uprof/resolve/usdt/usdt_args.h"
#include "uprof/spec/value_request.h"

namespace uprof {

// FUNC, FUNC+OFF, FUNC%return, BIN:0xOFF, BIN:0xOFF%return: a function's entry, a point
// inside it (offset_in_function), or its return. A raw offset outside every symbol is one
// with no function ("").
struct FunctionPoint {
  bool is_return = false;
  // The probe is named after another function than its symbol's:
  // a compiler clone under its source function's name ("scale" at `scale.constprop.0`):
  // its clone marks, ".constprop.0";
  std::string clone{};
  // the implementation an IFUNC resolves to ("strlen" at `__strlen_evex`): how that
  // was known, "IFUNC, selected for this CPU".
  std::string ifunc_choice{};
};

// FILE:LINE, FUNC:LINE: a statement start of a source line, counted by name with no return
// of its own (ProbeInfo::site); `function` is the line as the spec wrote it, "lines.c:24".
struct LineSite {};

// An inlined copy of a function, counted by name with no return of its own: `function` is
// its name, "sq"; `into` the function whose code holds the copy, "squares".
struct InlinedSite {
  std::string into{};
  uint64_t die = 0;  // the copy's DW_TAG_inlined_subroutine: its parameters are the values
};

// usdt:PROVIDER:NAME: `function` is "PROVIDER:NAME", `$argN` names the note's N-th argument,
// and the probe has no return. `semaphore_offset` is the file offset of the probe's
// semaphore (the uprobe's ref_ctr_offset), 0 when none.
struct UsdtPoint {
  std::vector<UsdtArg> args{};
  uint64_t semaphore_offset = 0;
  // No values were named: the probe's defaults, without the arguments uprof cannot read
  // (resolution_notes names those).
  bool default_values = false;
};

using ProbePointKind = std::variant<FunctionPoint, LineSite, InlinedSite, UsdtPoint>;

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
  // What the spec asks to capture; after apply_typed_values, only what DWARF does not answer.
  std::vector<ValueRequest> values;
  // Typed values from DWARF (typed_values.h), captured before the raw ones:
  // parameters at the probe address, and the typed return value.
  std::vector<ValueSpec> typed_entry, typed_return;
  // The typed return value was not asked for by name ($retval): it is
  // captured when there is a return probe, and dropped quietly when not.
  bool typed_return_implicit = true;
  ProbePointKind kind{};

  template <class K>
  const K* as() const { return std::get_if<K>(&kind); }
  bool is_return() const { return as<FunctionPoint>() && as<FunctionPoint>()->is_return; }
  bool is_usdt() const { return as<UsdtPoint>() != nullptr; }
  // A point of code counted by name, with no return of its own: a line or an inlined copy.
  bool is_site() const { return as<LineSite>() || as<InlinedSite>(); }
  // At a function's first byte, as its entry (or its return): what has a return to
  // measure, is placed, and may be at risk. Not a line or an inlined copy there.
  bool at_function_entry() const { return as<FunctionPoint>() && offset_in_function == 0 && !function.empty(); }

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
