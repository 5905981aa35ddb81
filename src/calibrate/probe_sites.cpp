#include "uprof/calibrate/probe_sites.h"
#include "uprof/model/probe_label.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "uprof/analyse/duration_format.h"
#include "uprof/analyse/probe_functions.h"

namespace uprof {

std::vector<ProbeSite> classify_probe_sites(const std::vector<ProbeInfo>& probes, Arch arch) {
  std::vector<ProbeSite> sites;
  std::set<std::pair<std::string, uint64_t>> seen;
  for (const auto& p : probes) {
    if (!seen.insert({p.path, p.file_offset}).second) continue;
    auto info = classify_probe_site(p.path, arch, p.file_offset);
    if (!info) continue;
    sites.push_back({probe_label(p.function, p.offset_in_function, p.file_offset), std::move(info).value(), p.path,
                     p.file_offset});
  }
  return sites;
}

namespace {

// Where `p`'s instruction is in `sites`; none when its file could not be read.
std::optional<std::size_t> site_of(const std::vector<ProbeSite>& sites, const ProbeInfo& p) {
  for (std::size_t i = 0; i < sites.size(); i++)
    if (sites[i].path == p.path && sites[i].file_offset == p.file_offset) return i;
  return std::nullopt;
}

const ClassCost* class_cost_of(const EngineCosts& t, const ProbeInfo& p, const std::vector<ProbeSite>& sites) {
  auto i = site_of(sites, p);
  return i ? t.find(sites[*i].info.cls) : nullptr;
}

std::string cost_text(uint64_t lo, uint64_t hi) {
  if (!hi) return "";
  if (lo == hi) return "+" + format_duration(lo) + " a call";
  return "+" + format_duration(lo) + " to +" + format_duration(hi) + " a call";
}

}  // namespace

std::string render_probe_sites(const std::vector<ProbeSite>& sites, std::size_t max_listed) {
  if (sites.empty()) return "";
  std::string s = "uprof: first instructions: ";
  if (sites.size() <= max_listed) {
    for (std::size_t i = 0; i < sites.size(); i++) {
      s += (i ? ", " : "") + sites[i].label + " ";
      if (!sites[i].moved_from.empty()) s += sites[i].moved_from + " ";
      s += describe(sites[i].info);
      if (sites[i].cost_ns) s += " " + cost_text(sites[i].cost_ns, sites[i].cost_ns);
    }
    return s;
  }
  std::array<std::size_t, kInsnClasses> n{};
  std::array<uint64_t, kInsnClasses> lo{}, hi{};
  for (const auto& site : sites) {
    auto c = static_cast<std::size_t>(site.info.cls);
    n[c]++;
    if (!site.cost_ns) continue;
    lo[c] = lo[c] ? std::min(lo[c], site.cost_ns) : site.cost_ns;
    hi[c] = std::max(hi[c], site.cost_ns);
  }
  bool first = true;
  for (std::size_t c = 0; c < kInsnClasses; c++) {
    if (!n[c]) continue;
    s += (first ? "" : ", ") + std::to_string(n[c]) + " " + std::string(to_string(static_cast<InsnClass>(c)));
    if (hi[c]) s += " (" + cost_text(lo[c], hi[c]) + ")";
    first = false;
  }
  return s + " ('uprof probe BIN FUNC' shows each)";
}

void set_site_costs(std::vector<ProbeSite>& sites, const std::vector<ProbeInfo>& probes,
                    const std::vector<uint64_t>& inside_costs) {
  for (std::size_t i = 0; i < probes.size() && i < inside_costs.size(); i++)
    if (auto s = site_of(sites, probes[i])) sites[*s].cost_ns = std::max(sites[*s].cost_ns, inside_costs[i]);
}

std::vector<uint64_t> probe_costs_for(const EngineCosts& t, const std::vector<ProbeInfo>& probes,
                                      const std::vector<ProbeSite>& sites) {
  std::vector<uint64_t> out;
  out.reserve(probes.size());
  for (const auto& p : probes) {
    const ClassCost* cc = class_cost_of(t, p, sites);
    out.push_back(cc ? cc->inside_ns : 0);
  }
  return out;
}

std::vector<uint64_t> probe_hit_costs_for(const EngineCosts& t, const std::vector<ProbeInfo>& probes,
                                          const std::vector<ProbeSite>& sites) {
  ProbeFunctions fns = group_probes(probes);
  std::vector<uint64_t> out;
  out.reserve(probes.size());
  for (const auto& p : probes) {
    const ClassCost* cc = class_cost_of(t, p, sites);
    double ns = 0;
    if (cc) {
      ProbeRole role = fns.role(p.index);
      const uint32_t fn = p.index < fns.function_of_probe.size() ? fns.function_of_probe[p.index] : kNoFunction;
      // A function measured at its exits has no return trampoline: each of its probes
      // is a plain uprobe on its own instruction.
      const bool at_exits = fn != kNoFunction && fns.functions[fn].at_exits;
      ns = at_exits                                                  ? cc->entry_ns
           : role == ProbeRole::Entry || role == ProbeRole::Return ? cc->call_ns / 2
           : p.kind == ProbeKind::Return                          ? cc->return_ns
                                                                  : cc->entry_ns;
    }
    out.push_back(static_cast<uint64_t>(std::llround(ns)));
  }
  return out;
}

}  // namespace uprof
