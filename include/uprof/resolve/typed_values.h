// DWARF parameters -> the value slots a probe captures: `uprof record -e add`
// captures `a` and `b` by name and type, and the typed return value.
//
//   -e add              every parameter that can be captured, and the return value
//   -e 'add(a)'         `a` only, and the return value
//   -e 'add a'          the same, in perf probe's spelling
//   -e 'add $params'    every parameter, no return value
//   -e 'add %di'        raw registers only: no DWARF
//   --no-args           nothing: calls and latency only
//
// A parameter becomes one 8-byte slot per piece (a 16-byte struct in rdi:rsi is
// two; one passed in memory is split into 8-byte slots, at most
// kMaxSlotsPerValue); a parameter DWARF cannot place becomes an Unavailable
// slot carrying the reason, so the report prints `<optimized out>`, never a
// wrong number.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "uprof/resolve/dwarf/dwarf_index.h"
#include "uprof/resolve/image.h"
#include "uprof/resolve/dwarf/param_location.h"
#include "uprof/resolve/resolved_probe.h"
#include "uprof/model/recording.h"
#include "uprof/util/result.h"

namespace uprof {

inline constexpr std::size_t kMaxSlotsPerValue = 8;  // 64 bytes of a struct

// Pure: one parameter (or the return value, `for_return`) as value slots.
std::vector<ValueSpec> param_value_specs(const ParamLocation& p, Arch arch, bool for_return = false);
// Pure: the typed return value at a return probe; empty for void.
std::vector<ValueSpec> return_value_specs(const FunctionParams& f, Arch arch);

// Finds function parameters with DWARF, building each file's index once.
class TypedValueResolver {
 public:
  // The parameters of the function `p` is in, at p's address; nullopt when
  // the file has no DWARF for that function.
  Result<std::optional<FunctionParams>> params(const Image& img, const ResolvedProbe& p);
  // The DWARF params() read for `img` (nullptr before, or without DWARF).
  Dwarf* dwarf(const Image& img) const {
    auto it = indexes_.find(&img);
    return it == indexes_.end() ? nullptr : it->second.dwarf();
  }

 private:
  std::map<const Image*, DwarfIndex> indexes_;
};

// Replaces the DWARF tokens of `p.values` with typed values (p.typed_entry,
// p.typed_return); with no tokens at all, and `all_by_default`, every
// parameter and the return value. Without DWARF, default capture quietly
// captures nothing (a line goes to `notes`), and a parameter asked for by
// name is an error naming the file and the function.
Status apply_typed_values(TypedValueResolver& dwarf, const Image& img, ResolvedProbe& p, bool all_by_default,
                          std::vector<std::string>& notes);

}  // namespace uprof
