// Did a latency quantile move between two recordings, beyond noise? What `uprof diff`
// says about each function's p50, p90 and p99.
//
// Method: a distribution-free confidence interval for each quantile, from order
// statistics, and from the two an interval for the ratio B/A.
//
//   Among n calls drawn from any distribution, the number that fall at or below the
//   true q-quantile is Binomial(n, q). So the sorted calls x(1) <= ... <= x(n) hold the
//   quantile between x(l) and x(u) with probability >= g when
//     P(Binomial(n, q) <  l) <= (1 - g) / 2   (l as large as that allows), and
//     P(Binomial(n, q) >= u) <= (1 - g) / 2   (u as small as that allows).
//   Example: the median of 100 calls at g = 95% lies between x(40) and x(61).
//   A's and B's calls are independent, so with g = sqrt(confidence) for each, both
//   intervals hold at once with probability >= confidence, and then
//     B/A lies in [lo_B / hi_A, hi_B / lo_A].
//
// Why this and not a bootstrap or a rank test:
//   - it is exact for every distribution (latencies are skewed, multi-modal, heavy-
//     tailed), where a bootstrap of a quantile is only asymptotically right and is
//     known to cover too little in the tail of small samples (the resampled p99 of 400
//     calls can only be one of the top few);
//   - it needs ranks, not samples: the report's histogram gives the value at any rank
//     within its resolution (0.39%), and taking the bucket's outer edge makes the
//     interval wider, never narrower. So it uses every call of a 10M-call recording in
//     memory that does not grow with calls, where a bootstrap needs a reservoir that
//     keeps about 1% of a 1%-tail; and it is deterministic: no seed, no resamples;
//   - a rank test (Mann-Whitney) answers "is B stochastically larger than A", one
//     answer per function; a tail that got slower under an unchanged median is what
//     a profile comparison must show, so each quantile gets its own verdict.
// What it cannot see: noise between runs (CPU frequency, other load, where memory
// landed) that a single recording's calls do not vary by. A shift counts only when its
// whole interval lies beyond `min_shift` (default 5%): a 1.5% shift with a tight
// interval is real for these two runs, but not something to act on.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "uprof/analyse/latency_histogram.h"

namespace uprof {

// Ranks (1-based) of n sorted calls that hold the q-quantile (0 < q < 1) with
// probability >= `confidence`. lo = 0: no call is low enough to bound it below at that
// confidence; hi = n + 1: none is high enough to bound it above (p99 of 100 calls).
struct RankInterval {
  uint64_t lo = 0;
  uint64_t hi = 0;
};
RankInterval quantile_rank_interval(uint64_t n, double q, double confidence);

// The same interval in nanoseconds, read from a histogram (rank ranges, widened to
// whole buckets). `bounded` is false when either end has no rank (too few calls);
// then lo is 0 or hi is UINT64_MAX.
struct QuantileInterval {
  uint64_t lo = 0;
  uint64_t hi = std::numeric_limits<uint64_t>::max();
  bool bounded = false;
};
QuantileInterval quantile_interval(const LatencyHistogram& h, double percent, double confidence);

enum class ShiftVerdict : uint8_t {
  Same,    // the interval reaches into +-min_shift
  Slower,  // the whole interval of B/A is above 1 + min_shift
  Faster,  // the whole interval is below 1 / (1 + min_shift)
  TooFew,  // not flagged, and one side has too few calls to bound its interval
};
// "same", "slower", "faster", "too few calls"
std::string_view to_string(ShiftVerdict v);

struct ShiftOptions {
  double confidence = 0.99;  // of the interval on B/A; from 0.5 to 0.9999
  // Shifts within this fraction either way are "same" however sure: run-to-run noise
  // (see above). Faster means below 1 / (1 + min_shift), so that diff(A, B) says
  // slower exactly when diff(B, A) says faster.
  double min_shift = 0.05;
};

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

struct QuantileShift {
  double percent = 50;
  uint64_t a = 0;              // the quantile in A, as `uprof report` prints it
  uint64_t b = 0;              // and in B
  double ratio = 1;            // b / a: 1 when both are 0, kUnbounded when only a is
  double ratio_lo = 0;         // the interval on B/A at ShiftOptions::confidence
  double ratio_hi = kUnbounded;
  ShiftVerdict verdict = ShiftVerdict::TooFew;
};

// Both histograms hold at least one call (an empty one: TooFew, ratio 1).
QuantileShift compare_quantile(const LatencyHistogram& a, const LatencyHistogram& b, double percent,
                               const ShiftOptions& options);

// `uprof diff --fail-above PCT`: slower beyond noise, by more than `percent` percent at
// the interval's low end (the least the shift can be, at the stated confidence).
bool worse_by_more_than(const QuantileShift& s, double percent);

}  // namespace uprof
