#include "uprof/present/diff_formats.h"

#include <cmath>
#include <sstream>

#include "uprof/analyse/duration_format.h"
#include "uprof/present/report_text.h"
#include "uprof/present/text_table.h"
#include "uprof/present/value_text.h"
#include "uprof/util/thousands.h"

namespace uprof {
namespace {

std::string percent_text(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", fraction * 100);
  return buf;
}

// Two lines: the command, then when, where and how much.
std::string side_summary(const ReportModel& m) {
  return join_command(m.meta.command) + "\n          " + recorded_summary(m) + "; " + with_commas(m.samples) +
         " samples, " + with_commas(m.lost) + " lost";
}

// "1.12ms -> 1.63ms" (percent 100: the max).
std::string a_to_b(const DiffRow& r, double percent) {
  return side_latency(r.a, percent) + " -> " + side_latency(r.b, percent);
}

std::string verdict_mark(ShiftVerdict v) {
  switch (v) {
    case ShiftVerdict::Slower: return "slower";
    case ShiftVerdict::Faster: return "faster";
    case ShiftVerdict::Same: return "~";
    case ShiftVerdict::TooFew: return "?";
  }
  return "?";
}

}  // namespace

std::string format_ratio(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, ratio >= 100 ? "x%.0f" : ratio >= 10 ? "x%.1f" : "x%.2f", ratio);
  return buf;
}

std::string diff_row_label(const DiffRow& r, const DiffOptions& o) {
  std::string s = r.function;
  if (!r.thread.empty() || o.by == GroupBy::Thread) s += " [thread " + (r.thread.empty() ? "?" : r.thread) + "]";
  if (o.by == GroupBy::Caller) s += r.caller.empty() ? std::string(" [no stack]") : " [from " + r.caller + "]";
  if (r.other_values) s += " [" + o.by_value + "=other]";
  else if (r.has_by_value && r.value_spec) s += " [" + o.by_value + "=" + format_value(r.by_value, *r.value_spec) + "]";
  else if (!o.by_value.empty()) s += " [" + o.by_value + " not captured]";
  if (!r.b.probed) s += " (only in A)";
  else if (!r.a.probed) s += " (only in B)";
  return s;
}

std::string diff_method(const ShiftOptions& o) {
  const double up = 1 + o.min_shift;
  return "B/A is B's latency over A's. slower / faster: beyond noise, the whole " + percent_text(o.confidence) +
         " confidence interval of B/A lies above " + format_ratio(up) + " (below " + format_ratio(1 / up) +
         "; --min-shift " + percent_text(o.min_shift) + ", for the noise between runs that one recording cannot "
         "show); ~: within noise; ?: too few calls to bound the interval. Method: distribution-free confidence "
         "intervals on each quantile from order statistics (binomial ranks over every call, read from each "
         "recording's latency histogram), combined for B/A. MAX is one call: its ratio has no interval.";
}

std::vector<std::string> diff_notes(const DiffModel& d) {
  std::vector<std::string> out;
  for (const BinaryPair& b : d.binaries) {
    std::string where = b.path_a == b.path_b ? "" : " (" + b.path_a + " in A, " + b.path_b + " in B)";
    if (b.build_id_a.empty() || b.build_id_b.empty())
      out.push_back(b.name + where + ": no build-id to compare");
    else if (b.same_build())
      out.push_back(b.name + where + ": the same build (build-id " + b.build_id_a.substr(0, 12) + ")");
    else
      out.push_back(b.name + where + ": different builds (build-id " + b.build_id_a.substr(0, 12) + " in A, " +
                    b.build_id_b.substr(0, 12) + " in B)");
  }
  const RecordingMeta &ma = d.a.meta, &mb = d.b.meta;
  if (ma.arch != mb.arch)
    out.push_back(std::string("different architectures: A is ") + std::string(arch_info(ma.arch).name) + ", B is " +
                  std::string(arch_info(mb.arch).name));
  if (ma.hostname != mb.hostname) out.push_back("different hosts: " + ma.hostname + " in A, " + mb.hostname + " in B");
  if (ma.kernel != mb.kernel) out.push_back("different kernels: " + ma.kernel + " in A, " + mb.kernel + " in B");
  if (ma.engine != mb.engine)
    out.push_back("different engines: " + ma.engine + " in A, " + mb.engine + " in B (their probes cost differently, "
                  "which shows in short functions)");
  for (const ReportModel* m : {&d.a, &d.b})
    if (m->lost)
      out.push_back(std::string(m == &d.a ? "A" : "B") + " lost " + with_commas(m->lost) +
                    " events: its calls are undercounted, and its percentiles may lean");
  return out;
}

std::string side_latency(const DiffSide& s, double percent) {
  if (!s.paired || !s.latency.count()) return "-";
  return format_duration(percent >= 100 ? s.latency.max() : s.latency.percentile(percent));
}

std::string regression_text(const DiffModel& d, const Regression& r, double percent) {
  const DiffRow& row = d.rows[r.row];
  const QuantileShift& s = r.shift;
  char p[32];
  std::snprintf(p, sizeof p, "p%g", s.percent);
  return diff_row_label(row, d.options) + ": " + p + " " + format_duration(s.a) + " -> " + format_duration(s.b) + ", " +
         format_ratio(s.ratio) + ", at least " + format_ratio(s.ratio_lo) + " (" +
         percent_text(d.options.shift.confidence) + " confidence): slower by more than " + percent_text(percent / 100);
}

std::string render_text_diff(const DiffModel& d) {
  std::ostringstream os;
  os << "uprof diff: A = " << d.a.path << ", B = " << d.b.path << "\n";
  os << "A:        " << side_summary(d.a) << "\n";
  os << "B:        " << side_summary(d.b) << "\n";
  const auto notes = diff_notes(d);
  for (std::size_t i = 0; i < notes.size(); ++i) os << (i == 0 ? "runs:     " : "          ") << notes[i] << "\n";
  if (d.options.by == GroupBy::Thread) os << "threads:  matched by name (ids differ between runs)\n";
  if (d.options.by == GroupBy::Caller) os << "callers:  matched by the caller's name (record -g)\n";
  os << "\n";

  std::vector<TextTable::Column> cols{{"FUNCTION"}, {"CALLS A->B", Align::Right}};
  for (double p : kDiffPercents) {
    char h[32];
    std::snprintf(h, sizeof h, "P%g A->B", p);
    cols.push_back({h, Align::Right});
    cols.push_back({"B/A"});
  }
  cols.push_back({"MAX A->B", Align::Right});
  cols.push_back({"B/A"});
  TextTable t(std::move(cols));
  for (const DiffRow& r : d.rows) {
    std::vector<std::string> cells{diff_row_label(r, d.options),
                                   (r.a.probed ? with_commas(r.a.calls) : "-") + " -> " +
                                       (r.b.probed ? with_commas(r.b.calls) : "-")};
    for (std::size_t i = 0; i < std::size(kDiffPercents); ++i) {
      cells.push_back(a_to_b(r, kDiffPercents[i]));
      cells.push_back(r.compared() ? format_ratio(r.shifts[i].ratio) + " " + verdict_mark(r.shifts[i].verdict) : "-");
    }
    cells.push_back(a_to_b(r, 100));
    cells.push_back(r.compared() ? format_ratio(r.max_ratio) : "-");
    t.add_row(std::move(cells));
  }
  os << t.render() << "\n";
  // The legend, wrapped at ~110 columns.
  std::istringstream words(diff_method(d.options.shift));
  std::string word, line;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > 110) {
      os << line << "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) os << line << "\n";
  return os.str();
}

}  // namespace uprof
