// The statistics of `uprof diff`: the order-statistic interval against a direct
// binomial sum, its coverage of known quantiles, and the verdicts on synthetic
// recordings drawn from known distributions (same distribution: flagged at most at the
// stated rate; a 20% shift: flagged, in the right direction).
#include "uprof/analyse/quantile_shift.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <utility>
#include <vector>

namespace uprof {
namespace {

// Draws from known distributions with only the engine, whose output the standard
// fixes (std::*_distribution may differ between libraries): reproducible anywhere.
class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  double uniform() { return (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  double exponential(double mean) { return -mean * std::log(uniform()); }
  double lognormal(double median, double sigma) {
    const double z = std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());  // Box-Muller
    return median * std::exp(sigma * z);
  }

 private:
  std::mt19937_64 rng_;
};

// A and B of n calls each: lognormal around `median`, B's `factor` times A's.
std::pair<LatencyHistogram, LatencyHistogram> scaled_pair(uint64_t seed, int n, double median, double sigma,
                                                          double factor) {
  Draw d(seed);
  LatencyHistogram a, b;
  for (int i = 0; i < n; ++i) {
    a.record(static_cast<uint64_t>(d.lognormal(median, sigma)));
    b.record(static_cast<uint64_t>(factor * d.lognormal(median, sigma)));
  }
  return {std::move(a), std::move(b)};
}

// P(Binomial(n, q) <= k), summed from 0.
double binomial_cdf(uint64_t n, double q, uint64_t k) {
  double s = 0;
  for (uint64_t j = 0; j <= k; ++j)
    s += std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) + j * std::log(q) +
                  (n - j) * std::log1p(-q));
  return s;
}

TEST(QuantileShift, RankIntervalOfTheTextbookMedian) {
  // The 95% interval of the median of 100 values: x(40) to x(61).
  const RankInterval r = quantile_rank_interval(100, 0.5, 0.95);
  EXPECT_EQ(r.lo, 40u);
  EXPECT_EQ(r.hi, 61u);
}

TEST(QuantileShift, RankIntervalIsTheTightestWithItsCoverage) {
  for (uint64_t n : {1u, 2u, 5u, 10u, 37u, 100u, 400u, 1000u, 5000u}) {
    for (double q : {0.5, 0.9, 0.99}) {
      for (double conf : {0.9, 0.99, 0.995}) {
        const RankInterval r = quantile_rank_interval(n, q, conf);
        const double tail = (1 - conf) / 2;
        SCOPED_TRACE(testing::Message() << "n " << n << " q " << q << " conf " << conf);
        ASSERT_LE(r.lo, n);
        ASSERT_GE(r.hi, 1u);
        ASSERT_LE(r.hi, n + 1);
        ASSERT_LT(r.lo, r.hi);
        // lo: P(B < lo) <= tail, and lo + 1 would break it.
        if (r.lo >= 1) {
          EXPECT_LE(binomial_cdf(n, q, r.lo - 1), tail + 1e-12);
        }
        if (r.lo < n) {
          EXPECT_GT(binomial_cdf(n, q, r.lo), tail - 1e-12);
        }
        // hi: P(B >= hi) <= tail, and hi - 1 would break it.
        if (r.hi <= n) {
          EXPECT_GE(binomial_cdf(n, q, r.hi - 1), 1 - tail - 1e-12);
        }
        if (r.hi >= 2) {
          EXPECT_LT(binomial_cdf(n, q, r.hi - 2), 1 - tail + 1e-12);
        }
      }
    }
  }
}

TEST(QuantileShift, TooFewCallsHaveNoBound) {
  // p99 of 100 calls: even the slowest is below the true p99 with probability
  // 1 - 0.99^100 = 63%; no call bounds it above at 99%.
  EXPECT_EQ(quantile_rank_interval(100, 0.99, 0.99).hi, 101u);
  // The median of 5 calls at 99%: P(all 5 above it) = 1/32 > 0.5%: no lower bound.
  EXPECT_EQ(quantile_rank_interval(5, 0.5, 0.99).lo, 0u);
  LatencyHistogram h;
  for (int i = 1; i <= 100; ++i) h.record(1000 * i);
  const QuantileInterval i99 = quantile_interval(h, 99, 0.99);
  EXPECT_FALSE(i99.bounded);
  EXPECT_EQ(i99.hi, UINT64_MAX);
  EXPECT_GT(i99.lo, 0u);
}

