#include "uprof/present/svg_histogram.h"

#include <algorithm>
#include <cmath>

#include "uprof/present/markup.h"
#include "uprof/present/plot_axes.h"
#include "uprof/util/thousands.h"

namespace uprof {

namespace {

struct Frame {
  double left, right, top, bottom;  // the plotting area, in pixels
};

std::string calls_text(uint64_t n) { return with_commas(n) + (n == 1 ? " call" : " calls"); }

// Every marker is a dashed line with its name above the plot. Markers a few pixels
// apart share one label ("p99/p99.9"); labels that would still touch go a row down,
// and when no row has room the line and its tooltip say it alone.
void draw_markers(std::string& out, const HistogramPlot& p, const LogAxis& x, const Frame& f) {
  constexpr double kRowHeight = 11, kNear = 4, kCharWidth = 7.0;  // 10.5px bold digits are ~7px wide
  struct Label {
    double x;
    std::string text, css, tip;
  };
  std::vector<Label> labels;
  double cluster_x = -1e9;
  for (const PlotMarker& m : p.markers) {
    if (m.ns == 0) continue;
    const double mx = x.at(static_cast<double>(m.ns));
    if (mx < f.left - 0.5 || mx > f.right + 0.5) continue;
    const std::string tip = m.name + " " + plot_duration(m.ns);
    out += "<line class=\"marker m-" + css_name(m.name) + "\" data-name=\"" + escape_markup(m.name) +
           "\" data-ns=\"" + std::to_string(m.ns) + "\" x1=\"" + coord(mx) + "\" x2=\"" + coord(mx) + "\" y1=\"" +
           coord(f.top) + "\" y2=\"" + coord(f.bottom) + "\"><title>" + escape_markup(tip) + "</title></line>";
    if (!labels.empty() && std::abs(mx - cluster_x) <= kNear) {
      labels.back().text += "/" + m.name;
      labels.back().tip += ", " + tip;
      labels.back().css = css_name(m.name);  // the colour of the highest
      continue;
    }
    cluster_x = mx;
    labels.push_back(Label{.x = mx, .text = m.name, .css = css_name(m.name), .tip = tip});
  }
  const int rows = p.compact ? 1 : 2;
  std::vector<double> row_end(static_cast<std::size_t>(rows), -1e9);
  for (const Label& l : labels) {
    const double half = (kCharWidth * static_cast<double>(l.text.size()) + 8) / 2;
    for (int r = 0; r < rows; ++r) {
      double& end = row_end[static_cast<std::size_t>(r)];
      if (l.x - half < end) continue;
      end = l.x + half;
      out += "<text class=\"marker-label m-" + l.css + "\" x=\"" + coord(l.x) + "\" y=\"" +
             coord(f.top - 4 - kRowHeight * r) + "\" text-anchor=\"middle\">" + escape_markup(l.text) + "<title>" +
             escape_markup(l.tip) + "</title></text>";
      break;
    }
  }
}

std::string bar_tooltip(const HistSeries& s, uint64_t lo, uint64_t hi, uint64_t count) {
  std::string t = (s.name.empty() ? "" : s.name + ": ") + "[" + plot_duration(lo) + ", " + plot_duration(hi) + "): ";
  return t + calls_text(count);
}

// A bar's height for `count`: a count of 1 beside a million is still drawn, a sliver, not nothing.
double bar_height(const Frame& f, const LinearAxis& y, uint64_t count) {
  return std::max(2.0, f.bottom - y.at(static_cast<double>(count)));
}

// Count axis: grid lines across, labels on the left.
void draw_count_axis(std::string& out, const HistogramPlot& p, const Frame& f, double gutter, const LinearAxis& y,
                     uint64_t top) {
  for (const Tick& t : linear_ticks(0, static_cast<double>(top), p.compact ? 2 : 4, axis_count)) {
    const double ty = y.at(t.value);
    out += "<line class=\"grid\" x1=\"" + coord(f.left - gutter) + "\" x2=\"" + coord(f.right) + "\" y1=\"" + coord(ty) +
           "\" y2=\"" + coord(ty) + "\"/>";
    out += "<text class=\"tick-label\" x=\"" + coord(f.left - gutter - 5) + "\" y=\"" + coord(ty + 3.5) +
           "\" text-anchor=\"end\">" + escape_markup(t.label) + "</text>";
  }
  if (!p.compact)
    out += "<text class=\"axis-title\" x=\"" + coord(f.left - gutter - 5) + "\" y=\"" + coord(f.top - 18) +
           "\" text-anchor=\"end\">calls</text>";
}

// The first series as bars: durations of 0 in the gutter, then one bar per bin.
void draw_bars(std::string& out, const HistSeries& s, const std::string& cls, const Frame& f, double gutter,
               const LogAxis& x, const LinearAxis& y) {
  if (s.bins.zeros) {
    const double bh = bar_height(f, y, s.bins.zeros);
    out += "<rect class=\"bar zero" + cls + "\" data-lo-ns=\"0\" data-hi-ns=\"0\" data-count=\"" +
           std::to_string(s.bins.zeros) + "\" x=\"" + coord(f.left - gutter + 3) + "\" y=\"" + coord(f.bottom - bh) +
           "\" width=\"" + coord(gutter - 7) + "\" height=\"" + coord(bh) + "\"><title>" +
           escape_markup((s.name.empty() ? "" : s.name + ": ") + "0 (compensated to nothing): " +
                         calls_text(s.bins.zeros)) +
           "</title></rect>";
  }
  for (const LogBin& b : s.bins.bins) {
    const double x0 = std::max(f.left, x.at(static_cast<double>(b.lo)));
    const double x1 = std::min(f.right, x.at(static_cast<double>(b.hi)));
    const double bh = bar_height(f, y, b.count);
    out += "<rect class=\"bar" + cls + "\" data-lo-ns=\"" + std::to_string(b.lo) + "\" data-hi-ns=\"" +
           std::to_string(b.hi) + "\" data-count=\"" + std::to_string(b.count) + "\" x=\"" + coord(x0 + 0.5) +
           "\" y=\"" + coord(f.bottom - bh) + "\" width=\"" + coord(std::max(1.0, x1 - x0 - 1)) + "\" height=\"" +
           coord(bh) + "\"><title>" + escape_markup(bar_tooltip(s, b.lo, b.hi, b.count)) + "</title></rect>";
  }
}

// A further series: its outline, stepping along its bins.
void draw_outline(std::string& out, const HistSeries& s, const std::string& cls, const Frame& f, const LogAxis& x,
                  const LinearAxis& y) {
  std::string d;
  double last_x = -1;
  for (const LogBin& b : s.bins.bins) {
    const double x0 = x.at(static_cast<double>(b.lo)), x1 = x.at(static_cast<double>(b.hi));
    const double ty = f.bottom - bar_height(f, y, b.count);
    if (std::abs(x0 - last_x) > 0.01) d += (d.empty() ? "M" : " L") + coord(x0) + " " + coord(f.bottom);
    d += " L" + coord(x0) + " " + coord(ty) + " L" + coord(x1) + " " + coord(ty) + " L" + coord(x1) + " " +
         coord(f.bottom);
    last_x = x1;
  }
  if (!d.empty())
    out += "<path class=\"outline" + cls + "\" d=\"" + d + "\"><title>" + escape_markup(s.name) + "</title></path>";
}

// Time axis: the baseline, ticks and their labels, the unit in the labels.
void draw_latency_axis(std::string& out, const HistogramPlot& p, const Frame& f, double gutter, const LogAxis& x,
                       bool zeros) {
  out += "<line class=\"axis\" x1=\"" + coord(f.left - gutter) + "\" x2=\"" + coord(f.right) + "\" y1=\"" +
         coord(f.bottom) + "\" y2=\"" + coord(f.bottom) + "\"/>";
  if (zeros)
    out += "<text class=\"tick-label\" x=\"" + coord(f.left - gutter / 2) + "\" y=\"" + coord(f.bottom + 13) +
           "\" text-anchor=\"middle\">0</text>";
  const std::size_t max_labels = static_cast<std::size_t>(std::max(2.0, (f.right - f.left) / (p.compact ? 48 : 52)));
  for (const Tick& t : log_ticks(p.lo_ns, p.hi_ns, max_labels, axis_duration)) {
    const double tx = x.at(t.value);
    out += "<line class=\"tick" + std::string(t.label.empty() ? " minor" : "") + "\" x1=\"" + coord(tx) + "\" x2=\"" +
           coord(tx) + "\" y1=\"" + coord(f.bottom) + "\" y2=\"" + coord(f.bottom + (t.label.empty() ? 3 : 5)) + "\"/>";
    if (!t.label.empty())
      out += "<text class=\"tick-label\" x=\"" + coord(tx) + "\" y=\"" + coord(f.bottom + 15) +
             "\" text-anchor=\"middle\">" + escape_markup(t.label) + "</text>";
  }
  if (!p.compact)
    out += "<text class=\"axis-title\" x=\"" + coord((f.left + f.right) / 2) + "\" y=\"" + coord(p.height - 4) +
           "\" text-anchor=\"middle\">latency (log scale)</text>";
}

}  // namespace

std::pair<double, double> histogram_range(const LogBins& bins) {
  if (bins.bins.empty()) return {1, 10};
  const auto [lo, hi] = bins.span();
  return nice_log_range(static_cast<double>(lo), static_cast<double>(hi));
}

std::string histogram_svg(const HistogramPlot& p) {
  const double w = p.width, h = p.height;
  uint64_t zeros = 0, top = p.max_count;
  for (const HistSeries& s : p.series) {
    zeros = std::max(zeros, s.bins.zeros);
    if (!p.max_count) top = std::max(top, s.bins.max_count());
  }
  top = std::max<uint64_t>(top, 1);
  // Durations of 0 (compensated away) have no place on a log axis: a bar of their own left of it.
  const double gutter = zeros ? (p.compact ? 16 : 24) : 0;
  Frame f{.left = (p.compact ? 34.0 : 50.0) + gutter, .right = w - (p.compact ? 8 : 14), .top = p.compact ? 16.0 : 30.0,
          .bottom = h - (p.compact ? 18.0 : 34.0)};
  const LogAxis x{.lo = p.lo_ns, .hi = p.hi_ns, .p0 = f.left, .p1 = f.right};
  const LinearAxis y{.lo = 0, .hi = static_cast<double>(top), .p0 = f.bottom, .p1 = f.top};

  std::string out = "<svg class=\"plot hist" + std::string(p.compact ? " compact" : "") +
                    "\" data-plot=\"histogram\" width=\"" + coord(w) + "\" height=\"" + coord(h) + "\" viewBox=\"0 0 " +
                    coord(w) + " " + coord(h) + "\" role=\"img\" aria-label=\"" + escape_markup(p.label) + "\"" +
                    (p.attributes.empty() ? "" : " " + p.attributes) + ">";
  out += "<title>" + escape_markup(p.label) + "</title>";

  draw_count_axis(out, p, f, gutter, y, top);
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    const HistSeries& s = p.series[i];
    const std::string cls = s.css_class.empty() ? "" : " " + escape_markup(s.css_class);
    if (i == 0) {
      draw_bars(out, s, cls, f, gutter, x, y);
    } else {
      draw_outline(out, s, cls, f, x, y);
    }
  }
  draw_markers(out, p, x, f);
  draw_latency_axis(out, p, f, gutter, x, zeros != 0);
  out += "</svg>";
  return out;
}

}  // namespace uprof
