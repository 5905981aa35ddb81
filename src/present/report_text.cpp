#include "uprof/present/report_text.h"

#include "uprof/present/value_text.h"

#include <algorithm>
#include <cinttypes>
#include <ctime>
#include <numeric>
#include <sstream>

#include "uprof/analyse/duration_format.h"
#include "uprof/present/caller_text.h"
#include "uprof/present/report_notes.h"
#include "uprof/present/text_histogram.h"
#include "uprof/present/text_table.h"
#include "uprof/util/hex.h"
#include "uprof/util/thousands.h"

namespace uprof {

Result<SortKey> parse_sort_key(std::string_view s) {
  if (s == "total") return SortKey::Total;
  if (s == "calls") return SortKey::Calls;
  if (s == "mean") return SortKey::Mean;
  if (s == "p99") return SortKey::P99;
  if (s == "max") return SortKey::Max;
  if (s == "name") return SortKey::Name;
  return err("report: --sort takes calls, total, mean, p99, max or name, not '", s, "'");
}

std::string group_label(const ReportModel& m, const GroupStats& g) {
  const FunctionInfo& f = m.functions.functions[g.function];
  std::string s = f.name;
  if (g.tid) s += " [" + std::to_string(g.pid) + "/" + std::to_string(g.tid) + (g.comm.empty() ? "" : " " + g.comm) + "]";
  else if (g.goroutine)
    s += " [pid " + std::to_string(g.pid) + (g.comm.empty() ? "" : " " + g.comm) +
         (g.goroutine_is_id ? " goroutine " + std::to_string(g.goroutine) : " g " + hex(g.goroutine)) + "]";
  else if (g.pid) s += " [pid " + std::to_string(g.pid) + (g.comm.empty() ? "" : " " + g.comm) + "]";
  if (m.options.by == GroupBy::Caller) s += g.has_caller ? " [from " + g.caller + "]" : std::string(" [no stack]");
  if (g.other_values) s += " [" + m.options.by_value + "=other]";
  else if (g.has_by_value) {
    for (const auto& v : f.values)
      if (v.name == m.options.by_value) {
        s += " [" + v.name + "=" + format_value(g.by_value, v) + "]";
        break;
      }
  } else if (!m.options.by_value.empty()) {
    s += " [" + m.options.by_value + " not captured]";
  }
  return s;
}

std::vector<std::size_t> sorted_groups(const ReportModel& m, SortKey key) { return sort_order(m, m.groups, key); }

std::vector<std::size_t> sort_order(const ReportModel& m, const std::vector<GroupStats>& groups, SortKey key) {
  std::vector<std::size_t> idx(groups.size());
  std::iota(idx.begin(), idx.end(), 0);
  auto metric = [&](const GroupStats& g) -> double {
    switch (key) {
      case SortKey::Calls: return static_cast<double>(g.calls);
      case SortKey::Total: return static_cast<double>(g.latency.total());
      case SortKey::Mean: return g.latency.mean();
      case SortKey::P99: return static_cast<double>(g.latency.percentile(99));
      case SortKey::Max: return static_cast<double>(g.latency.max());
      case SortKey::Name: return 0;
    }
    return 0;
  };
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    const auto &ga = groups[a], &gb = groups[b];
    if (key == SortKey::Name) return group_label(m, ga) < group_label(m, gb);
    double ma = metric(ga), mb = metric(gb);
    if (ma != mb) return ma > mb;
    return ga.calls > gb.calls;
  });
  return idx;
}

std::string format_wall_time(uint64_t ns) {
  time_t t = static_cast<time_t>(ns / 1000000000ull);
  tm tmv{};
  gmtime_r(&t, &tmv);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tmv);
  return buf;
}

double recording_seconds(const ReportModel& m) {
  uint64_t end = m.trailer ? m.trailer->end_monotonic_ns : m.last_time;
  if (end <= m.meta.start_monotonic_ns) return 0;
  return static_cast<double>(end - m.meta.start_monotonic_ns) / 1e9;
}

std::string join_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::string recorded_summary(const ReportModel& m) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.3f s", recording_seconds(m));
  return format_wall_time(m.meta.start_realtime_ns) + ", " + secs + ", on " + m.meta.hostname + " (" +
         std::string(arch_info(m.meta.arch).name) + ", Linux " + m.meta.kernel +
         (m.meta.engine.empty() ? "" : ", " + m.meta.engine + " engine") +
         (m.meta.attach.empty() ? "" : ": " + m.meta.attach) + ")";
}