TEST(QuantileShift, LargeCountsStayFast) {
  // 10^10 calls: the walk covers ~13 standard deviations, not n; there the binomial is
  // normal, and a 99% interval is the mean +- 2.5758 standard deviations.
  const RankInterval r = quantile_rank_interval(10'000'000'000ull, 0.5, 0.99);
  const double sd = std::sqrt(1e10 * 0.25);
  EXPECT_NEAR(static_cast<double>(r.lo), 5e9 - 2.5758 * sd, 0.001 * sd);
  EXPECT_NEAR(static_cast<double>(r.hi), 5e9 + 2.5758 * sd, 0.001 * sd);
}

// The interval from a histogram holds the true quantile of an exponential
// distribution at least as often as it says (a little more: whole buckets).
TEST(QuantileShift, IntervalCoversTheTrueQuantile) {
  Draw d(1);
  const double mean = 1e6;
  for (double p : {50.0, 90.0, 99.0}) {
    const double truth = -mean * std::log(1 - p / 100);
    const int trials = 2000;
    int covered = 0, bounded = 0;
    for (int t = 0; t < trials; ++t) {
      LatencyHistogram h;
      for (int i = 0; i < 1000; ++i) h.record(static_cast<uint64_t>(d.exponential(mean)));
      const QuantileInterval qi = quantile_interval(h, p, 0.95);
      bounded += qi.bounded;
      covered += static_cast<double>(qi.lo) <= truth && truth <= static_cast<double>(qi.hi);
    }
    SCOPED_TRACE(testing::Message() << "p" << p);
    EXPECT_EQ(bounded, trials);
    // 95% stated; the binomial spread of 2000 trials is 0.5%, so 93.5% is 3 of them.
    EXPECT_GE(covered, trials * 935 / 1000);
    EXPECT_LE(covered, trials * 995 / 1000);  // not vacuous: the interval is not everything
  }
}

struct Rates {
  int slower = 0, faster = 0, same = 0, too_few = 0;
};

// `trials` pairs of recordings: A of n calls from `a`, B of m calls from `b`.
template <class DrawA, class DrawB>
Rates verdicts(int trials, int n, int m, double percent, const ShiftOptions& o, DrawA a, DrawB b) {
  Rates r;
  for (int t = 0; t < trials; ++t) {
    LatencyHistogram ha, hb;
    for (int i = 0; i < n; ++i) ha.record(static_cast<uint64_t>(a()));
    for (int i = 0; i < m; ++i) hb.record(static_cast<uint64_t>(b()));
    switch (compare_quantile(ha, hb, percent, o).verdict) {
      case ShiftVerdict::Slower: r.slower++; break;
      case ShiftVerdict::Faster: r.faster++; break;
      case ShiftVerdict::Same: r.same++; break;
      case ShiftVerdict::TooFew: r.too_few++; break;
    }
  }
  return r;
}

TEST(QuantileShift, SameDistributionIsFlaggedAtMostAtTheStatedRate) {
  // No tolerance: the statistic alone, which must flag at most 1% at 99% confidence.
  const ShiftOptions o{.confidence = 0.99, .min_shift = 0};
  Draw d(2);
  auto ln = [&] { return d.lognormal(1e6, 0.5); };
  auto bimodal = [&] { return d.uniform() < 0.75 ? d.lognormal(1.1e6, 0.05) : d.lognormal(10e6, 0.1); };
  const int trials = 500;
  for (double p : {50.0, 90.0, 99.0}) {
    SCOPED_TRACE(testing::Message() << "p" << p);
    const Rates r1 = verdicts(trials, 2000, 3000, p, o, ln, ln);
    EXPECT_LE(r1.slower + r1.faster, trials / 100) << r1.slower << " slower, " << r1.faster << " faster";
    EXPECT_EQ(r1.too_few, 0);
    const Rates r2 = verdicts(trials, 2000, 2000, p, o, bimodal, bimodal);
    EXPECT_LE(r2.slower + r2.faster, trials / 100) << r2.slower << " slower, " << r2.faster << " faster";
  }
}

TEST(QuantileShift, TwentyPercentShiftIsFlaggedInItsDirection) {
  const ShiftOptions o;  // 99%, 5% tolerance
  Draw d(3);
  const int trials = 200;
  // A function whose calls spread like a lognormal of sigma 0.5 (a third of them
  // outside 0.6x..1.6x the median), and the widest common case, exponential. How many
  // calls a 20% shift needs depends on the spread and the quantile: the tail has fewer
  // calls near it.
  struct Case {
    const char* name;
    double p;
    int n;
    std::function<double()> draw;
  };
  const Case cases[] = {
      {"lognormal", 50, 2000, [&] { return d.lognormal(1e6, 0.5); }},
      {"lognormal", 90, 5000, [&] { return d.lognormal(1e6, 0.5); }},
      {"lognormal", 99, 20000, [&] { return d.lognormal(1e6, 0.5); }},
      {"exponential", 50, 20000, [&] { return d.exponential(1e6); }},
      {"exponential", 99, 50000, [&] { return d.exponential(1e6); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.name << " p" << c.p << ", " << c.n << " calls");
    auto slower = [&] { return 1.2 * c.draw(); };
    const Rates up = verdicts(trials, c.n, c.n, c.p, o, c.draw, slower);
    EXPECT_GE(up.slower, trials * 98 / 100);
    EXPECT_EQ(up.faster, 0);
    const Rates down = verdicts(trials, c.n, c.n, c.p, o, slower, c.draw);
    EXPECT_GE(down.faster, trials * 98 / 100);
    EXPECT_EQ(down.slower, 0);
  }
}

TEST(QuantileShift, ShiftsWithinTheToleranceAreSame) {
  // 2% slower with 200k calls a side: the interval is tight and excludes 1, but lies
  // within +-5%: "same". With no tolerance it is "slower".
  const auto [a, b] = scaled_pair(4, 200'000, 1e6, 0.2, 1.02);
  const QuantileShift s = compare_quantile(a, b, 50, ShiftOptions{});
  EXPECT_EQ(s.verdict, ShiftVerdict::Same);
  EXPECT_GT(s.ratio_lo, 1.0);
  EXPECT_LT(s.ratio_hi, 1.05);
  EXPECT_NEAR(s.ratio, 1.02, 0.01);
  EXPECT_EQ(compare_quantile(a, b, 50, ShiftOptions{.min_shift = 0}).verdict, ShiftVerdict::Slower);
}

TEST(QuantileShift, SwappingTheFilesMirrorsTheVerdict) {
  for (double factor : {0.7, 0.97, 1.0, 1.08, 1.5}) {
    const auto [a, b] = scaled_pair(5, 3000, 2e6, 0.3, factor);
    for (double p : {50.0, 90.0, 99.0}) {
      const QuantileShift ab = compare_quantile(a, b, p, ShiftOptions{});
      const QuantileShift ba = compare_quantile(b, a, p, ShiftOptions{});
      SCOPED_TRACE(testing::Message() << "factor " << factor << " p" << p);
      EXPECT_DOUBLE_EQ(ab.ratio_lo, 1 / ba.ratio_hi);
      EXPECT_DOUBLE_EQ(ab.ratio_hi, 1 / ba.ratio_lo);
      EXPECT_EQ(ab.verdict == ShiftVerdict::Slower, ba.verdict == ShiftVerdict::Faster);
      EXPECT_EQ(ab.verdict == ShiftVerdict::Faster, ba.verdict == ShiftVerdict::Slower);
      EXPECT_LE(ab.ratio_lo, ab.ratio);
      EXPECT_GE(ab.ratio_hi, ab.ratio);
    }
  }
}

TEST(QuantileShift, FailAboveNeedsTheWholeIntervalPastIt) {
  const auto [a, b] = scaled_pair(6, 20'000, 1e6, 0.1, 1.5);
  const QuantileShift s = compare_quantile(a, b, 50, ShiftOptions{});
  ASSERT_EQ(s.verdict, ShiftVerdict::Slower);
  EXPECT_TRUE(worse_by_more_than(s, 20));
  EXPECT_TRUE(worse_by_more_than(s, 45));
  EXPECT_FALSE(worse_by_more_than(s, 60));
  // Faster never fails, whatever the threshold.
  EXPECT_FALSE(worse_by_more_than(compare_quantile(b, a, 50, ShiftOptions{}), 0));
}

TEST(QuantileShift, EdgeCases) {
  LatencyHistogram empty, one, zeros;
  one.record(1000);
  zeros.record(0, 500);
  EXPECT_EQ(compare_quantile(empty, one, 50, ShiftOptions{}).verdict, ShiftVerdict::TooFew);
  // One call a side: no interval, whatever the values.
  LatencyHistogram other;
  other.record(100'000);
  EXPECT_EQ(compare_quantile(one, other, 50, ShiftOptions{}).verdict, ShiftVerdict::TooFew);
  // All zeros (a compensated function) against real time: slower for sure.
  LatencyHistogram many;
  many.record(5000, 500);
  const QuantileShift z = compare_quantile(zeros, many, 50, ShiftOptions{});
  EXPECT_EQ(z.ratio, kUnbounded);
  EXPECT_EQ(z.verdict, ShiftVerdict::Slower);
  EXPECT_EQ(compare_quantile(zeros, zeros, 50, ShiftOptions{}).ratio, 1.0);
  EXPECT_EQ(to_string(ShiftVerdict::TooFew), "too few calls");
}

}  // namespace
}  // namespace uprof
