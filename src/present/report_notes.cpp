#include "uprof/present/report_notes.h"

#include <algorithm>
#include <cstdio>

#include "uprof/analyse/duration_format.h"
#include "uprof/present/value_text.h"
#include "uprof/util/thousands.h"

namespace uprof {

std::string compensation_text(const ReportModel& m) {
  if (!m.options.compensate_ns) return {};
  std::string s;
  const auto& by = m.options.compensate_by_function;
  auto [lo, hi] = std::minmax_element(by.begin(), by.end());
  if (by.empty() || *lo == *hi)
    s = "compensated: " + format_duration(m.options.compensate_ns) +
        " (the probes' own cost per call, from 'uprof bench') taken off every duration";
  else
    s = "compensated: " + format_duration(*lo) + " to " + format_duration(*hi) +
        " (each function's probes' own cost per call, by its first instruction, from 'uprof bench')"
        " taken off every duration";
  return s + (m.options.compensate_nested ? ", and what the probe hits inside each call cost" : "") + ", at least 0";
}

std::string loss_cut_text(uint64_t open, uint64_t returns) {
  return with_commas(open + returns) + " calls cut by lost events, not paired (" + with_commas(open) +
         " open across a loss, " + with_commas(returns) + " returns after one): no latency spans a gap";
}

std::vector<std::string> group_notes(const ReportModel& m, const GroupStats& g) {
  std::vector<std::string> notes;
  if (g.below_compensation) {
    char share[16];
    std::snprintf(share, sizeof share, "%.1f%%", 100.0 * static_cast<double>(g.below_compensation) /
                                                   static_cast<double>(std::max<uint64_t>(g.latency.count(), 1)));
    notes.push_back("note: --compensate is unreliable here: it took more than the whole call off " +
                    with_commas(g.below_compensation) + " of " + with_commas(g.latency.count()) + " calls (" + share +
                    "), whose own time is below what uprof can tell apart from the probes' (their cost varies by more "
                    "than that); percentiles among them show '-'");
  }
  if (g.untimed) {
    const std::string& name = g.function < m.functions.functions.size() ? m.functions.functions[g.function].name : "";
    notes.push_back("note: " + with_commas(g.untimed) + " of its " + with_commas(g.calls) +
                    " calls ended with no start probe fired before them: counted as calls, without a latency (" +
                    (name.rfind("python:function", 0) == 0
                         ? "python 3.11 fires function__entry only when a generator or coroutine starts, CPython "
                           "gh-98894"
                         : "they began before the recording, or the start probe did not fire") +
                    ")");
  }
  if (g.cut_by_loss())
    notes.push_back("note: " + loss_cut_text(g.unmatched[static_cast<std::size_t>(UnmatchedReason::Lost)],
                                             g.unmatched[static_cast<std::size_t>(UnmatchedReason::ReturnAfterLoss)]));
  // Probed calls inside: their probes' whole cost is in this function's durations.
  if (!m.options.compensate && g.latency.count() && g.nested_probe_ns * 2 > g.latency.total())
    notes.push_back("note: the probe hits inside its calls cost ~" + format_duration(g.nested_probe_ns) + " of its " +
                    format_duration(g.latency.total()) +
                    " total: the probed callees' probes dominate what is measured (--compensate takes them off)");
  if (uint64_t cost = g.function < m.probe_cost.size() ? m.probe_cost[g.function] : 0;
      cost && g.latency.count() && !g.compensation_hides(50) && g.latency.percentile(50) < 10 * cost)
    notes.push_back("note: the median (" + format_duration(g.latency.percentile(50)) +
                    ") is within 10x of the probes' own cost (+" + format_duration(cost) +
                    " a call, as record said): the probe dominates what is measured");
  return notes;
}

std::string value_summary(const ValueSpec& spec, const ValueStats& vs, std::size_t top_values) {
  if (!vs.count || !has_value_stats(spec)) return {};
  // Strings have no order worth showing (their ids are the order they were first seen).
  std::string line = spec.name + (spec.is_string() ? std::string(": ") + with_commas(vs.count) +
                                                         (vs.count == 1 ? " string" : " strings")
                                                   : ": min " + format_value(vs.min, spec) + ", max " +
                                                         format_value(vs.max, spec));
  // Only values the sketch can vouch for: seen at least twice for sure.
  std::string frequent;
  for (const auto& e : vs.top.top(top_values))
    if (e.count - e.error >= 2)
      frequent += " " + format_value(e.value, spec) + " (" + with_commas(e.count - e.error) +
                  (e.error ? "-" + with_commas(e.count) : "") + ")";
  return line + (frequent.empty() ? "; no value repeats often" : "; most frequent:" + frequent);
}

}  // namespace uprof
