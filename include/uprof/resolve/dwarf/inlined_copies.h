// The inlined copies of functions: each DW_TAG_inlined_subroutine of the DWARF, with
// the function it is a copy of (DW_AT_abstract_origin) and the address its code is
// entered at. `-e sq` probes these as well as sq's out-of-line copy, if it has one:
//
//   DW_TAG_inlined_subroutine
//     DW_AT_abstract_origin  -> DW_TAG_subprogram "sq" (DW_AT_inline)
//     DW_AT_entry_pc         0x1285 <squares+0x15>      the entry, when given
//     DW_AT_ranges           [0x1285, 0x128a) ...       else low_pc, else the first range
//
// A copy has no return of its own (its code falls through into its caller's), so it
// is an entry-only site: it counts calls, never latency.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "uprof/util/result.h"

typedef struct Dwarf Dwarf;

namespace uprof {

struct InlinedCopy {
  std::string name;           // the function's DW_AT_name, through its abstract origin: "sq"
  std::string linkage_name;   // DW_AT_linkage_name when there is one (C++)
  std::string demangled;      // of the linkage name: "ns::Klass::scaled(int) const"; "" when not C++
  uint64_t entry = 0;         // link-time address where the copy's code is entered
  uint64_t die_offset = 0;    // the DW_TAG_inlined_subroutine
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // its code: [start, end), for FUNC:LINE
};

class InlinedCopies {
 public:
  // Every inlined copy in `dbg` (nullptr: none). Copies whose code the linker dropped
  // (entry 0) are left out.
  static Result<InlinedCopies> build(Dwarf* dbg, const std::string& path_for_messages);
  // The copies of the function named `name`, by address: its DW_AT_name or linkage
  // name, else a C++ name as people write it ("ns::Klass::scaled", "ns::Klass::scaled(int)":
  // resolve/elf/cxx_name.h), matched as the function table matches symbols.
  std::vector<const InlinedCopy*> named(std::string_view name) const;
  // The name a copy is reported under: its demangled name, else its DW_AT_name.
  static const std::string& display_name(const InlinedCopy& c) { return c.demangled.empty() ? c.name : c.demangled; }
  std::size_t size() const { return copies_.size(); }

 private:
  std::vector<InlinedCopy> copies_;  // sorted by name, then entry
};

}  // namespace uprof
