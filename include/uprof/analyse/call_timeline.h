// Latency over time, per function, for pictures (the HTML report), in memory that stays
// bounded whatever the number of calls:
//   - up to `exact_calls` calls: every call, as (time since the recording's start,
//     duration, thread);
//   - past that: a heat grid that counts every call (the calls kept so far move into it
//     when it starts) by time column and log-latency row, and the `outliers` slowest
//     calls, exact, so that a rare slow call still shows as itself.
// The grid has a fixed number of columns: when a call lands past the last one, the
// columns double in width (pairs merge), so it always spans what it has seen. Rows are
// LogScale bins, added as the range of durations grows.
//   calls over 8 s, 160 columns starting 1024ns wide: they double 16 times, to 2^26 ns
//   (67ms): 160 of them span 10.7 s. Memory: 160 x (rows: 4 per power of two of
//   latency range) counters, e.g. 160 x 40 for 1us..1ms.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "uprof/analyse/aggregate.h"
#include "uprof/analyse/event_loop.h"
#include "uprof/analyse/log_scale.h"
#include "uprof/analyse/report_model.h"

namespace uprof {

struct TimedCall {
  uint64_t time = 0;      // entry, ns since the recording's start
  uint64_t duration = 0;  // as the report counts it (compensated when asked)
  uint32_t tid = 0;
};

struct TimelineLimits {
  uint32_t exact_calls = 2'000;  // calls kept one by one before the grid takes over
  uint32_t outliers = 24;        // slowest calls kept past that
  uint32_t columns = 160;
  unsigned rows_per_octave = 4;
};

class HeatGrid {
 public:
  HeatGrid(uint32_t columns, unsigned rows_per_octave);

  void add(uint64_t time, uint64_t duration, uint64_t times = 1);

  uint32_t columns() const { return columns_; }
  // Each column covers [i * column_ns, (i + 1) * column_ns); a power of two.
  uint64_t column_ns() const { return uint64_t{1} << column_shift_; }
  const LogScale& scale() const { return scale_; }
  // Rows are LogScale bins first_bin() .. first_bin() + rows() - 1; durations of 0 count in
  // first_bin()'s row. Empty until the first add.
  int first_bin() const { return first_bin_; }
  uint32_t rows() const { return rows_; }
  uint64_t at(uint32_t column, uint32_t row) const { return counts_[static_cast<std::size_t>(row) * columns_ + column]; }
  uint64_t total() const { return total_; }

 private:
  void widen(uint64_t time);
  void fit_row(int bin);

  LogScale scale_;
  uint32_t columns_;
  unsigned column_shift_ = 10;  // columns of 1024ns to start with
  int first_bin_ = 0;
  uint32_t rows_ = 0;
  std::vector<uint64_t> counts_;  // row-major: rows_ x columns_
  uint64_t total_ = 0;
};

// One function's calls over time.
class CallTimeline {
 public:
  explicit CallTimeline(const TimelineLimits& limits) : limits_(limits) {}

  void add(const TimedCall& c);

  uint64_t calls() const { return calls_; }
  // Every call was kept: calls() holds them all, in the order they were added.
  bool exact() const { return !grid_; }
  // Every call when exact(); otherwise the slowest (TimelineLimits::outliers), slowest first.
  std::vector<TimedCall> kept() const;
  // Past exact_calls: every call counted by time and duration.
  const HeatGrid* grid() const { return grid_ ? &*grid_ : nullptr; }
  uint64_t last_time() const { return last_time_; }

 private:
  void keep_outlier(const TimedCall& c);

  TimelineLimits limits_;
  uint64_t calls_ = 0;
  uint64_t last_time_ = 0;
  std::vector<TimedCall> kept_;     // all calls, then a min-heap of the slowest by duration
  std::optional<HeatGrid> grid_;
};

// An observer of the report's calls (build_report's `calls`): one CallTimeline per
// function, fed every call the report counts, with the report's durations.
class TimelineSink final : public CallObserver {
 public:
  explicit TimelineSink(TimelineLimits limits = {}) : limits_(limits) {}

  void begin(const ReportModel& m) override;
  void on_call(const Call& call, std::string_view comm) override;

  // Per function of the model (empty until begin).
  const std::vector<CallTimeline>& timelines() const { return timelines_; }

 private:
  TimelineLimits limits_;
  AggregateOptions options_;
  uint64_t start_ = 0;
  std::vector<CallTimeline> timelines_;
};

}  // namespace uprof
