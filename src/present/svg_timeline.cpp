#include "uprof/present/svg_timeline.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "uprof/present/markup.h"
#include "uprof/present/plot_axes.h"
#include "uprof/util/thousands.h"

namespace uprof {

namespace {

std::string time_label(double ns) { return ns == 0 ? std::string("0") : axis_duration(ns); }

std::string rect(const char* cls, double x0, double y0, double x1, double y1) {
  return std::string("<rect class=\"") + cls + "\" x=\"" + coord(x0) + "\" y=\"" + coord(y0) + "\" width=\"" +
         coord(x1 - x0) + "\" height=\"" + coord(y1 - y0) + "\"";
}

}  // namespace

std::string heat_colour(uint64_t count, uint64_t max) {
  // From a pale blue to a deep one: prints in grey as light to dark too.
  static constexpr std::array<std::array<double, 3>, 5> kStops = {{
      {222, 235, 247}, {158, 202, 225}, {66, 146, 198}, {8, 81, 156}, {8, 48, 107}}};
  const double t = max <= 1 ? 1.0 : std::log1p(static_cast<double>(count)) / std::log1p(static_cast<double>(max));
  const double pos = std::clamp(t, 0.0, 1.0) * (kStops.size() - 1);
  const auto i = std::min<std::size_t>(static_cast<std::size_t>(pos), kStops.size() - 2);
  const double f = pos - static_cast<double>(i);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<unsigned>(std::lround(kStops[i][0] + f * (kStops[i + 1][0] - kStops[i][0]))),
                static_cast<unsigned>(std::lround(kStops[i][1] + f * (kStops[i + 1][1] - kStops[i][1]))),
                static_cast<unsigned>(std::lround(kStops[i][2] + f * (kStops[i + 1][2] - kStops[i][2]))));
  return buf;
}

