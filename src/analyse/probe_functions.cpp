#include "uprof/analyse/probe_functions.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "probe_functions_guess.h"

namespace uprof {

namespace {

bool is_usdt(RowRole r) { return r == RowRole::UsdtStart || r == RowRole::UsdtDone || r == RowRole::Usdt; }
bool is_site(RowRole r) { return r == RowRole::Inlined || r == RowRole::Line; }

// Groups a probe table by each probe's place (role and row), whether the file recorded
// it (1.6) or group_probes guessed it (older files), in passes: function entries, the
// rest of the functions' probes, USDT probes and sites, then what every function's
// probes decide together (roles, value slots, USDT keys, report rows).
class Grouping {
 public:
  Grouping(std::span<const ProbeInfo> probes, std::vector<ProbePlace> places, uint32_t slots)
      : probes_(probes), places_(std::move(places)), closes_(slots, false) {
    out_.function_of_probe.assign(slots, kNoFunction);
    out_.role_of_probe.assign(slots, ProbeRole::Unknown);
    out_.first_slot_of_probe.assign(slots, 0);
    out_.offcpu_of_probe.assign(slots, false);
    by_index_.assign(slots, nullptr);
    for (const ProbeInfo& p : probes) {
      by_index_[p.index] = &p;
      out_.offcpu_of_probe[p.index] = p.offcpu;
    }
    for (const ProbeInfo& p : probes)
      if (p.function.empty() && p.kind == ProbeKind::Return) raw_entries_.insert({p.path, p.vaddr});
  }

  void function_entries();
  void other_function_probes();
  void usdt_and_sites();
  void pairing_roles_and_slots();
  void usdt_keys();
  // `family`: whether two symbols under one row name are entry points of one function.
  void rows(bool (*family)(std::string_view, std::string_view));

  ProbeFunctions take() { return std::move(out_); }

 private:
  const ProbePlace& place(const ProbeInfo& p) const { return places_[p.index]; }
  // A probe at a function's entry. A raw offset outside every symbol is one when the
  // user put a return probe on it (BIN:0xOFF%return): a stripped binary's function.
  bool is_entry(const ProbeInfo& p) const {
    const RowRole r = place(p).role;
    return (r == RowRole::Entry || r == RowRole::Return) &&
           (!p.function.empty() || raw_entries_.count({p.path, p.vaddr}));
  }
  uint32_t add_function(const ProbeInfo& p, std::string name) {
    out_.functions.push_back(FunctionInfo{
        .name = std::move(name),
        .path = p.path,
        .entry_vaddr = p.vaddr - p.offset_in_function,
    });
    return static_cast<uint32_t>(out_.functions.size() - 1);
  }
  void attach(uint32_t fn, const ProbeInfo& p) {
    FunctionInfo& f = out_.functions[fn];
    (p.kind == ProbeKind::Entry ? f.entry_probe : f.return_probe) = p.index;
    f.at_exits |= p.kind == ProbeKind::Exit;
    out_.function_of_probe[p.index] = fn;
  }
  // The probe of this index (the table need not be in index order).
  const ProbeInfo* probe_at(uint32_t index) const { return index < by_index_.size() ? by_index_[index] : nullptr; }

