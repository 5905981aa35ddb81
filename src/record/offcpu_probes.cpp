#include "uprof/record/offcpu_probes.h"

#include <map>
#include <string>
#include <utility>

namespace uprof {
namespace {

OffCpuRole role_of(RowRole r) {
  switch (r) {
    case RowRole::Entry: return OffCpuRole::Enter;
    case RowRole::Return:
    case RowRole::Exit: return OffCpuRole::Leave;
    default: return OffCpuRole::None;
  }
}

}  // namespace

void mark_offcpu_probes(ProbeTable& table) {
  // Per row (its file and name): whether it has an entry and whether it has a return or exit.
  std::map<std::pair<std::string, std::string>, std::pair<bool, bool>> ends;
  for (const ProbeInfo& p : table.probes) {
    auto& e = ends[{p.path, p.row}];
    if (role_of(p.role) == OffCpuRole::Enter) e.first = true;
    if (role_of(p.role) == OffCpuRole::Leave) e.second = true;
  }
  for (std::size_t i = 0; i < table.probes.size(); i++) {
    ProbeInfo& p = table.probes[i];
    const auto& e = ends[{p.path, p.row}];
    const OffCpuRole role = e.first && e.second ? role_of(p.role) : OffCpuRole::None;
    p.offcpu = role != OffCpuRole::None;
    if (i < table.capture.probes.size()) table.capture.probes[i].offcpu = role;
  }
}

}  // namespace uprof
