#include "uprof/resolve/resolved_probe.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "uprof/model/probe_label.h"

namespace uprof {

std::string ResolvedProbe::label() const {
  return probe_label(function, offset_in_function, file_offset) + (is_return ? "%return" : "");
}

std::string ResolvedProbe::describe() const {
  if (!ifunc_choice.empty()) return label() + " -> " + symbol + " (" + ifunc_choice + ")";
  if (!clone.empty()) return label() + " [clone " + clone + "]";
  return label();
}

std::vector<std::string> resolution_notes(const std::vector<ResolvedProbe>& probes) {
  std::vector<std::string> notes;
  // (spec, path, function) -> its entry points' clone marks ("" for the function itself)
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> entries;
  std::vector<std::tuple<std::string, std::string, std::string>> order;
  for (const ResolvedProbe& p : probes) {
    if (!p.ifunc_choice.empty()) {
      std::string note = p.function + " -> " + p.symbol + " (" + p.ifunc_choice + ")";
      if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(std::move(note));
    }
    if (p.usdt || p.is_return || p.offset_in_function) continue;
    auto key = std::make_tuple(p.spec, p.path, p.function);
    auto [it, fresh] = entries.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(p.clone);
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
  return notes;
}

}  // namespace uprof
