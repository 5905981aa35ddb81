#include "uprof/analyse/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace uprof {
namespace {

// The nearest-rank percentile of `sorted`, computed directly.
uint64_t exact_percentile(const std::vector<uint64_t>& sorted, double p) {
  return sorted[nearest_rank(p, sorted.size()) - 1];
}

constexpr double kPercents[] = {0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 100};

// Checks every statistic the report shows against `values`, with the stated bound.
void expect_matches(const std::vector<uint64_t>& values, const std::string& what) {
  LatencyHistogram h;
  for (uint64_t v : values) h.record(v);
  std::vector<uint64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  unsigned __int128 sum = 0;
  for (uint64_t v : values) sum += v;

  ASSERT_EQ(h.count(), values.size()) << what;
  EXPECT_EQ(h.min(), sorted.front()) << what;
  EXPECT_EQ(h.max(), sorted.back()) << what;
  EXPECT_EQ(h.total(), sum > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(sum)) << what;
  EXPECT_EQ(h.mean(), static_cast<double>(sum) / static_cast<double>(values.size())) << what;
  std::mt19937_64 rng(99);
  std::vector<double> percents(std::begin(kPercents), std::end(kPercents));
  for (int i = 0; i < 20; ++i) percents.push_back(std::uniform_real_distribution<double>(0, 100)(rng));
  for (double p : percents) {
    const uint64_t exact = exact_percentile(sorted, p);
    const uint64_t got = h.percentile(p);
    const double error = std::abs(static_cast<double>(got) - static_cast<double>(exact));
    EXPECT_LE(error, static_cast<double>(exact) * LatencyHistogram::kRelativeError)
        << what << ": p" << p << " exact " << exact << " got " << got;
    if (exact < LatencyHistogram::kExactBelow) {
      EXPECT_EQ(got, exact) << what << ": p" << p;
    }
  }
  EXPECT_EQ(h.percentile(0), sorted.front());
  EXPECT_EQ(h.percentile(100), sorted.back());
}

TEST(LatencyHistogram, NearestRank) {
  EXPECT_EQ(nearest_rank(50, 4), 2u);
  EXPECT_EQ(nearest_rank(25, 4), 1u);
  EXPECT_EQ(nearest_rank(26, 4), 2u);
  EXPECT_EQ(nearest_rank(99.9, 1000), 999u);
  EXPECT_EQ(nearest_rank(99.9, 10000), 9990u);
  EXPECT_EQ(nearest_rank(99.99, 10000), 9999u);
  EXPECT_EQ(nearest_rank(0, 7), 1u);
  EXPECT_EQ(nearest_rank(100, 7), 7u);
  EXPECT_EQ(nearest_rank(50, 1), 1u);
  EXPECT_EQ(nearest_rank(120, 7), 7u);
  EXPECT_EQ(nearest_rank(50, 0), 0u);
}

TEST(LatencyHistogram, BucketsTileTheRangeWithinTheBound) {
  // Every bucket starts where the previous ended, and is no wider than 2^-7 of its start.
  uint64_t next = 0;
  for (uint32_t b = 0; b < LatencyHistogram::kBuckets; ++b) {
    const uint64_t lo = LatencyHistogram::bucket_lo(b), w = LatencyHistogram::bucket_width(b);
    ASSERT_EQ(lo, next) << b;
    ASSERT_EQ(LatencyHistogram::bucket_of(lo), b);
    ASSERT_EQ(LatencyHistogram::bucket_of(lo + (w - 1)), b);
    if (lo >= LatencyHistogram::kExactBelow) {
      ASSERT_LE(w * 128, lo) << b;
    }
    next = lo + w;  // wraps to 0 after the last bucket
  }
  EXPECT_EQ(next, 0u);
  EXPECT_EQ(LatencyHistogram::bucket_of(1000), 506u);
  EXPECT_EQ(LatencyHistogram::bucket_lo(506), 1000u);
  EXPECT_EQ(LatencyHistogram::bucket_width(506), 4u);
}

TEST(LatencyHistogram, ExactBelow256) {
  std::vector<uint64_t> v;
  for (uint64_t i = 0; i < 256; ++i) v.insert(v.end(), i % 7 + 1, i);
  expect_matches(v, "0..255");
}

TEST(LatencyHistogram, PercentilesWithinBoundOnRandomDistributions) {
  std::mt19937_64 rng(2024);
  const int n = 200'000;
  std::vector<uint64_t> uniform, log_uniform, exponential, bimodal;
  std::uniform_int_distribution<uint64_t> u(0, 10'000'000);
  std::uniform_real_distribution<double> lu(0, std::log(1e11));
  std::exponential_distribution<double> ex(1.0 / 50'000);
  std::normal_distribution<double> fast(800, 50), slow(2e6, 1e5);
  for (int i = 0; i < n; ++i) {
    uniform.push_back(u(rng));
    log_uniform.push_back(static_cast<uint64_t>(std::exp(lu(rng))));
    exponential.push_back(static_cast<uint64_t>(ex(rng)));
    bimodal.push_back(static_cast<uint64_t>(std::max(0.0, i % 100 == 0 ? slow(rng) : fast(rng))));
  }
  expect_matches(uniform, "uniform");
  expect_matches(log_uniform, "log-uniform");
  expect_matches(exponential, "exponential");
  expect_matches(bimodal, "bimodal");
}

TEST(LatencyHistogram, PercentilesWithinBoundOnAdversarialDistributions) {
  // Values on the edges of buckets, where the midpoint is furthest away.
  std::vector<uint64_t> edges;
  for (uint32_t b = 200; b < LatencyHistogram::kBuckets; b += 37) {
    edges.push_back(LatencyHistogram::bucket_lo(b));
    edges.push_back(LatencyHistogram::bucket_lo(b) + LatencyHistogram::bucket_width(b) - 1);
  }
  expect_matches(edges, "bucket edges");
  std::vector<uint64_t> lows, highs;
  for (uint32_t b = 256; b < 7000; ++b) {
    lows.insert(lows.end(), 3, LatencyHistogram::bucket_lo(b));
    highs.insert(highs.end(), 3, LatencyHistogram::bucket_lo(b) + LatencyHistogram::bucket_width(b) - 1);
  }
  expect_matches(lows, "bucket low edges");
  expect_matches(highs, "bucket high edges");
  std::vector<uint64_t> powers;
  for (int k = 0; k < 64; ++k) {
    powers.push_back(uint64_t{1} << k);
    powers.push_back((uint64_t{1} << k) - 1);
    powers.push_back((uint64_t{1} << k) + 1);
  }
  powers.push_back(UINT64_MAX);
  expect_matches(powers, "powers of two +-1 and UINT64_MAX");
  expect_matches(std::vector<uint64_t>(1000, 123'456'789), "constant");
  expect_matches({5'000'000'000}, "single value");
  expect_matches({300, 5'000'000'000}, "two far apart");
  // One slow outlier among a million fast calls: p99.9 stays fast, the max shows it.
  std::vector<uint64_t> skew(1'000'000, 700);
  skew.push_back(30'000'000'000);
  expect_matches(skew, "one outlier");
  // Within one bucket, far from its midpoint: clamping to [min, max] keeps the bound.
  expect_matches({1'000'000'000, 1'000'000'001, 1'000'000'002}, "one bucket");
}

TEST(LatencyHistogram, RankRangeHoldsTheValueOfThatRank) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> ln(std::log(1e6), 0.8);
  std::vector<uint64_t> v;
  for (int i = 0; i < 5000; ++i) v.push_back(static_cast<uint64_t>(ln(rng)));
  for (uint64_t i = 0; i < 300; ++i) v.push_back(i);  // the exact range too
  LatencyHistogram h;
  for (uint64_t x : v) h.record(x);
  std::sort(v.begin(), v.end());
  for (uint64_t r = 1; r <= v.size(); ++r) {
    const auto range = h.rank_range(r);
    const uint64_t x = v[r - 1];
    ASSERT_LE(range.lo, x) << "rank " << r;
    ASSERT_GE(range.hi, x) << "rank " << r;
    // Never wider than one bucket: the histogram's stated resolution.
    ASSERT_LE(static_cast<double>(range.hi - range.lo), static_cast<double>(x) * 2 * LatencyHistogram::kRelativeError) << "rank " << r;
    if (x < LatencyHistogram::kExactBelow) {
      ASSERT_EQ(range.lo, range.hi) << "rank " << r;
    }
  }
  EXPECT_EQ(h.rank_range(1).lo, v.front());
  EXPECT_EQ(h.rank_range(1).hi, v.front());
  EXPECT_EQ(h.rank_range(v.size()).lo, v.back());
  EXPECT_EQ(h.rank_range(v.size()).hi, v.back());
}

TEST(LatencyHistogram, Log2BucketsMatchDirectCounts) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> lu(0, std::log(1e10));
  LatencyHistogram h;
  std::map<uint64_t, uint64_t> direct;  // power-of-two lower bound -> count
  for (int i = 0; i < 100'000; ++i) {
    const uint64_t v = i % 1000 == 0 ? 0 : static_cast<uint64_t>(std::exp(lu(rng)));
    h.record(v);
    uint64_t lo = 0;
    if (v > 0) {
      lo = 1;
      while (lo <= v / 2) lo *= 2;
    }
    ++direct[lo];
  }
  const auto buckets = h.log2_buckets();
  ASSERT_FALSE(buckets.empty());
  EXPECT_EQ(buckets.front().lo, 0u);
  EXPECT_EQ(buckets.front().hi, 1u);
  uint64_t total = 0;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const HistBucket& b = buckets[i];
    if (i > 0) {
      EXPECT_EQ(b.lo, buckets[i - 1].hi);  // contiguous, empty ones included
      EXPECT_EQ(b.hi, b.lo * 2);
    }
    const auto it = direct.find(b.lo);
    EXPECT_EQ(b.count, it == direct.end() ? 0u : it->second) << "[" << b.lo << ", " << b.hi << ")";
    total += b.count;
  }
  EXPECT_EQ(total, h.count());
  EXPECT_EQ(buckets.back().lo, direct.rbegin()->first);

  LatencyHistogram top;
  top.record(UINT64_MAX);
  ASSERT_EQ(top.log2_buckets().size(), 1u);
  EXPECT_EQ(top.log2_buckets()[0].lo, uint64_t{1} << 63);
  EXPECT_EQ(top.log2_buckets()[0].hi, UINT64_MAX);
  EXPECT_TRUE(LatencyHistogram{}.log2_buckets().empty());
}

TEST(LatencyHistogram, MergedHalvesEqualTheWhole) {
  std::mt19937_64 rng(8);
  LatencyHistogram a, b, whole;
  for (int i = 0; i < 50'000; ++i) {
    // a sees the fast calls, b the slow ones: merging must extend the range both ways.
    const uint64_t v = i % 2 ? rng() % 1000 : 1'000'000 + rng() % 100'000'000;
    (i % 2 ? a : b).record(v);
    whole.record(v);
  }
  LatencyHistogram merged = b;
  merged.merge(a);
  merged.merge(LatencyHistogram{});
  EXPECT_EQ(merged.count(), whole.count());
  EXPECT_EQ(merged.total(), whole.total());
  EXPECT_EQ(merged.min(), whole.min());
  EXPECT_EQ(merged.max(), whole.max());
  for (double p : kPercents) EXPECT_EQ(merged.percentile(p), whole.percentile(p)) << p;
  const auto mb = merged.log2_buckets(), wb = whole.log2_buckets();
  ASSERT_EQ(mb.size(), wb.size());
  for (std::size_t i = 0; i < mb.size(); ++i) EXPECT_EQ(mb[i].count, wb[i].count);
}

TEST(LatencyHistogram, MemoryFollowsTheRangeNotTheCount) {
  LatencyHistogram h;
  for (uint64_t i = 0; i < 10'000'000; ++i) h.record(1000 + i % 1000);  // [1us, 2us): 2 powers of two
  EXPECT_EQ(h.count(), 10'000'000u);
  EXPECT_LE(h.allocated_buckets(), 2u * 128);
  h.record(10'000'000);  // 10ms widens it to the powers between
  EXPECT_LE(h.allocated_buckets(), 15u * 128);
  EXPECT_EQ(LatencyHistogram{}.percentile(50), 0u);
  EXPECT_EQ(LatencyHistogram{}.mean(), 0.0);
}

TEST(LatencyHistogram, RecordManyAtOnce) {
  LatencyHistogram h;
  h.record(500, 3);
  h.record(10, 1);
  h.record(7, 0);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.total(), 1510u);
  EXPECT_EQ(h.min(), 10u);
  EXPECT_EQ(h.percentile(50), 500u);
}

TEST(LatencyLinear, BucketsWithUnderflowAndOverflow) {
  LinearHistogram h(LinearSpec{.min = 100, .max = 200, .step = 30});
  for (uint64_t v : {0, 99, 100, 129, 130, 189, 190, 199, 200, 5000}) h.record(v);
  EXPECT_EQ(h.underflow(), 2u);
  EXPECT_EQ(h.overflow(), 2u);
  const auto b = h.buckets();
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].lo, 100u);
  EXPECT_EQ(b[0].hi, 130u);
  EXPECT_EQ(b[0].count, 2u);
  EXPECT_EQ(b[1].count, 1u);  // 130
  EXPECT_EQ(b[2].count, 1u);  // [160, 190) holds 189
  EXPECT_EQ(b[3].lo, 190u);
  EXPECT_EQ(b[3].hi, 200u);   // cut at MAX
  EXPECT_EQ(b[3].count, 2u);
}

TEST(LatencyLinear, MatchesDirectCountsAndMerges) {
  const LinearSpec spec{.min = 1'000, .max = 1'000'000, .step = 100'000};
  std::mt19937_64 rng(3);
  LinearHistogram a(spec), b(spec);
  std::vector<uint64_t> direct(spec.buckets() + 2, 0);  // [under, buckets..., over]
  for (int i = 0; i < 100'000; ++i) {
    const uint64_t v = rng() % 1'200'000;
    (i % 3 ? a : b).record(v);
    ++direct[v < spec.min ? 0 : v >= spec.max ? direct.size() - 1 : 1 + (v - spec.min) / spec.step];
  }
  ASSERT_TRUE(a.merge(b));
  EXPECT_EQ(a.underflow(), direct.front());
  EXPECT_EQ(a.overflow(), direct.back());
  const auto buckets = a.buckets();
  ASSERT_EQ(buckets.size(), 10u);
  for (std::size_t i = 0; i < buckets.size(); ++i) EXPECT_EQ(buckets[i].count, direct[i + 1]) << i;
  LinearHistogram other(LinearSpec{.min = 0, .max = 10, .step = 1});
  EXPECT_FALSE(a.merge(other));
}

TEST(LatencyLinear, ParsesSpecs) {
  const auto s = parse_linear_spec("linear:0:1ms:100us");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(*s, (LinearSpec{.min = 0, .max = 1'000'000, .step = 100'000}));
  EXPECT_EQ(s->buckets(), 10u);
  EXPECT_EQ(*parse_linear_spec("100:200:30"), (LinearSpec{.min = 100, .max = 200, .step = 30}));
  EXPECT_FALSE(parse_linear_spec("linear:0:1ms").ok());
  EXPECT_FALSE(parse_linear_spec("linear:0:1ms:1us:5").ok());
  EXPECT_FALSE(parse_linear_spec("linear:5:5:1").ok());
  EXPECT_FALSE(parse_linear_spec("linear:0:1s:1ns").ok());
  const auto zero = parse_linear_spec("linear:0:10:0");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "linear: 'linear:0:10:0': STEP must be more than 0 (e.g. linear:0:1ms:100us)");
}

}  // namespace
}  // namespace uprof
