// The arithmetic of a plot's axes, apart from drawing: where a value goes in pixels,
// which round values get a tick and how each is labelled.
//   log time axis over (1.05ms, 12ms): range [1ms, 20ms], ticks 1ms 2ms 5ms 10ms 20ms
//   log time axis over (300ns, 2s): decades 1us 10us ... 1s labelled, 2 and 5 unlabelled
//   count axis over [0, 37]: 0 10 20 30; over [0, 5e6]: 0 1M 2M 3M 4M 5M
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace uprof {

// Durations as plots write them, "us" as "µs": a tooltip's exact-ish value "3.41µs"
// (three significant digits, as the text report), an axis label's round one "20ms".
std::string plot_duration(uint64_t ns);
std::string axis_duration(double ns);
// Counts on an axis: 950, 1.2k, 45k, 5M.
std::string axis_count(double n);
// A coordinate for SVG: one decimal at most ("12", "12.5").
std::string coord(double v);

struct Tick {
  double value = 0;
  std::string label;  // empty: a minor tick, drawn without text
};

// Maps [lo, hi] onto pixels [p0, p1] (p1 < p0 for an upward y axis).
struct LinearAxis {
  double lo = 0, hi = 1, p0 = 0, p1 = 1;
  double at(double v) const;
};

// Maps [lo, hi] (both > 0) onto [p0, p1] by their logarithms.
struct LogAxis {
  double lo = 1, hi = 10, p0 = 0, p1 = 1;
  double at(double v) const;
};

// [lo, hi] out to the nearest 1-2-5 values around them: (1.05ms, 12ms) -> (1ms, 20ms).
// lo == hi widens to the 1-2-5 values below and above. Both at least 1.
std::pair<double, double> nice_log_range(double lo, double hi);

// Ticks at 1-2-5 values in [lo, hi]: all labelled when at most `max_labels`, else the
// powers of ten (every n-th when there are still too many), the rest minor.
std::vector<Tick> log_ticks(double lo, double hi, std::size_t max_labels,
                            const std::function<std::string(double)>& label);

// Ticks at multiples of a 1-2-5 step, about `target` of them, from the first multiple
// at or above lo to hi.
std::vector<Tick> linear_ticks(double lo, double hi, std::size_t target,
                               const std::function<std::string(double)>& label);

}  // namespace uprof
