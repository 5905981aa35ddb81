// uprof diff --format html: one page that opens offline in any browser. Inline CSS;
// each quantile's B/A drawn as an inline SVG bar on a log axis centred on x1, with
// the tolerance band, the confidence interval and the point; no script, nothing
// fetched. The cells carry data-verdict and data-ratio for whoever reads the page
// as data.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "uprof/analyse/duration_format.h"
#include "uprof/present/diff_formats.h"
#include "uprof/present/report_text.h"
#include "uprof/util/thousands.h"

namespace uprof {
namespace {

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

// "x1.45" as people write it: "×1.45".
std::string ratio_html(double r) {
  std::string s = format_ratio(r);
  return s[0] == 'x' ? "\u00d7" + s.substr(1) : s;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

const char* verdict_class(ShiftVerdict v) {
  switch (v) {
    case ShiftVerdict::Slower: return "slower";
    case ShiftVerdict::Faster: return "faster";
    case ShiftVerdict::Same: return "same";
    case ShiftVerdict::TooFew: return "toofew";
  }
  return "toofew";
}

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; margin: 0 0 12px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { padding: 4px 8px; border-bottom: 1px solid #e2e2e2; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; font-weight: 600; }
td.fn, td.text, th.text { text-align: left; }
td.fn { font-family: ui-monospace, monospace; }
td.shift svg { vertical-align: middle; margin-right: 6px; }
.slower { color: #b03a2e; } .faster { color: #1e7b45; } .same { color: #666; } .toofew { color: #999; }
.fail { color: #b03a2e; font-weight: 600; }
ul.notes { margin: 4px 0 12px; padding-left: 20px; }
p.method { max-width: 60em; color: #444; }
)";

// The bar of one ratio: its interval and point on a log axis of +-axis (x1/axis to
// x axis) centred on x1, over the band of +-min_shift. Values past the axis stop at its edge.
class RatioBar {
 public:
  RatioBar(double axis, double min_shift) : half_span_(std::log2(axis)), tolerance_(1 + min_shift) {}

  std::string svg(const QuantileShift& s) const {
    const char* color = s.verdict == ShiftVerdict::Slower   ? "#b03a2e"
                        : s.verdict == ShiftVerdict::Faster ? "#1e7b45"
                                                            : "#888";
    std::ostringstream o;
    o << "<svg width=\"" << kWidth << "\" height=\"" << kHeight << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
      << "\" role=\"img\"><title>B/A " << ratio_html(s.ratio) << ", interval " << ratio_html(s.ratio_lo) << " to "
      << (std::isfinite(s.ratio_hi) ? ratio_html(s.ratio_hi) : "unbounded") << "</title>";
    o << "<rect x=\"0\" y=\"0\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" fill=\"#f6f6f6\"/>";
    const double t0 = x(1 / tolerance_), t1 = x(tolerance_);
    o << "<rect x=\"" << num(t0) << "\" y=\"0\" width=\"" << num(t1 - t0) << "\" height=\"" << kHeight
      << "\" fill=\"#e3e3e3\"/>";
    o << "<line x1=\"" << num(x(1)) << "\" x2=\"" << num(x(1)) << "\" y1=\"0\" y2=\"" << kHeight
      << "\" stroke=\"#999\" stroke-width=\"1\"/>";
    const double lo = x(s.ratio_lo), hi = x(s.ratio_hi);
    o << "<rect x=\"" << num(lo) << "\" y=\"5\" width=\"" << num(std::max(1.0, hi - lo)) << "\" height=\"" << kHeight - 10
      << "\" fill=\"" << color << "\" fill-opacity=\"0.35\"/>";
    o << "<rect x=\"" << num(x(s.ratio) - 1) << "\" y=\"2\" width=\"2\" height=\"" << kHeight - 4 << "\" fill=\"" << color
      << "\"/>";
    o << "</svg>";
    return o.str();
  }

 private:
  static constexpr int kWidth = 140;
  static constexpr int kHeight = 16;
  double x(double ratio) const {
    const double edge = kWidth / 2.0 - 2;
    double l = ratio > 0 ? std::log2(ratio) : -half_span_;
    if (!std::isfinite(l)) l = half_span_;
    return kWidth / 2.0 + std::clamp(l / half_span_, -1.0, 1.0) * edge;
  }
  double half_span_;
  double tolerance_;
};

// The axis: wide enough for every point and bounded interval end on the page, from
// x1.5 to x16 either way.
double axis_for(const DiffModel& d) {
  double widest = 1.5;
  for (const DiffRow& r : d.rows)
    for (const QuantileShift& s : r.shifts)
      for (double v : {s.ratio, s.ratio_lo, s.ratio_hi})
        if (std::isfinite(v) && v > 0) widest = std::max({widest, v, 1 / v});
  return std::min(widest * 1.1, 16.0);
}

void side_row(std::ostringstream& o, const char* name, const ReportModel& m) {
  o << "<tr><th>" << name << "</th><td class=\"text\">" << html_escape(m.path) << "</td><td class=\"text\">"
    << html_escape(join_command(m.meta.command)) << "</td><td class=\"text\">" << html_escape(recorded_summary(m))
    << "</td><td>" << with_commas(m.samples) << "</td><td>" << with_commas(m.lost) << "</td></tr>\n";
}

}  // namespace

std::string render_html_diff(const DiffModel& d, std::optional<double> fail_above) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>uprof diff: "
    << html_escape(d.a.path) << " \u2192 " << html_escape(d.b.path) << "</title>\n<style>" << kStyle
    << "</style></head>\n<body>\n<h1>uprof diff</h1>\n";
  o << "<table class=\"facts\"><tr><th></th><th class=\"text\">file</th><th class=\"text\">command</th>"
       "<th class=\"text\">recorded</th><th>samples</th><th>lost</th></tr>\n";
  side_row(o, "A", d.a);
  side_row(o, "B", d.b);
  o << "</table>\n";
  const auto notes = diff_notes(d);
  if (!notes.empty()) {
    o << "<ul class=\"notes\">\n";
    for (const auto& n : notes) o << "<li>" << html_escape(n) << "</li>\n";
    o << "</ul>\n";
  }
  if (fail_above) {
    const auto slower = regressions(d, *fail_above);
    char pct[32];
    std::snprintf(pct, sizeof pct, "%g%%", *fail_above);
    if (slower.empty()) {
      o << "<p>--fail-above " << pct << ": no function's p50 or p99 got slower by more than that.</p>\n";
    } else {
      o << "<p class=\"fail\">--fail-above " << pct << ": " << slower.size() << " regression"
        << (slower.size() == 1 ? "" : "s") << "</p>\n<ul class=\"notes\">\n";
      for (const Regression& r : slower) o << "<li>" << html_escape(regression_text(d, r, *fail_above)) << "</li>\n";
      o << "</ul>\n";
    }
  }

  const RatioBar bar(axis_for(d), d.options.shift.min_shift);
  o << "<table class=\"diff\">\n<thead><tr><th class=\"text\">function</th><th>calls A</th><th>calls B</th>";
  for (double p : kDiffPercents) o << "<th>p" << p << " A \u2192 B</th><th class=\"text\">B/A</th>";
  o << "<th>max A \u2192 B</th><th>B/A</th></tr></thead>\n<tbody>\n";
  for (const DiffRow& r : d.rows) {
    o << "<tr><td class=\"fn\">" << html_escape(diff_row_label(r, d.options)) << "</td><td>"
      << (r.a.probed ? with_commas(r.a.calls) : "-") << "</td><td>" << (r.b.probed ? with_commas(r.b.calls) : "-")
      << "</td>";
    for (std::size_t i = 0; i < std::size(kDiffPercents); ++i) {
      o << "<td>" << side_latency(r.a, kDiffPercents[i]) << " \u2192 " << side_latency(r.b, kDiffPercents[i]) << "</td>";
      if (!r.compared()) {
        o << "<td class=\"text\">-</td>";
        continue;
      }
      const QuantileShift& s = r.shifts[i];
      o << "<td class=\"text shift " << verdict_class(s.verdict) << "\" data-verdict=\"" << to_string(s.verdict)
        << "\" data-ratio=\"" << s.ratio << "\">" << bar.svg(s) << ratio_html(s.ratio) << " "
        << html_escape(s.verdict == ShiftVerdict::Same ? "~" : to_string(s.verdict)) << "</td>";
    }
    o << "<td>" << side_latency(r.a, 100) << " \u2192 " << side_latency(r.b, 100) << "</td><td>"
      << (r.compared() ? ratio_html(r.max_ratio) : "-") << "</td></tr>\n";
  }
  o << "</tbody></table>\n<p class=\"method\">" << html_escape(diff_method(d.options.shift))
    << " Bars: B/A on a log axis from " << ratio_html(1 / axis_for(d)) << " to " << ratio_html(axis_for(d))
    << "; the grey band is the tolerance, the pale bar the confidence interval, the dark mark the ratio.</p>\n"
       "</body></html>\n";
  return o.str();
}

}  // namespace uprof
