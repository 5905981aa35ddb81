#include "uprof/analyse/probe_functions.h"
#include "uprof/model/probe_label.h"
#include "uprof/resolve/elf/cxx_name.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <set>
#include <sstream>
#include <utility>

namespace uprof {

namespace {

std::string display_name(const ProbeInfo& p) {
  // A raw offset outside every function is named with its file, as the spec named it.
  std::string label = probe_label(p.function, p.offset_in_function, p.file_offset);
  return p.function.empty() ? p.path + ":" + label : label;
}

// The clones of one source function share the row of the first of them (see the header).
void join_clone_rows(ProbeFunctions& out, std::span<const ProbeInfo> probes) {
  std::vector<const ProbeInfo*> by_index(out.function_of_probe.size(), nullptr);
  for (const ProbeInfo& p : probes) by_index[p.index] = &p;
  auto symbol_of = [&](const FunctionInfo& f) -> std::string_view {
    const uint32_t probe = f.entry_probe != kNoProbe ? f.entry_probe : f.return_probe;
    return probe == kNoProbe || !by_index[probe] ? std::string_view() : std::string_view(by_index[probe]->symbol);
  };
  auto base_of = [](std::string_view symbol) { return symbol.substr(0, symbol.size() - clone_suffix(symbol).size()); };
  // (path, name) -> the functions that have their own row: `-e 'libc:*'` makes thousands.
  std::map<std::pair<std::string_view, std::string_view>, std::vector<uint32_t>> rows;
  for (uint32_t fn = 0; fn < out.functions.size(); fn++) {
    FunctionInfo& f = out.functions[fn];
    const std::string_view symbol = symbol_of(f);
    if (f.usdt || symbol.empty()) continue;
    std::vector<uint32_t>& same_name = rows[{f.path, f.name}];
    for (uint32_t other : same_name) {
      const FunctionInfo& o = out.functions[other];
      const std::string_view other_symbol = symbol_of(o);
      if (other_symbol != symbol && base_of(other_symbol) == base_of(symbol)) {
        f.row = other;
        break;
      }
    }
    if (f.row == kNoFunction) same_name.push_back(fn);
  }
}

}  // namespace

std::optional<std::pair<std::string, bool>> usdt_pair_half(std::string_view function) {
  static constexpr std::pair<std::string_view, std::string_view> kPairs[] = {
      {"__start", "__done"}, {"__entry", "__return"}, {"__begin", "__end"}};
  for (const auto& [open, close] : kPairs)
    for (std::string_view suffix : {open, close})
      if (function.size() > suffix.size() && function.substr(function.size() - suffix.size()) == suffix)
        return std::pair<std::string, bool>{std::string(function.substr(0, function.size() - suffix.size())),
                                            suffix == close};
  return std::nullopt;
}

ProbeFunctions group_probes(std::span<const ProbeInfo> probes) {
  ProbeFunctions out;
  uint32_t slots = 0;
  for (const ProbeInfo& p : probes) slots = std::max(slots, p.index + 1);
  out.function_of_probe.assign(slots, kNoFunction);
  out.role_of_probe.assign(slots, ProbeRole::Unknown);
  out.first_slot_of_probe.assign(slots, 0);

  auto add_function = [&](const ProbeInfo& p, std::string name) {
    out.functions.push_back(FunctionInfo{
        .name = std::move(name),
        .path = p.path,
        .entry_vaddr = p.vaddr - p.offset_in_function,
    });
    return static_cast<uint32_t>(out.functions.size() - 1);
  };
  auto attach = [&](uint32_t fn, const ProbeInfo& p) {
    FunctionInfo& f = out.functions[fn];
    (p.kind == ProbeKind::Entry ? f.entry_probe : f.return_probe) = p.index;
    f.at_exits |= p.kind == ProbeKind::Exit;
    out.function_of_probe[p.index] = fn;
  };

  // A raw offset outside every symbol is a function entry when the user put a return
  // probe on it (BIN:0xOFF%return): a stripped binary's function.
  std::set<std::pair<std::string_view, uint64_t>> raw_entries;
  for (const ProbeInfo& p : probes)
    if (p.function.empty() && p.kind == ProbeKind::Return) raw_entries.insert({p.path, p.vaddr});
  auto is_entry = [&](const ProbeInfo& p) {
    return !p.usdt && !p.site && p.kind != ProbeKind::Exit && p.offset_in_function == 0 &&
           (!p.function.empty() || raw_entries.count({p.path, p.vaddr}));
  };

  // Pass 1: probes at a function's entry address, grouped by (path, address).
  // A map, not a scan: `-e 'libc:*'` makes thousands of probes.
  std::map<std::pair<std::string_view, uint64_t>, uint32_t> at_entry;
  for (const ProbeInfo& p : probes) {
    if (!is_entry(p)) continue;
    auto [it, fresh] = at_entry.try_emplace({p.path, p.vaddr}, 0);
    if (fresh) {
      it->second = add_function(p, display_name(p));
      attach(it->second, p);
      continue;
    }
    const FunctionInfo& same = out.functions[it->second];
    const uint32_t slot = p.kind == ProbeKind::Entry ? same.entry_probe : same.return_probe;
    if (slot == kNoProbe) {
      attach(it->second, p);
    } else {
      std::ostringstream name;
      name << display_name(p) << " [probe #" << p.index << "]";
      attach(add_function(p, name.str()), p);
    }
  }
  // Pass 2: exit probes join the entry of their function (without one, the exits of a
  // function count hits together, under its name); mid-function probes and (other) raw
  // offsets outside functions count hits.
  std::map<std::pair<std::string_view, std::string_view>, uint32_t> exits_alone;
  std::map<std::pair<std::string_view, std::string_view>, uint32_t> entry_of_symbol;  // the first
  for (const ProbeInfo& p : probes) {
    if (p.kind != ProbeKind::Entry || !is_entry(p)) continue;
    const auto it = at_entry.find({p.path, p.vaddr});
    if (it != at_entry.end() && out.functions[it->second].entry_probe == p.index)
      entry_of_symbol.try_emplace({p.path, p.symbol}, it->second);
  }
  for (const ProbeInfo& p : probes) {
    if (is_entry(p) || p.usdt || p.site) continue;
    if (p.kind == ProbeKind::Exit) {
      const auto found = entry_of_symbol.find({p.path, p.symbol});
      const uint32_t owner = found == entry_of_symbol.end() ? kNoFunction : found->second;
      if (owner != kNoFunction) {
        FunctionInfo& f = out.functions[owner];
        if (f.return_probe == kNoProbe) f.return_probe = p.index;
        f.at_exits = true;
        out.function_of_probe[p.index] = owner;
        continue;
      }
      auto [alone, fresh] = exits_alone.try_emplace({p.path, p.symbol}, 0);
      if (fresh) alone->second = add_function(p, p.function);
      out.function_of_probe[p.index] = alone->second;
      if (out.functions[alone->second].return_probe == kNoProbe) out.functions[alone->second].return_probe = p.index;
      out.functions[alone->second].at_exits = true;
      continue;
    }
    attach(add_function(p, display_name(p)), p);
  }

  // Pass 3: USDT probes, by name; a pair's two names as one function.
  std::vector<bool> closes(slots, false);
  std::set<std::tuple<std::string_view, std::string, bool>> halves;  // (path, "PROVIDER:X", closes)
  for (const ProbeInfo& p : probes)
    if (auto h = p.usdt ? usdt_pair_half(p.function) : std::nullopt) halves.insert({p.path, h->first, h->second});
  std::map<std::pair<std::string_view, std::string>, uint32_t> usdt_functions;
  for (const ProbeInfo& p : probes) {
    if (!p.usdt && !p.site) continue;
    std::string name = p.function;
    if (auto h = p.usdt ? usdt_pair_half(p.function) : std::nullopt; h && halves.count({p.path, h->first, !h->second})) {
      name = h->first;
      closes[p.index] = h->second;
    }
    auto [it, fresh] = usdt_functions.try_emplace({p.path, name}, 0);
    if (fresh) {
      it->second = add_function(p, name);
      out.functions[it->second].usdt = p.usdt;
      out.functions[it->second].site = p.site;
    }
    FunctionInfo& f = out.functions[it->second];
    uint32_t& first = closes[p.index] ? f.return_probe : f.entry_probe;  // the first site's probe
    if (first == kNoProbe) first = p.index;
    out.function_of_probe[p.index] = it->second;
  }

  // Roles and value slots, once every function knows its probes.
  for (const ProbeInfo& p : probes) {
    const uint32_t fn = out.function_of_probe[p.index];
    const FunctionInfo& f = out.functions[fn];
    out.role_of_probe[p.index] = !f.paired() ? ProbeRole::HitOnly
                                 : (p.kind == ProbeKind::Entry && !closes[p.index]) ? ProbeRole::Entry
                                                                                     : ProbeRole::Return;
  }
  std::vector<const std::vector<ValueSpec>*> values_by_index(slots, nullptr);
  std::vector<const std::string*> function_by_index(slots, nullptr);
  for (const ProbeInfo& p : probes) {
    values_by_index[p.index] = &p.values;
    function_by_index[p.index] = &p.function;
  }
  auto values_of = [&](uint32_t probe) { return values_by_index[probe]; };
  for (FunctionInfo& f : out.functions) {
    if (const auto* v = f.entry_probe == kNoProbe ? nullptr : values_of(f.entry_probe)) {
      f.values.insert(f.values.end(), v->begin(), v->end());
      out.first_slot_of_probe[f.entry_probe] = 0;
    }
    f.return_values_at = static_cast<uint16_t>(f.values.size());
    if (const auto* v = f.return_probe == kNoProbe ? nullptr : values_of(f.return_probe)) {
      f.values.insert(f.values.end(), v->begin(), v->end());
      out.first_slot_of_probe[f.return_probe] = f.return_values_at;
      // A USDT pair's two halves have the same $argN: the closing half's are named by
      // its suffix ("done:$arg1", "return:$arg3"), so `--by $arg1` means the opening one's.
      if (f.usdt && f.paired()) {
        const std::string& closing = *function_by_index[f.return_probe];
        const std::string prefix = closing.substr(std::min(closing.size(), f.name.size() + 2)) + ":";
        for (std::size_t i = f.return_values_at; i < f.values.size(); i++) f.values[i].name = prefix + f.values[i].name;
      }
    }
  }
  // Every exit probe of a function shares the first one's value layout, and every
  // site of a USDT probe its first site's.
  for (const ProbeInfo& p : probes)
    if ((p.kind == ProbeKind::Exit || closes[p.index]) && out.function_of_probe[p.index] != kNoFunction)
      out.first_slot_of_probe[p.index] = out.functions[out.function_of_probe[p.index]].return_values_at;
  // A USDT pair's key: the slots pair_key marks on each side, in order, where both
  // hold the same kind of value (a string id equals only a string id).
  for (FunctionInfo& f : out.functions) {
    if (!f.usdt || !f.paired()) continue;
    const ProbeInfo* in = nullptr;
    const ProbeInfo* back = nullptr;
    for (const ProbeInfo& p : probes) {
      if (p.index == f.entry_probe) in = &p;
      if (p.index == f.return_probe) back = &p;
    }
    if (!in || !back) continue;
    std::vector<uint16_t> a, b;
    for (uint16_t i = 0; i < in->values.size() && i < 32; i++)
      if (in->pair_key >> i & 1) a.push_back(i);
    for (uint16_t i = 0; i < back->values.size() && i < 32; i++)
      if (back->pair_key >> i & 1) b.push_back(i);
    for (std::size_t k = 0; k < a.size() && k < b.size(); k++)
      if (in->values[a[k]].is_string() == back->values[b[k]].is_string()) f.key.emplace_back(a[k], b[k]);
  }
  join_clone_rows(out, probes);
  // Inlined copies join their function's out-of-line row (same file, same name).
  std::map<std::pair<std::string_view, std::string_view>, uint32_t> own_rows;
  for (uint32_t fn = 0; fn < out.functions.size(); fn++) {
    const FunctionInfo& f = out.functions[fn];
    if (!f.site && !f.usdt && f.row == kNoFunction) own_rows.try_emplace({f.path, f.name}, fn);
  }
  for (FunctionInfo& f : out.functions) {
    if (!f.site) continue;
    if (auto it = own_rows.find({f.path, f.name}); it != own_rows.end()) f.row = it->second;
  }
  return out;
}

}  // namespace uprof
