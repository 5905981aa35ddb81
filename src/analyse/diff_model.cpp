#include "uprof/analyse/diff_model.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace uprof {
namespace {

std::string file_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// What a row is matched by across the two files.
struct Key {
  std::string function;
  std::string thread;
  std::string caller;
  bool has_by_value = false;
  bool other_values = false;
  uint64_t by_value = 0;
  auto operator<=>(const Key&) const = default;
};

// The name each function is matched by: its own, unless two of the file's functions
// share it (an `init` in the program and in a library): then "init in libfoo.so".
std::vector<std::string> match_names(const ProbeFunctions& pf) {
  std::map<std::string, int> uses;
  for (const auto& f : pf.functions) uses[f.name]++;
  std::vector<std::string> out;
  for (const auto& f : pf.functions) out.push_back(uses[f.name] > 1 ? f.name + " in " + file_name(f.path) : f.name);
  return out;
}

// Adds the file's groups to `rows` as side A or B (`side`), merged by key.
void add_side(const ReportModel& m, const DiffOptions& o, DiffSide DiffRow::*side, std::map<Key, DiffRow>& rows) {
  const std::vector<std::string> names = match_names(m.functions);
  for (const GroupStats& g : m.groups) {
    const FunctionInfo& f = m.functions.functions[g.function];
    Key k{.function = names[g.function],
          .thread = o.by == GroupBy::Thread ? g.comm : std::string(),
          .caller = o.by == GroupBy::Caller ? g.caller : std::string(),
          .has_by_value = g.has_by_value,
          .other_values = g.other_values,
          .by_value = g.by_value};
    DiffRow& r = rows[k];
    r.function = k.function;
    r.thread = k.thread;
    r.caller = k.caller;
    r.has_by_value = k.has_by_value;
    r.other_values = k.other_values;
    r.by_value = k.by_value;
    if (g.has_by_value && !r.value_spec) {
      for (const ValueSpec& v : f.values)
        if (v.name == o.by_value) r.value_spec = v;
    }
    DiffSide& s = r.*side;
    s.calls += g.calls;
    s.unmatched += g.unmatched_total();
    s.latency.merge(g.latency);
  }
}

// Marks each row's sides as probed (and paired) by whether the file probes its function.
void mark_probed(const ReportModel& m, DiffSide DiffRow::*side, std::vector<DiffRow>& rows) {
  const std::vector<std::string> names = match_names(m.functions);
  std::map<std::string, bool> paired;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (i < m.selected.size() && m.selected[i]) paired[names[i]] = m.functions.functions[i].paired();
  for (DiffRow& r : rows) {
    auto it = paired.find(r.function);
    (r.*side).probed = it != paired.end();
    (r.*side).paired = it != paired.end() && it->second;
  }
}

std::vector<BinaryPair> match_binaries(const ReportModel& a, const ReportModel& b) {
  // The first path (and its build-id) each file probes under a file name.
  auto by_name = [](const ReportModel& m) {
    std::map<std::string, std::pair<std::string, std::string>> out;
    for (const ProbeInfo& p : m.probes)
      if (!p.path.empty()) out.try_emplace(file_name(p.path), p.path, p.build_id);
    return out;
  };
  auto in_a = by_name(a), in_b = by_name(b);
  std::vector<BinaryPair> out;
  for (auto it = in_a.begin(); it != in_a.end();) {
    auto other = in_b.find(it->first);
    if (other == in_b.end()) {
      ++it;
      continue;
    }
    out.push_back(BinaryPair{.name = it->first, .path_a = it->second.first, .path_b = other->second.first,
                             .build_id_a = it->second.second, .build_id_b = other->second.second});
    in_b.erase(other);
    it = in_a.erase(it);
  }
  // One binary left on each side: the program itself, renamed (./app-v1 against
  // ./app-v2), the usual way to keep two builds side by side.
  if (in_a.size() == 1 && in_b.size() == 1) {
    const auto& [na, pa] = *in_a.begin();
    const auto& [nb, pb] = *in_b.begin();
    out.push_back(BinaryPair{.name = na == nb ? na : na + " / " + nb, .path_a = pa.first, .path_b = pb.first,
                             .build_id_a = pa.second, .build_id_b = pb.second});
  }
  return out;
}

// Sort classes: what changed first, then what did not, then what is on one side only.
int row_class(const DiffRow& r) {
  auto any = [&](ShiftVerdict v) {
    return std::any_of(r.shifts.begin(), r.shifts.end(), [&](const QuantileShift& s) { return s.verdict == v; });
  };
  if (!r.b.probed) return 3;
  if (!r.a.probed) return 4;
  if (any(ShiftVerdict::Slower)) return 0;
  if (any(ShiftVerdict::Faster)) return 1;
  return 2;
}

// Within a class: the surest slow-down first (largest low end of B/A), the surest
// speed-up first (smallest high end), the rest by the time spent in the function.
double row_weight(const DiffRow& r, int cls) {
  double w = 0;
  for (const QuantileShift& s : r.shifts) {
    if (cls == 0 && s.verdict == ShiftVerdict::Slower) w = std::max(w, s.ratio_lo);
    if (cls == 1 && s.verdict == ShiftVerdict::Faster) w = std::max(w, 1 / s.ratio_hi);
  }
  if (cls >= 2)
    w = static_cast<double>(std::max(r.a.latency.total(), r.b.latency.total())) +
        static_cast<double>(std::max(r.a.calls, r.b.calls)) * 1e-9;  // hit-only functions: by calls
  return w;
}

Result<ReportModel> read_side(const std::string& path, const DiffOptions& o) {
  AggregateOptions ao;
  ao.by = o.by;
  ao.by_value = o.by_value;
  auto m = build_report(path, ao);
  if (!m) {
    std::string msg = m.error().message;
    // The reader's errors name the file already ("store: a.data: not a uprof data
    // file"); the report's own are about the options, and say which file now.
    if (msg.starts_with("store: ")) return std::move(m).take_error();
    if (msg.starts_with("report: ")) msg.erase(0, 8);
    return err("diff: ", path, ": ", msg);
  }
  if (!m->problems.empty())
    return err("diff: ", path, ": ", m->problems.front(),
               " (a diff of part of a recording would mislead; 'uprof report' shows what it holds)");
  return m;
}

}  // namespace

