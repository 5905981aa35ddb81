// Streaming latency statistics: count, total, min, max, mean, any percentile, a
// log2 view (bpftrace hist(), funclatency) and a linear view (bpftrace lhist()),
// in memory that does not depend on the number of calls.
//
// Layout (HDR-style, log-linear), with P = kSubBucketBits = 7:
//   values 0..255 (2^(P+1)) have one bucket each: exact;
//   above, each power of two [2^m, 2^(m+1)) splits into 2^P = 128 equal buckets,
//   of width 2^(m-P). Bucket of v: shift = max(0, msb(v) - P); index = (shift << P) + (v >> shift).
//     v = 1000: msb 9, shift 2, index 256 + 250 = 506, bucket [1000, 1004)
//     v = 2^63: shift 56, index 7168 + 128 = 7296; the last index is 7423.
// A bucket's width is at most 2^-P of its lower bound, and a percentile reports the
// bucket's midpoint (clamped to [min, max]), so
//   |reported - true| <= 2^-(P+1) * true   (kRelativeError = 1/256 ~ 0.39%), and exact below 256ns.
// min, max, count, total and mean are exact. p0 is the min and p100 the max, exactly.
// The log2 view is exact too: every HDR bucket lies inside one power of two.
//
// Memory: only the buckets between the smallest and the largest value seen, in
// whole powers of two: calls from 100ns to 10ms use 17 x 128 counters (17 KiB),
// whether there are ten of them or ten billion.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "uprof/util/result.h"

namespace uprof {

// [lo, hi) with its count. The top log2 bucket [2^63, 2^64) has hi = UINT64_MAX.
struct HistBucket {
  uint64_t lo = 0;
  uint64_t hi = 0;
  uint64_t count = 0;
};

// The nearest-rank percentile's rank (1-based) among n sorted values: the smallest
// rank r with r >= n * percent / 100. p50 of 4 values is rank 2, p99.9 of 1000 is
// rank 999 (not 1000: 99.9 * 1000 / 100 comes out as 999.0000000000001 in doubles).
uint64_t nearest_rank(double percent, uint64_t n);

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr uint64_t kExactBelow = uint64_t{2} << kSubBucketBits;  // 256
  static constexpr double kRelativeError = 1.0 / static_cast<double>(kExactBelow);
  static constexpr uint32_t kBuckets = (64 - kSubBucketBits + 1) << kSubBucketBits;  // 7424

  void record(uint64_t ns, uint64_t times = 1);
  void merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  uint64_t total() const;  // saturates at UINT64_MAX (584 years)
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const;
  // `percent` in [0, 100]: 50 for the median, 99.9 for p99.9. 0 when empty.
  uint64_t percentile(double percent) const;
  // The values the rank-th smallest recorded value (1-based, <= count()) can be:
  // its bucket's bounds, clamped to [min, max]; exact for rank 1 (the min), rank
  // count() (the max), and below 256ns. analyse/quantile_shift.h bounds its intervals
  // with these, so that the histogram's resolution only ever widens them.
  struct ValueRange {
    uint64_t lo = 0;
    uint64_t hi = 0;  // inclusive
  };
  ValueRange rank_range(uint64_t rank) const;
  // Powers of two from the smallest to the largest value seen, empty ones included
  // (as bpftrace prints them); [0, 1) holds zero durations.
  std::vector<HistBucket> log2_buckets() const;
  // Counters held now: grows with the range of values, not their number.
  std::size_t allocated_buckets() const { return counts_.size(); }

  static uint32_t bucket_of(uint64_t v);
  static uint64_t bucket_lo(uint32_t bucket);
  static uint64_t bucket_width(uint32_t bucket);

 private:
  // Makes room for `bucket` (a no-op when it is already in range).
  void grow(uint32_t bucket);

  std::vector<uint64_t> counts_;  // counts_[i] counts bucket base_ + i
  uint32_t base_ = 0;             // a multiple of 128, as is counts_.size()
  uint64_t count_ = 0;
  unsigned __int128 total_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

// linear:MIN:MAX:STEP: buckets [MIN + i*STEP, MIN + (i+1)*STEP) up to MAX (the last
// one cut at MAX), plus everything below MIN and everything at or above MAX.
struct LinearSpec {
  uint64_t min = 0;
  uint64_t max = 0;
  uint64_t step = 0;

  std::size_t buckets() const { return static_cast<std::size_t>((max - min + step - 1) / step); }
  friend bool operator==(const LinearSpec&, const LinearSpec&) = default;
};

inline constexpr std::size_t kMaxLinearBuckets = 10'000;

// "linear:0:1ms:100us" or "0:1000000:100000" (bounds as parse_duration takes them).
Result<LinearSpec> parse_linear_spec(std::string_view text);

// Exact counts: the HDR buckets do not line up with arbitrary linear bounds, so
// the linear view is counted from the durations themselves (the spec is known
// before the stream starts).
class LinearHistogram {
 public:
  explicit LinearHistogram(LinearSpec spec) : spec_(spec), counts_(spec.buckets(), 0) {}

  void record(uint64_t ns, uint64_t times = 1) {
    if (ns < spec_.min) {
      underflow_ += times;
    } else if (ns >= spec_.max) {
      overflow_ += times;
    } else {
      counts_[(ns - spec_.min) / spec_.step] += times;
    }
  }
  // False (and nothing merged) when the specs differ.
  [[nodiscard]] bool merge(const LinearHistogram& other);

  const LinearSpec& spec() const { return spec_; }
  uint64_t underflow() const { return underflow_; }  // below spec().min
  uint64_t overflow() const { return overflow_; }    // at or above spec().max
  std::vector<HistBucket> buckets() const;

 private:
  LinearSpec spec_;
  std::vector<uint64_t> counts_;
  uint64_t underflow_ = 0;
  uint64_t overflow_ = 0;
};

}  // namespace uprof
