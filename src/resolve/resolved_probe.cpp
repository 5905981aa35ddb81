#include "uprof/resolve/resolved_probe.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "uprof/model/probe_label.h"
#include "uprof/resolve/elf/cxx_name.h"

namespace uprof {
namespace {

// Where a site is, as a person reads it: "squares+0x15", "run(int)+0x10" (not "_Z3runi").
std::string site_place(const ResolvedProbe& p) {
  const std::string d = demangle(p.symbol);
  return probe_label(d.empty() ? p.symbol : d, p.offset_in_function, p.file_offset);
}

}  // namespace

std::string ResolvedProbe::label() const {
  if (is_site()) return function;
  return probe_label(function, offset_in_function, file_offset) + (is_return() ? "%return" : "");
}

std::string ResolvedProbe::describe() const {
  if (const FunctionPoint* f = as<FunctionPoint>()) {
    if (!f->ifunc_choice.empty()) return label() + " -> " + symbol + " (" + f->ifunc_choice + ")";
    if (!f->clone.empty()) return label() + " [clone " + f->clone + "]";
  }
  if (as<InlinedSite>()) return label() + " (inlined into " + site_place(*this) + ")";
  if (as<LineSite>() && !symbol.empty()) return label() + " (in " + site_place(*this) + ")";
  return label();
}

namespace {

// "twice: 3 sites: 1 out-of-line, 2 inlined (...)" for a function with inlined copies;
// "lines.c:23: 2 sites (loop_sum, loop_sum+0x15)" for a line with more than one.
void site_notes(const std::vector<ResolvedProbe>& probes, std::vector<std::string>& notes) {
  struct Count {
    std::size_t out_of_line = 0, inlined = 0;
    std::vector<std::string> where;
    bool line = false;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Count> counts;
  std::vector<std::tuple<std::string, std::string, std::string>> order;
  for (const ResolvedProbe& p : probes) {
    if (p.is_usdt() || p.is_return()) continue;
    auto key = std::make_tuple(p.spec, p.path, p.function);
    auto [it, fresh] = counts.try_emplace(key);
    if (fresh) order.push_back(key);
    Count& c = it->second;
    if (p.as<LineSite>()) c.line = true;
    (p.as<InlinedSite>() ? c.inlined : c.out_of_line)++;
    c.where.push_back(site_place(p));
  }
  for (const auto& key : order) {
    const Count& c = counts[key];
    const std::string& name = std::get<2>(key);
    if (c.inlined) {
      notes.push_back(name + ": " + std::to_string(c.out_of_line + c.inlined) + " site" +
                      (c.out_of_line + c.inlined > 1 ? "s" : "") + ": " + std::to_string(c.out_of_line) +
                      " out-of-line, " + std::to_string(c.inlined) +
                      " inlined (an inlined copy counts calls: it has no return to time)");
    } else if (c.line && c.where.size() > 1) {
      std::string list;
      for (std::size_t i = 0; i < c.where.size() && i < 8; i++) list += (i ? ", " : "") + c.where[i];
      if (c.where.size() > 8) list += ", ...";
      notes.push_back(name + ": " + std::to_string(c.where.size()) + " sites (" + list + ")");
    }
  }
}

}  // namespace

std::vector<std::string> resolution_notes(const std::vector<ResolvedProbe>& probes) {
  std::vector<std::string> notes;
  // USDT arguments uprof cannot read, left out of a probe's default values: once per probe name.
  for (const ResolvedProbe& p : probes) {
    const UsdtPoint* u = p.as<UsdtPoint>();
    if (!u || !u->default_values) continue;
    for (std::size_t i = 0; i < u->args.size(); i++) {
      const std::optional<std::string> why = usdt_arg_unreadable(u->args[i]);
      if (!why) continue;
      std::string note = "usdt: " + p.function + ": argument " + std::to_string(i + 1) + " (" + u->args[i].text +
                         ") is not recorded: " + *why + "; its other arguments are";
      if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(std::move(note));
    }
  }
  // (spec, path, function) -> its entry points' clone marks ("" for the function itself)
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> entries;
  std::vector<std::tuple<std::string, std::string, std::string>> order;
  for (const ResolvedProbe& p : probes) {
    const FunctionPoint* f = p.as<FunctionPoint>();
    if (!f) continue;
    if (!f->ifunc_choice.empty()) {
      std::string note = p.function + " -> " + p.symbol + " (" + f->ifunc_choice + ")";
      if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(std::move(note));
    }
    if (f->is_return || p.offset_in_function) continue;
    auto key = std::make_tuple(p.spec, p.path, p.function);
    auto [it, fresh] = entries.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(f->clone);
  }
  for (const auto& key : order) {
    const std::vector<std::string>& marks = entries[key];
    const std::string& function = std::get<2>(key);
    if (marks.size() == 1 && marks[0].empty()) continue;
    std::vector<std::string> clones;
    for (const auto& m : marks)
      if (!m.empty()) clones.push_back(m);
    std::string list;
    for (std::size_t i = 0; i < clones.size(); i++) list += (i ? ", " : "") + clones[i];
    const bool original = clones.size() < marks.size();
    if (marks.size() == 1) {
      notes.push_back(function + ": probed at its clone " + list + " (gcc's copy; the file has no other)");
      continue;
    }
    std::string note = function + ": " + std::to_string(marks.size()) + " entry points, " +
                       (original ? "the function and its clone" : "its clone") + (clones.size() > 1 ? "s " : " ") + list +
                       ", counted as one function";
    // gcc's partial inlining: callers run the function's first test inline and call the
    // .part for the rest; the function itself, for callers that did not inline it, jumps there.
    if (original && std::any_of(clones.begin(), clones.end(), [](const std::string& m) { return m.find(".part") != std::string::npos; }))
      note += " (a .part is the code after the function's first test, which callers inline: calls that test settles "
              "there are not seen, and a call through the function itself into its .part counts twice)";
    notes.push_back(std::move(note));
  }
  site_notes(probes, notes);
  return notes;
}

}  // namespace uprof