std::string render_text_report(const ReportModel& m, const TextReportOptions& o) {
  std::ostringstream os;
  os << "uprof report: " << m.path << "\n";
  os << "command:  " << join_command(m.meta.command) << "\n";
  os << "recorded: " << recorded_summary(m) << "\n";
  os << "events:   " << with_commas(m.samples) << " samples, " << with_commas(m.lost) << " lost";
  if (m.trailer) {
    uint64_t k = 0;
    for (auto& c : m.trailer->counts) k += c.kernel;
    os << "; kernel counted " << with_commas(k);
    if (m.trailer->exit_status >= 0) os << "; exit status " << m.trailer->exit_status;
  }
  os << "\n";
  if (m.pairing.cut_by_loss())
    os << "losses:   "
       << loss_cut_text(m.pairing.unmatched_of(UnmatchedReason::Lost), m.pairing.unmatched_of(UnmatchedReason::ReturnAfterLoss))
       << "\n";
  for (const auto& p : m.problems) os << "warning:  " << m.path << ": " << p << "\n";
  if (std::string comp = compensation_text(m); !comp.empty()) os << "latency:  " << comp << "\n";
  if (std::string st = stacks_summary(m); !st.empty()) os << "stacks:   " << st << "\n";
  if (m.filtered_out) os << "filtered: " << with_commas(m.filtered_out) << " calls and hits left out by the filters\n";
  os << "\n";

  std::vector<TextTable::Column> cols{{"FUNCTION"}, {"CALLS", Align::Right}, {"TOTAL", Align::Right},
                                      {"MEAN", Align::Right}, {"MIN", Align::Right}, {"P50", Align::Right},
                                      {"P90", Align::Right}, {"P99", Align::Right}, {"P99.9", Align::Right},
                                      {"MAX", Align::Right}, {"UNMATCHED", Align::Right}};
  if (m.offcpu) {
    cols.push_back({"ON-CPU", Align::Right});
    cols.push_back({"OFF-CPU", Align::Right});
  }
  TextTable t(std::move(cols));
  auto order = sorted_groups(m, o.sort);
  for (std::size_t i : order) {
    const GroupStats& g = m.groups[i];
    const FunctionInfo& f = m.functions.functions[g.function];
    const auto& h = g.latency;
    std::vector<std::string> row;
    if (f.paired() && h.count()) {
      // A percentile among the calls --compensate took everything off is no figure: '-'.
      auto pct = [&](double p) { return g.compensation_hides(p) ? std::string("-") : format_duration(h.percentile(p)); };
      row = {group_label(m, g), with_commas(g.calls), format_duration(h.total()),
             format_duration(static_cast<uint64_t>(h.mean() + 0.5)), pct(0), pct(50), pct(90), pct(99), pct(99.9),
             pct(100), with_commas(g.unmatched_total())};
    } else {
      row = {group_label(m, g), with_commas(g.calls), "-", "-", "-", "-", "-", "-", "-", "-",
             f.paired() ? with_commas(g.unmatched_total()) : "-"};
    }
    if (m.offcpu) {
      const uint64_t whole = g.cpu.on_cpu_ns + g.cpu.off_cpu_ns();
      row.push_back(g.cpu.recorded() ? share_text(g.cpu.on_cpu_ns, whole) : "-");
      row.push_back(g.cpu.recorded() ? share_text(g.cpu.off_cpu_ns(), whole) : "-");
    }
    t.add_row(std::move(row));
  }
  os << t.render();

  for (std::size_t i : order) {
    const GroupStats& g = m.groups[i];
    const FunctionInfo& f = m.functions.functions[g.function];
    bool any = false;
    auto section = [&](const std::string& title) {
      if (!any) os << "\n" << group_label(m, g) << "\n";
      any = true;
      os << title << "\n";
    };
    if (g.unmatched_total()) {
      section("  unmatched entries:");
      for (std::size_t r = 0; r < kUnmatchedReasons; r++)
        if (g.unmatched[r])
          os << "    " << to_string(static_cast<UnmatchedReason>(r)) << ": " << with_commas(g.unmatched[r]) << "\n";
    }
    for (const std::string& note : group_notes(m, g)) section("  " + note);
    if (g.cpu.recorded()) section("  " + cpu_split_text(g.cpu));
    // The callers are the function's: under its own row, not under each of its groups.
    if (m.options.by == GroupBy::Function && m.options.by_value.empty())
      if (std::string callers = callers_text(m, g.function, o.top_callers, "  "); !callers.empty()) {
        section(callers.substr(0, callers.find('\n')));
        os << callers.substr(callers.find('\n') + 1);
      }
    if (o.histograms && g.latency.count()) {
      if (g.linear) {
        section("  latency (linear):");
        const auto& lin = *g.linear;
        render_text_histogram(os, lin.buckets(), o.bar_width, lin.underflow(), lin.overflow(), lin.spec().min, lin.spec().max);
      } else {
        section("  latency (log2):");
        render_text_histogram(os, g.latency.log2_buckets(), o.bar_width);
      }
    }
    if (o.values) {
      for (std::size_t v = 0; v < g.values.size() && v < f.values.size(); v++)
        if (std::string line = value_summary(f.values[v], g.values[v], o.top_values); !line.empty())
          section("  " + line);
    }
  }
  return os.str();
}

}  // namespace uprof