  std::span<const ProbeInfo> probes_;
  std::vector<ProbePlace> places_;  // by ProbeInfo::index
  std::vector<const ProbeInfo*> by_index_;  // by ProbeInfo::index
  std::vector<bool> closes_;        // the probe is the closing half of a USDT pair
  std::set<std::pair<std::string_view, uint64_t>> raw_entries_;
  // (path, address) -> the function of the probes at that entry: a map, not a scan,
  // because `-e 'libc:*'` makes thousands of probes.
  std::map<std::pair<std::string_view, uint64_t>, uint32_t> at_entry_;
  ProbeFunctions out_;
};

// Pass 1: probes at a function's entry address, grouped by (path, address).
void Grouping::function_entries() {
  for (const ProbeInfo& p : probes_) {
    if (!is_entry(p)) continue;
    auto [it, fresh] = at_entry_.try_emplace({p.path, p.vaddr}, 0);
    if (fresh) {
      it->second = add_function(p, place(p).row);
      attach(it->second, p);
      continue;
    }
    const FunctionInfo& same = out_.functions[it->second];
    const uint32_t slot = p.kind == ProbeKind::Entry ? same.entry_probe : same.return_probe;
    if (slot == kNoProbe) {
      attach(it->second, p);
    } else {
      std::ostringstream name;
      name << place(p).row << " [probe #" << p.index << "]";
      attach(add_function(p, name.str()), p);
    }
  }
}

// Pass 2: exit probes join the entry of their function (without one, the exits of a
// function count hits together, under its name); mid-function probes and (other) raw
// offsets outside functions count hits.
void Grouping::other_function_probes() {
  std::map<std::pair<std::string_view, std::string_view>, uint32_t> exits_alone;
  std::map<std::pair<std::string_view, std::string_view>, uint32_t> entry_of_symbol;  // the first
  for (const ProbeInfo& p : probes_) {
    if (p.kind != ProbeKind::Entry || !is_entry(p)) continue;
    const auto it = at_entry_.find({p.path, p.vaddr});
    if (it != at_entry_.end() && out_.functions[it->second].entry_probe == p.index)
      entry_of_symbol.try_emplace({p.path, p.symbol}, it->second);
  }
  for (const ProbeInfo& p : probes_) {
    const RowRole role = place(p).role;
    if (is_entry(p) || is_usdt(role) || is_site(role)) continue;
    if (role != RowRole::Exit) {
      attach(add_function(p, place(p).row), p);
      continue;
    }
    const auto found = entry_of_symbol.find({p.path, p.symbol});
    uint32_t owner = found == entry_of_symbol.end() ? kNoFunction : found->second;
    if (owner == kNoFunction) {
      auto [alone, fresh] = exits_alone.try_emplace({p.path, p.symbol}, 0);
      if (fresh) alone->second = add_function(p, place(p).row);
      owner = alone->second;
    }
    FunctionInfo& f = out_.functions[owner];
    if (f.return_probe == kNoProbe) f.return_probe = p.index;
    f.at_exits = true;
    out_.function_of_probe[p.index] = owner;
  }
}

// Pass 3: USDT probes and sites, by name; a USDT pair's two halves as one function
// when both are in the table (a half alone counts hits under its own name).
void Grouping::usdt_and_sites() {
  std::set<std::tuple<std::string_view, std::string_view, bool>> halves;  // (path, "PROVIDER:X", closes)
  for (const ProbeInfo& p : probes_) {
    const RowRole role = place(p).role;
    if (role == RowRole::UsdtStart || role == RowRole::UsdtDone)
      halves.insert({p.path, place(p).row, role == RowRole::UsdtDone});
  }
  std::map<std::pair<std::string_view, std::string>, uint32_t> by_name;
  for (const ProbeInfo& p : probes_) {
    const RowRole role = place(p).role;
    if (!is_usdt(role) && !is_site(role)) continue;
    std::string name = is_site(role) || role == RowRole::Usdt ? place(p).row : p.function;
    if (const bool closing = role == RowRole::UsdtDone;
        (closing || role == RowRole::UsdtStart) && halves.count({p.path, place(p).row, !closing})) {
      name = place(p).row;
      closes_[p.index] = closing;
    }
    auto [it, fresh] = by_name.try_emplace({p.path, name}, 0);
    if (fresh) {
      it->second = add_function(p, name);
      out_.functions[it->second].usdt = is_usdt(role);
      out_.functions[it->second].site = is_site(role);
    }
    FunctionInfo& f = out_.functions[it->second];
    uint32_t& first = closes_[p.index] ? f.return_probe : f.entry_probe;  // the first site's probe
    if (first == kNoProbe) first = p.index;
    out_.function_of_probe[p.index] = it->second;
  }
}

// Roles and value slots, once every function knows its probes.
void Grouping::pairing_roles_and_slots() {
  for (const ProbeInfo& p : probes_) {
    const FunctionInfo& f = out_.functions[out_.function_of_probe[p.index]];
    out_.role_of_probe[p.index] = !f.paired() ? ProbeRole::HitOnly
                                  : (p.kind == ProbeKind::Entry && !closes_[p.index]) ? ProbeRole::Entry
                                                                                       : ProbeRole::Return;
  }
  for (FunctionInfo& f : out_.functions) {
    if (f.entry_probe != kNoProbe) {
      const auto& v = probe_at(f.entry_probe)->values;
      f.values.insert(f.values.end(), v.begin(), v.end());
      out_.first_slot_of_probe[f.entry_probe] = 0;
    }
    f.return_values_at = static_cast<uint16_t>(f.values.size());
    if (f.return_probe == kNoProbe) continue;
    const auto& v = probe_at(f.return_probe)->values;
    f.values.insert(f.values.end(), v.begin(), v.end());
    out_.first_slot_of_probe[f.return_probe] = f.return_values_at;
    // A USDT pair's two halves have the same $argN: the closing half's are named by
    // its suffix ("done:$arg1", "return:$arg3"), so `--by $arg1` means the opening one's.
    if (f.usdt && f.paired()) {
      const std::string& closing = probe_at(f.return_probe)->function;
      const std::string prefix = closing.substr(std::min(closing.size(), f.name.size() + 2)) + ":";
      for (std::size_t i = f.return_values_at; i < f.values.size(); i++) f.values[i].name = prefix + f.values[i].name;
    }
  }
  // Every exit probe of a function shares the first one's value layout, and every
  // site of a USDT probe its first site's.
  for (const ProbeInfo& p : probes_)
    if ((p.kind == ProbeKind::Exit || closes_[p.index]) && out_.function_of_probe[p.index] != kNoFunction)
      out_.first_slot_of_probe[p.index] = out_.functions[out_.function_of_probe[p.index]].return_values_at;
}

// A USDT pair's key: the slots pair_key marks on each side, in order, where both
// hold the same kind of value (a string id equals only a string id).
void Grouping::usdt_keys() {
  for (FunctionInfo& f : out_.functions) {
    if (!f.usdt || !f.paired()) continue;
    const ProbeInfo* in = probe_at(f.entry_probe);
    const ProbeInfo* back = probe_at(f.return_probe);
    if (!in || !back) continue;
    std::vector<uint16_t> a, b;
    for (uint16_t i = 0; i < in->values.size() && i < 32; i++)
      if (in->pair_key >> i & 1) a.push_back(i);
    for (uint16_t i = 0; i < back->values.size() && i < 32; i++)
      if (back->pair_key >> i & 1) b.push_back(i);
    for (std::size_t k = 0; k < a.size() && k < b.size(); k++)
      if (in->values[a[k]].is_string() == back->values[b[k]].is_string()) f.key.emplace_back(a[k], b[k]);
  }
}

// The clones of one source function share the row of the first of them (see the
// header); then inlined copies join their function's out-of-line row (same file, same name).
void Grouping::rows(bool (*family)(std::string_view, std::string_view)) {
  auto symbol_of = [&](const FunctionInfo& f) -> std::string_view {
    const uint32_t probe = f.entry_probe != kNoProbe ? f.entry_probe : f.return_probe;
    const ProbeInfo* p = probe == kNoProbe ? nullptr : probe_at(probe);
    return p ? std::string_view(p->symbol) : std::string_view();
  };
  // (path, name) -> the functions that have their own row: `-e 'libc:*'` makes thousands.
  std::map<std::pair<std::string_view, std::string_view>, std::vector<uint32_t>> own_rows;
  for (uint32_t fn = 0; fn < out_.functions.size(); fn++) {
    FunctionInfo& f = out_.functions[fn];
    const std::string_view symbol = symbol_of(f);
    if (f.usdt || symbol.empty()) continue;
    std::vector<uint32_t>& same_name = own_rows[{f.path, f.name}];
    for (uint32_t other : same_name)
      if (family(symbol, symbol_of(out_.functions[other]))) {
        f.row = other;
        break;
      }
    if (f.row == kNoFunction) same_name.push_back(fn);
  }
  std::map<std::pair<std::string_view, std::string_view>, uint32_t> first_row;
  for (uint32_t fn = 0; fn < out_.functions.size(); fn++) {
    const FunctionInfo& f = out_.functions[fn];
    if (!f.site && !f.usdt && f.row == kNoFunction) first_row.try_emplace({f.path, f.name}, fn);
  }
  for (FunctionInfo& f : out_.functions) {
    if (!f.site || places_[f.entry_probe].role != RowRole::Inlined) continue;
    if (auto it = first_row.find({f.path, f.name}); it != first_row.end()) f.row = it->second;
  }
}

// Two entry points the recorder named alike (one row name), at distinct symbols, are
// one source function: "scale" at `scale` and at `scale.constprop.0`. Two `static
// helper`s have one symbol: two functions, two rows.
bool distinct_symbols(std::string_view symbol, std::string_view other) { return symbol != other; }

}  // namespace

ProbeFunctions group_probes(std::span<const ProbeInfo> probes) {
  uint32_t slots = 0;
  for (const ProbeInfo& p : probes) slots = std::max(slots, p.index + 1);
  // A file of format 1.6 says what each probe does in which row; older files (and
  // tables built by hand) leave it to the guesses.
  const bool recorded = !probes.empty() && std::all_of(probes.begin(), probes.end(), [](const ProbeInfo& p) {
    return p.role != RowRole::Unrecorded;
  });
  std::vector<ProbePlace> places;
  if (recorded) {
    places.resize(slots);
    for (const ProbeInfo& p : probes) places[p.index] = {.role = p.role, .row = p.row};
  } else {
    places = guess_places(probes, slots);
  }
  Grouping g(probes, std::move(places), slots);
  g.function_entries();
  g.other_function_probes();
  g.usdt_and_sites();
  g.pairing_roles_and_slots();
  g.usdt_keys();
  g.rows(recorded ? distinct_symbols : same_clone_family);
  return g.take();
}

}  // namespace uprof
