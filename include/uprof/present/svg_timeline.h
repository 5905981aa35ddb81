// Latency over time as an SVG element: the time since the recording's start across,
// latency up on a log axis. Each call is a dot when every call was kept (CallTimeline
// exact), else the calls are a heat strip (HeatGrid cells, darker for more calls) with
// the slowest calls as dots over it. Percentile markers are horizontal lines. Pure.
//
// What was drawn is in the markup: the <svg> has data-mode="points" or "heat"; dots are
//   <circle class="pt" data-t-ns="..." data-ns="...">, cells <rect class="cell" data-count="...">.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprof/analyse/call_timeline.h"
#include "uprof/present/svg_histogram.h"

namespace uprof {

struct TimelinePlot {
  uint64_t span_ns = 1;           // the time axis: 0 .. span (the recording's length)
  double lo_ns = 1, hi_ns = 10;   // the latency axis (log)
  std::vector<TimedCall> points;  // dots
  const HeatGrid* grid = nullptr; // when set, drawn under the dots
  std::vector<PlotMarker> markers;
  int width = 480, height = 220;
  std::string label;
  std::string attributes;         // extra attributes of the <svg> element, already escaped
};

std::string timeline_svg(const TimelinePlot& plot);

// The heat strip's colour for `count` of `max`: light for few calls, dark for many, by
// log(1 + count); "#rrggbb".
std::string heat_colour(uint64_t count, uint64_t max);

}  // namespace uprof
