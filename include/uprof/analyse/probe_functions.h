// Which probes belong to which function, and how each probe takes part in pairing.
// A data file of format 1.6 says what each probe does in which report row (ProbeInfo::role
// and ::row, written by the recorder); for older files the same is guessed from the
// names and flags, as below. The example tables show the guesses; a 1.6 file's roles
// and rows say the same of them.
//
// An entry probe and a return probe belong to the same function when they have
// the same `path` and the same function entry address (vaddr - offset_in_function),
// both at offset_in_function 0. Example probe table:
//   #0 Entry  parse       ./app  vaddr 0x1139 off 0     -> function 0 "parse" (paired)
//   #1 Return parse       ./app  vaddr 0x1139 off 0     -> function 0
//   #2 Entry  parse+0x10  ./app  vaddr 0x1149 off 0x10  -> function 1 "parse+0x10" (hits only:
//                                                          a mid-function probe never pairs)
//   #3 Entry  main        ./app  vaddr 0x1040 off 0     -> function 2 "main" (hits only: no return probe)
// A raw offset outside every symbol (a stripped binary) is a function entry when it has
// a return probe (BIN:0xOFF%return), and pairs like one; otherwise it counts hits.
// A second entry (or return) probe at an address that already has one is its
// own hits-only function "parse [probe #4]": pairing two entry hits of one call
// against one return would leave a phantom open frame, and merging their values
// is the recorder's job (it should emit one probe with both value lists).
//
// Exit probes (one per exit instruction of a function measured at its exits) belong
// to the entry probe of the same path and symbol (the entry site may have moved a few
// bytes off the symbol, and an exit may lie in a split-off `.cold` part). All of them
// are the function's return side; `return_probe` is the first, for the value layout
// they share.
//   #4 Entry  inner  ./app  vaddr 0x1270 off 0      -> function 3 "inner" (paired, exits)
//   #5 Exit   inner  ./app  vaddr 0x1276 off 0x6    -> function 3 (a tail call: jmp leaf)
//   #6 Exit   inner  ./app  vaddr 0x12a0 off 0x30   -> function 3 (ret)
//
// The entry points of one source function, which the resolver names alike (gcc's clones
// `scale.constprop.0` and `scale` are both "scale"), stay functions of their own for
// pairing, and share one report row (`row`): same file, same name, distinct symbols of
// one clone family. Two `static helper` of two source files have one symbol name and are
// not clones: two rows. (The row adds up a clone's values where they match its own by
// name and type: analyse/aggregate.h.)
//   #9  Entry  scale  ./app  symbol scale              -> function 5 "scale"
//   #10 Entry  scale  ./app  symbol scale.constprop.0  -> function 6 "scale", row 5
//
// Sites (ProbeInfo::site: a source line's statements, a function's inlined copies) group
// by name like USDT probes, and count hits; the inlined copies of a function join the row
// of its out-of-line copy, so that `-e twice` reports every call of twice on one row:
//   #11 Entry       twice  ./app  vaddr 0x1210        -> function 7 "twice" (paired)
//   #12 Return      twice  ./app  vaddr 0x1210        -> function 7
//   #13 Entry site  twice  ./app  vaddr 0x10ab        -> function 8 "twice" (hits), row 7
//   #14 Entry site  twice  ./app  vaddr 0x10e4        -> function 8
//
// USDT probes (ProbeInfo::usdt) group by name, not address: every site of one
// PROVIDER:NAME in a file is one function. Two names of one provider that make a pair,
// X__start/X__done, X__entry/X__return or X__begin/X__end, are one paired function
// "PROVIDER:X" when both are in the table: the first opens its calls, the second
// returns them (both are plain uprobes: no return trampoline, no nesting limit).
//   #7 Entry usdt  python:function__entry   -> function 4 "python:function" (paired,
//   #8 Entry usdt  python:function__return  -> function 4    keyed by $arg1 and $arg2)
// `key` lists the value slots a return must match in its entry (from pair_key, in
// order, where both sides hold the same kind of value): a python function's return
// closes the innermost open call of the same file and function name.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <span>
#include <string>
#include <vector>

#include "uprof/model/recording.h"
#include "uprof/model/usdt_pair.h"  // usdt_pair_half, for this file's users

namespace uprof {

inline constexpr uint32_t kNoProbe = UINT32_MAX;
inline constexpr uint32_t kNoFunction = UINT32_MAX;

enum class ProbeRole : uint8_t {
  Unknown = 0,  // no probe has this index (an event naming it is malformed)
  Entry,        // the entry probe of a function that also has a return probe
  Return,       // the return probe of such a function
  HitOnly,      // entry-only or return-only function, mid-function probe, duplicate
};

struct FunctionInfo {
  std::string name{};             // "parse", "parse+0x10", "./app:0x1139" outside every function
  std::string path{};
  uint64_t entry_vaddr = 0;     // vaddr - offset_in_function
  uint32_t entry_probe = kNoProbe;
  uint32_t return_probe = kNoProbe;
  // The values a call captures: the entry probe's, then the return probe's.
  std::vector<ValueSpec> values{};
  uint16_t return_values_at = 0;  // index in `values` of the return probe's first value
  // Its returns are Exit probes: no return trampoline, so no kernel nesting limit, and
  // its samples carry the stack pointer (Event::frame).
  bool at_exits = false;
  // A USDT pair (see above), and the (entry value, return value) slots that must be
  // equal, each an index into its own probe's values.
  bool usdt = false;
  std::vector<std::pair<uint16_t, uint16_t>> key{};
  // The sites of a source line or of a function's inlined copies (ProbeInfo::site).
  bool site = false;
  // The function whose report row this one's calls join (a clone of the same source
  // function, see above); kNoFunction for its own row.
  uint32_t row = kNoFunction;

  bool paired() const { return entry_probe != kNoProbe && return_probe != kNoProbe; }
};

struct ProbeFunctions {
  std::vector<FunctionInfo> functions;      // in order of first appearance in the probe table
  // Indexed by ProbeInfo::index.
  std::vector<uint32_t> function_of_probe;  // kNoFunction for an unknown index
  std::vector<ProbeRole> role_of_probe;
  std::vector<uint16_t> first_slot_of_probe;  // where the probe's values start in FunctionInfo::values
  std::vector<bool> offcpu_of_probe;          // its samples carry off-CPU totals (ProbeInfo::offcpu)

  ProbeRole role(uint32_t probe) const {
    return probe < role_of_probe.size() ? role_of_probe[probe] : ProbeRole::Unknown;
  }
};

// Groups by each probe's recorded role and row (ProbeInfo::role, ::row; format 1.6)
// when every probe has one; otherwise (files of 1.0-1.5, tables built by hand) by what
// the names and flags suggest (src/analyse/probe_functions_guess.h). Both give the
// grouping described above.
ProbeFunctions group_probes(std::span<const ProbeInfo> probes);

}  // namespace uprof