namespace {

// The plot area of a timeline and its two axes: time since the start across, latency
// (log) up.
struct TimelineArea {
  double left, right, top, bottom, span;
  LinearAxis x;
  LogAxis y;
  double y_of(double ns) const { return std::clamp(y.at(std::max(ns, 1.0)), top, bottom); }
};

TimelineArea timeline_area(const TimelinePlot& p) {
  const double left = 50, right = p.width - 14, top = 30, bottom = p.height - 34;
  const double span = static_cast<double>(std::max<uint64_t>(p.span_ns, 1));
  return TimelineArea{.left = left, .right = right, .top = top, .bottom = bottom, .span = span,
                      .x = LinearAxis{.lo = 0, .hi = span, .p0 = left, .p1 = right},
                      .y = LogAxis{.lo = p.lo_ns, .hi = p.hi_ns, .p0 = bottom, .p1 = top}};
}

// Grid lines and labels of the latency axis.
std::string latency_axis(const TimelinePlot& p, const TimelineArea& a) {
  std::string out;
  const std::size_t max_y_labels = static_cast<std::size_t>(std::max(2.0, (a.bottom - a.top) / 26));
  for (const Tick& t : log_ticks(p.lo_ns, p.hi_ns, max_y_labels, axis_duration)) {
    const double ty = a.y.at(t.value);
    out += "<line class=\"grid" + std::string(t.label.empty() ? " minor" : "") + "\" x1=\"" + coord(a.left) + "\" x2=\"" +
           coord(a.right) + "\" y1=\"" + coord(ty) + "\" y2=\"" + coord(ty) + "\"/>";
    if (!t.label.empty())
      out += "<text class=\"tick-label\" x=\"" + coord(a.left - 5) + "\" y=\"" + coord(ty + 3.5) +
             "\" text-anchor=\"end\">" + escape_markup(t.label) + "</text>";
  }
  out += "<text class=\"axis-title\" x=\"" + coord(a.left - 5) + "\" y=\"" + coord(a.top - 18) +
         "\" text-anchor=\"end\">latency</text>";
  return out;
}

// The heat map's cells, one per time column and latency bin that holds calls, and its
// scale: five swatches from one call to the most in a cell.
std::string heat_cells(const HeatGrid& g, const TimelineArea& a) {
  std::string out;
  uint64_t max = 0;
  for (uint32_t r = 0; r < g.rows(); ++r)
    for (uint32_t c = 0; c < g.columns(); ++c) max = std::max(max, g.at(c, r));
  for (uint32_t r = 0; r < g.rows(); ++r) {
    const int bin = g.first_bin() + static_cast<int>(r);
    const uint64_t lo = g.scale().lo_ns(bin), hi = g.scale().lo_ns(bin + 1);
    const double y0 = a.y_of(static_cast<double>(hi)), y1 = a.y_of(static_cast<double>(lo));
    if (y1 - y0 < 0.01) continue;
    for (uint32_t c = 0; c < g.columns(); ++c) {
      const uint64_t n = g.at(c, r);
      if (!n) continue;
      const double t0 = static_cast<double>(c) * static_cast<double>(g.column_ns());
      const double t1 = std::min(a.span, t0 + static_cast<double>(g.column_ns()));
      if (t0 >= a.span) continue;
      out += rect("cell", a.x.at(t0), y0, std::max(a.x.at(t1), a.x.at(t0) + 1), y1) + " fill=\"" + heat_colour(n, max) +
             "\" data-count=\"" + std::to_string(n) + "\"><title>" +
             escape_markup(time_label(t0) + " to " + time_label(t1) + ": " + with_commas(n) + (n == 1 ? " call" : " calls") +
                           " in [" + plot_duration(lo) + ", " + plot_duration(hi) + ")") +
             "</title></rect>";
    }
  }
  const double sx = a.right - 5 * 12;
  out += "<text class=\"tick-label\" x=\"" + coord(sx - 4) + "\" y=\"" + coord(a.top - 14) +
         "\" text-anchor=\"end\">calls per cell 1</text>";
  for (int i = 0; i < 5; ++i) {
    const auto n = static_cast<uint64_t>(std::llround(std::expm1(std::log1p(static_cast<double>(max)) * i / 4.0)));
    out += rect("swatch", sx + i * 12, a.top - 24, sx + i * 12 + 11, a.top - 14) + " fill=\"" +
           heat_colour(std::max<uint64_t>(n, 1), max) + "\"/>";
  }
  out += "<text class=\"tick-label\" x=\"" + coord(a.right + 2) + "\" y=\"" + coord(a.top - 14) +
         "\" text-anchor=\"start\">" + escape_markup(axis_count(static_cast<double>(max))) + "</text>";
  return out;
}

// Horizontal lines at p50, p99...: each named at the right end, unless the previous
// marker's label is in the way.
std::string marker_lines(const TimelinePlot& p, const TimelineArea& a) {
  std::string out;
  double last_label_y = -1e9;
  for (const PlotMarker& m : p.markers) {
    if (m.ns == 0) continue;
    const double my = a.y_of(static_cast<double>(m.ns));
    if (std::abs(my - last_label_y) >= 11) {
      last_label_y = my;
      out += "<text class=\"marker-label m-" + css_name(m.name) + "\" x=\"" + coord(a.right - 2) + "\" y=\"" +
             coord(my - 3) + "\" text-anchor=\"end\">" + escape_markup(m.name) + "</text>";
    }
    out += "<line class=\"marker m-" + css_name(m.name) + "\" data-name=\"" + escape_markup(m.name) +
           "\" data-ns=\"" + std::to_string(m.ns) + "\" x1=\"" + coord(a.left) + "\" x2=\"" + coord(a.right) + "\" y1=\"" +
           coord(my) + "\" y2=\"" + coord(my) + "\"><title>" + escape_markup(m.name + " " + plot_duration(m.ns)) +
           "</title></line>";
  }
  return out;
}

// One dot per call: every call, or over a heat map the slowest ones.
std::string call_points(const TimelinePlot& p, const TimelineArea& a) {
  std::string out;
  const bool outliers = p.grid != nullptr;
  // Few dots can be big; thousands must not hide each other.
  const char* radius = outliers ? "3.2" : p.points.size() <= 200 ? "3.2" : p.points.size() <= 1000 ? "2.6" : "2";
  for (const TimedCall& c : p.points) {
    const double cx = a.x.at(static_cast<double>(std::min<uint64_t>(c.time, p.span_ns)));
    const double cy = a.y_of(static_cast<double>(c.duration));
    out += "<circle class=\"pt" + std::string(outliers ? " outlier" : "") + "\" data-t-ns=\"" + std::to_string(c.time) +
           "\" data-ns=\"" + std::to_string(c.duration) + "\" cx=\"" + coord(cx) + "\" cy=\"" + coord(cy) + "\" r=\"" +
           radius + "\"><title>" +
           escape_markup("at " + time_label(static_cast<double>(c.time)) + ": " + plot_duration(c.duration) +
                         (c.tid ? ", thread " + std::to_string(c.tid) : "") + (outliers ? " (one of the slowest)" : "")) +
           "</title></circle>";
  }
  return out;
}

// The time axis along the bottom, with its ticks and title.
std::string time_axis(const TimelinePlot& p, const TimelineArea& a) {
  std::string out = "<line class=\"axis\" x1=\"" + coord(a.left) + "\" x2=\"" + coord(a.right) + "\" y1=\"" +
                    coord(a.bottom) + "\" y2=\"" + coord(a.bottom) + "\"/>";
  const std::size_t target = static_cast<std::size_t>(std::max(2.0, (a.right - a.left) / 80));
  for (const Tick& t : linear_ticks(0, a.span, target, time_label)) {
    const double tx = a.x.at(t.value);
    out += "<line class=\"tick\" x1=\"" + coord(tx) + "\" x2=\"" + coord(tx) + "\" y1=\"" + coord(a.bottom) + "\" y2=\"" +
           coord(a.bottom + 5) + "\"/><text class=\"tick-label\" x=\"" + coord(tx) + "\" y=\"" + coord(a.bottom + 15) +
           "\" text-anchor=\"middle\">" + escape_markup(t.label) + "</text>";
  }
  out += "<text class=\"axis-title\" x=\"" + coord((a.left + a.right) / 2) + "\" y=\"" + coord(p.height - 4) +
         "\" text-anchor=\"middle\">time since the recording started</text>";
  return out;
}

}  // namespace

std::string timeline_svg(const TimelinePlot& p) {
  const double w = p.width, h = p.height;
  const TimelineArea a = timeline_area(p);
  std::string out = "<svg class=\"plot timeline\" data-plot=\"timeline\" data-mode=\"" +
                    std::string(p.grid ? "heat" : "points") + "\" width=\"" + coord(w) + "\" height=\"" + coord(h) +
                    "\" viewBox=\"0 0 " + coord(w) + " " + coord(h) + "\" role=\"img\" aria-label=\"" +
                    escape_markup(p.label) + "\"" + (p.attributes.empty() ? "" : " " + p.attributes) + ">";
  out += "<title>" + escape_markup(p.label) + "</title>";
  out += latency_axis(p, a);
  if (p.grid && p.grid->rows()) out += heat_cells(*p.grid, a);
  out += marker_lines(p, a);
  out += call_points(p, a);
  out += time_axis(p, a);
  out += "</svg>";
  return out;
}

}  // namespace uprof
