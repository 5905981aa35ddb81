#include "uprof/analyse/call_timeline.h"

#include <algorithm>

namespace uprof {

namespace {

// A min-heap on duration: its top is the fastest of the slowest calls kept.
bool slower(const TimedCall& a, const TimedCall& b) { return a.duration > b.duration; }

}  // namespace

HeatGrid::HeatGrid(uint32_t columns, unsigned rows_per_octave)
    : scale_(rows_per_octave), columns_(std::max<uint32_t>(columns, 2) & ~1u) {}

// Doubles the columns' width, merging pairs, until `time` falls in the last column or before.
void HeatGrid::widen(uint64_t time) {
  while ((time >> column_shift_) >= columns_) {
    for (uint32_t r = 0; r < rows_; ++r) {
      uint64_t* row = &counts_[static_cast<std::size_t>(r) * columns_];
      for (uint32_t c = 0; c < columns_ / 2; ++c) row[c] = row[2 * c] + row[2 * c + 1];
      std::fill(row + columns_ / 2, row + columns_, 0);
    }
    ++column_shift_;
  }
}

// Makes `bin` one of the rows, keeping the counts where they are.
void HeatGrid::fit_row(int bin) {
  if (rows_ == 0) {
    first_bin_ = bin;
    rows_ = 1;
    counts_.assign(columns_, 0);
    return;
  }
  if (bin < first_bin_) {
    const auto more = static_cast<std::size_t>(first_bin_ - bin);
    counts_.insert(counts_.begin(), more * columns_, 0);
    rows_ += static_cast<uint32_t>(more);
    first_bin_ = bin;
  } else if (bin >= first_bin_ + static_cast<int>(rows_)) {
    rows_ = static_cast<uint32_t>(bin - first_bin_ + 1);
    counts_.resize(static_cast<std::size_t>(rows_) * columns_, 0);
  }
}

void HeatGrid::add(uint64_t time, uint64_t duration, uint64_t times) {
  // A zero duration (compensated away) sits in the lowest row there is, or in the 1ns row.
  int bin = scale_.bin(duration);
  if (bin == LogScale::kZeroBin) bin = rows_ ? first_bin_ : 0;
  if (rows_ == 0 || bin < first_bin_ || bin >= first_bin_ + static_cast<int>(rows_)) fit_row(bin);
  if ((time >> column_shift_) >= columns_) widen(time);
  const auto col = static_cast<uint32_t>(time >> column_shift_);
  counts_[static_cast<std::size_t>(bin - first_bin_) * columns_ + col] += times;
  total_ += times;
}

void CallTimeline::keep_outlier(const TimedCall& c) {
  if (limits_.outliers == 0) return;
  if (kept_.size() < limits_.outliers) {
    kept_.push_back(c);
    std::push_heap(kept_.begin(), kept_.end(), slower);
  } else if (c.duration > kept_.front().duration) {
    std::pop_heap(kept_.begin(), kept_.end(), slower);
    kept_.back() = c;
    std::push_heap(kept_.begin(), kept_.end(), slower);
  }
}

void CallTimeline::add(const TimedCall& c) {
  ++calls_;
  last_time_ = std::max(last_time_, c.time);
  if (!grid_) {
    if (kept_.size() < limits_.exact_calls) {
      kept_.push_back(c);
      return;
    }
    // One call too many: what was kept goes into the grid, and only the slowest stay.
    grid_.emplace(limits_.columns, limits_.rows_per_octave);
    std::vector<TimedCall> all = std::move(kept_);
    kept_.clear();
    for (const TimedCall& k : all) {
      grid_->add(k.time, k.duration);
      keep_outlier(k);
    }
  }
  grid_->add(c.time, c.duration);
  keep_outlier(c);
}

std::vector<TimedCall> CallTimeline::kept() const {
  std::vector<TimedCall> out = kept_;
  if (grid_) std::sort(out.begin(), out.end(), slower);
  return out;
}

void TimelineSink::begin(const ReportModel& m) {
  options_ = m.options;
  start_ = m.options.start_time;
  timelines_.assign(m.functions.functions.size(), CallTimeline(limits_));
}

void TimelineSink::on_call(const Call& c, std::string_view /*comm*/) {
  if (c.function >= timelines_.size()) return;
  timelines_[c.function].add(TimedCall{
      .time = c.entry_time > start_ ? c.entry_time - start_ : 0,
      .duration = options_.duration_of(c),
      .tid = c.tid,
  });
}

}  // namespace uprof
