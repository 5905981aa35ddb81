#include "uprof/present/report_text.h"

#include "uprof/present/value_text.h"

#include <algorithm>
#include <cinttypes>
#include <ctime>
#include <numeric>
#include <sstream>

#include "uprof/analyse/duration_format.h"
#include "uprof/present/text_histogram.h"
#include "uprof/present/text_table.h"
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

std::string format_value(uint64_t v, const ValueSpec& spec) { return format_scalar(v, spec); }

bool has_value_stats(const ValueSpec& spec) {
  return !spec.continues && spec.kind != ValueKind::Struct && spec.source != ValueSource::Unavailable;
}

std::string group_label(const ReportModel& m, const GroupStats& g) {
  const FunctionInfo& f = m.functions.functions[g.function];
  std::string s = f.name;
  if (g.tid) s += " [" + std::to_string(g.pid) + "/" + std::to_string(g.tid) + (g.comm.empty() ? "" : " " + g.comm) + "]";
  else if (g.pid) s += " [pid " + std::to_string(g.pid) + "]";
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

std::vector<std::size_t> sorted_groups(const ReportModel& m, SortKey key) {
  std::vector<std::size_t> idx(m.groups.size());
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
    const auto &ga = m.groups[a], &gb = m.groups[b];
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
         (m.meta.engine.empty() ? "" : ", " + m.meta.engine + " engine") + ")";
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
  for (const auto& p : m.problems) os << "warning:  " << m.path << ": " << p << "\n";
  if (m.options.compensate_ns) {
    const auto& by = m.options.compensate_by_function;
    auto [lo, hi] = std::minmax_element(by.begin(), by.end());
    if (by.empty() || *lo == *hi)
      os << "latency:  compensated: " << format_duration(m.options.compensate_ns)
         << " (the probes' own cost per call, from 'uprof bench') taken off every duration";
    else
      os << "latency:  compensated: " << format_duration(*lo) << " to " << format_duration(*hi)
         << " (each function's probes' own cost per call, by its first instruction, from 'uprof bench')"
            " taken off every duration";
    os << (m.options.compensate_nested ? ", and what the probe hits inside each call cost" : "")
       << ", at least 0\n";
  }
  if (m.filtered_out) os << "filtered: " << with_commas(m.filtered_out) << " calls and hits left out by the filters\n";
  os << "\n";

  TextTable t({{"FUNCTION"}, {"CALLS", Align::Right}, {"TOTAL", Align::Right}, {"MEAN", Align::Right},
               {"MIN", Align::Right}, {"P50", Align::Right}, {"P90", Align::Right}, {"P99", Align::Right},
               {"P99.9", Align::Right}, {"MAX", Align::Right}, {"UNMATCHED", Align::Right}});
  auto order = sorted_groups(m, o.sort);
  for (std::size_t i : order) {
    const GroupStats& g = m.groups[i];
    const FunctionInfo& f = m.functions.functions[g.function];
    const auto& h = g.latency;
    if (f.paired() && h.count()) {
      // A percentile among the calls --compensate took everything off is no figure: '-'.
      auto pct = [&](double p) { return g.compensation_hides(p) ? std::string("-") : format_duration(h.percentile(p)); };
      t.add_row({group_label(m, g), with_commas(g.calls), format_duration(h.total()),
                 format_duration(static_cast<uint64_t>(h.mean() + 0.5)), pct(0), pct(50), pct(90), pct(99), pct(99.9),
                 pct(100), with_commas(g.unmatched_total())});
    } else {
      t.add_row({group_label(m, g), with_commas(g.calls), "-", "-", "-", "-", "-", "-", "-", "-",
                 f.paired() ? with_commas(g.unmatched_total()) : "-"});
    }
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
    if (g.below_compensation) {
      char share[16];
      std::snprintf(share, sizeof share, "%.1f%%", 100.0 * static_cast<double>(g.below_compensation) /
                                                     static_cast<double>(std::max<uint64_t>(g.latency.count(), 1)));
      section("  note: --compensate is unreliable here: it took more than the whole call off " +
              with_commas(g.below_compensation) + " of " + with_commas(g.latency.count()) + " calls (" + share +
              "), whose own time is below what uprof can tell apart from the probes' (their cost varies by more "
              "than that); percentiles among them show '-'");
    }
    if (g.calls_spanning_loss)
      section("  " + with_commas(g.calls_spanning_loss) + " calls were open while events were lost: they may be mis-paired");
    // Probed calls inside: their probes' whole cost is in this function's durations.
    if (!m.options.compensate && g.latency.count() && g.nested_probe_ns * 2 > g.latency.total())
      section("  note: the probe hits inside its calls cost ~" + format_duration(g.nested_probe_ns) + " of its " +
              format_duration(g.latency.total()) + " total: the probed callees' probes dominate what is measured "
              "(--compensate takes them off)");
    if (uint64_t cost = g.function < m.probe_cost.size() ? m.probe_cost[g.function] : 0;
        cost && g.latency.count() && !g.compensation_hides(50) && g.latency.percentile(50) < 10 * cost)
      section("  note: the median (" + format_duration(g.latency.percentile(50)) + ") is within 10x of the probes' own cost (+" +
              format_duration(cost) + " a call, as record said): the probe dominates what is measured");
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
      for (std::size_t v = 0; v < g.values.size() && v < f.values.size(); v++) {
        const ValueStats& vs = g.values[v];
        const ValueSpec& spec = f.values[v];
        if (!vs.count || !has_value_stats(spec)) continue;
        // Strings have no order worth showing (their ids are the order they were first seen).
        std::string line = "  " + spec.name + (spec.is_string() ? std::string(": ") + with_commas(vs.count) + (vs.count == 1 ? " string" : " strings")
                                                                : ": min " + format_value(vs.min, spec) + ", max " +
                                                                      format_value(vs.max, spec));
        // Only values the sketch can vouch for: seen at least twice for sure.
        std::string frequent;
        for (const auto& e : vs.top.top(o.top_values))
          if (e.count - e.error >= 2)
            frequent += " " + format_value(e.value, spec) + " (" + with_commas(e.count - e.error) +
                        (e.error ? "-" + with_commas(e.count) : "") + ")";
        line += frequent.empty() ? "; no value repeats often" : "; most frequent:" + frequent;
        section(line);
      }
    }
  }
  return os.str();
}

}  // namespace uprof
