// A latency histogram as an SVG element: bars over a log time axis, percentile
// markers, axes with units; a tooltip (<title>) on every bar and marker. Pure: the
// same input gives the same markup.
//
// What was drawn is in the markup, for tests and scripts: every bar is
//   <rect class="bar" data-lo-ns="1000000" data-hi-ns="1090508" data-count="12" ...>
// and every marker <line class="marker" data-name="p50" data-ns="1180000" ...>.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprof/analyse/log_scale.h"

namespace uprof {

struct PlotMarker {
  std::string name;  // "p50"
  uint64_t ns = 0;
};

// One set of counts. The first series of a plot is drawn as bars, any further one
// as an outline over them (a comparison: before and after).
struct HistSeries {
  LogBins bins;
  std::string name;        // for tooltips: "A", "before"; may be empty
  std::string css_class;   // added to its bars or outline; may be empty
};

struct HistogramPlot {
  std::vector<HistSeries> series;
  std::vector<PlotMarker> markers;
  double lo_ns = 1, hi_ns = 10;  // the time axis: nice_log_range of the data, or shared by several plots
  uint64_t max_count = 0;        // the count axis' top; 0: the highest bar
  int width = 480, height = 220;
  bool compact = false;          // a small multiple: tighter margins, no axis titles
  std::string label;             // what it shows, for screen readers and the tooltip of the plot
  std::string attributes;        // extra attributes of the <svg> element, already escaped
};

std::string histogram_svg(const HistogramPlot& plot);

// A time axis that holds every bar of `bins`, out to 1-2-5 values: (962us, 10.9ms) -> (500us, 20ms).
std::pair<double, double> histogram_range(const LogBins& bins);

}  // namespace uprof
