// The guesses group_probes makes for files older than format 1.6, which do not say what
// a probe does in which row (see probe_functions_guess.h).
#include "probe_functions_guess.h"

#include "uprof/model/probe_label.h"
#include "uprof/model/usdt_pair.h"
#include "uprof/resolve/elf/cxx_name.h"

namespace uprof {

std::string display_name(const ProbeInfo& p) {
  std::string label = probe_label(p.function, p.offset_in_function, p.file_offset);
  return p.function.empty() ? p.path + ":" + label : label;
}

std::vector<ProbePlace> guess_places(std::span<const ProbeInfo> probes, uint32_t slots) {
  std::vector<ProbePlace> out(slots);
  for (const ProbeInfo& p : probes) {
    ProbePlace& place = out[p.index];
    if (p.usdt) {
      const auto half = usdt_pair_half(p.function);
      place.role = !half ? RowRole::Usdt : half->second ? RowRole::UsdtDone : RowRole::UsdtStart;
      place.row = half ? half->first : p.function;
    } else if (p.site) {
      place = {.role = RowRole::Inlined, .row = p.function};
    } else if (p.kind == ProbeKind::Exit) {
      place = {.role = RowRole::Exit, .row = p.function};
    } else {
      place.role = p.offset_in_function != 0     ? RowRole::Instruction
                   : p.kind == ProbeKind::Entry ? RowRole::Entry
                                                : RowRole::Return;
      place.row = display_name(p);
    }
  }
  return out;
}

bool same_clone_family(std::string_view symbol, std::string_view other) {
  auto base_of = [](std::string_view s) { return s.substr(0, s.size() - clone_suffix(s).size()); };
  return symbol != other && base_of(symbol) == base_of(other);
}

}  // namespace uprof