DiffModel diff_reports(ReportModel a, ReportModel b, const DiffOptions& options) {
  DiffModel d;
  d.options = options;
  std::map<Key, DiffRow> keyed;
  add_side(a, options, &DiffRow::a, keyed);
  add_side(b, options, &DiffRow::b, keyed);
  for (auto& [k, r] : keyed) d.rows.push_back(std::move(r));
  mark_probed(a, &DiffRow::a, d.rows);
  mark_probed(b, &DiffRow::b, d.rows);
  for (DiffRow& r : d.rows) {
    if (!r.a.paired || !r.b.paired || !r.a.latency.count() || !r.b.latency.count()) continue;
    for (double p : kDiffPercents) r.shifts.push_back(compare_quantile(r.a.latency, r.b.latency, p, options.shift));
    const uint64_t ma = r.a.latency.max(), mb = r.b.latency.max();
    r.max_ratio = ma == 0 ? (mb == 0 ? 1.0 : kUnbounded) : static_cast<double>(mb) / static_cast<double>(ma);
  }
  std::stable_sort(d.rows.begin(), d.rows.end(), [](const DiffRow& x, const DiffRow& y) {
    const int cx = row_class(x), cy = row_class(y);
    if (cx != cy) return cx < cy;
    return row_weight(x, cx) > row_weight(y, cy);
  });
  d.binaries = match_binaries(a, b);
  d.a = std::move(a);
  d.b = std::move(b);
  return d;
}

Result<DiffModel> build_diff(const std::string& path_a, const std::string& path_b, const DiffOptions& options) {
  if (options.by != GroupBy::Function && options.by != GroupBy::Thread && options.by != GroupBy::Caller)
    return err("diff: only functions, threads (by name), callers (by name) and --by values are matched across recordings");
  UPROF_ASSIGN(ReportModel a, read_side(path_a, options));
  UPROF_ASSIGN(ReportModel b, read_side(path_b, options));
  // --by caller is --by-caller where the files capture no value named "caller" (resolve_by_caller).
  DiffOptions o = options;
  if (a.options.by == GroupBy::Caller && b.options.by == GroupBy::Caller) {
    o.by = GroupBy::Caller;
    o.by_value.clear();
  } else if (a.options.by != b.options.by) {
    return err("diff: --by caller names the callers in one file and a captured value 'caller' in the other");
  }
  return diff_reports(std::move(a), std::move(b), o);
}

std::vector<Regression> regressions(const DiffModel& m, double percent) {
  std::vector<Regression> out;
  for (std::size_t i = 0; i < m.rows.size(); ++i)
    for (const QuantileShift& s : m.rows[i].shifts)
      if ((s.percent == 50 || s.percent == 99) && worse_by_more_than(s, percent)) out.push_back({i, s});
  return out;
}

}  // namespace uprof
