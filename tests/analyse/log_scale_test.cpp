#include "uprof/analyse/log_scale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace uprof {
namespace {

// A value's bin is floor(log2(v) * R), but for values within 1/256 of a boundary.
TEST(LogScale, BinsAreEqualStepsOfTheLogarithm) {
  const LogScale four(4);
  EXPECT_EQ(four.bin(1000), 39);  // log2 9.966 -> 39.86
  EXPECT_EQ(four.bin(1024), 40);
  EXPECT_EQ(four.bin(1), 0);
  EXPECT_EQ(four.bin(0), LogScale::kZeroBin);
  EXPECT_EQ(four.lo_ns(40), 1024u);
  EXPECT_EQ(four.lo_ns(39), 862u);  // 2^9.75 = 861.0 rounded up
  const LogScale eight(8);
  EXPECT_EQ(eight.bin(1'000'000), 159);  // 1ms: log2 19.93
  EXPECT_EQ(eight.bin(UINT64_MAX), 63 * 8 + 7);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100'000; ++i) {
    const uint64_t v = rng() >> (rng() % 60);
    if (v == 0) continue;
    const double exact = std::log2(static_cast<double>(v)) * 8;
    const int b = eight.bin(v);
    // The table reads 8 bits: off by one bin only within 1/256 (0.046 of a bin at R = 8) of a boundary.
    // log2(1 + 1/256) * 8 = 0.045 of a bin past a boundary.
    const int floor = static_cast<int>(std::floor(exact));
    EXPECT_TRUE(b == floor || (b == floor - 1 && exact - floor < 0.046)) << v << " in bin " << b << ", log2 x 8 " << exact;
  }
}

TEST(LogScale, MonotoneInTheValue) {
  const LogScale s(8);
  int last = s.bin(1);
  for (uint64_t v = 2; v < 1'000'000; v += 1 + v / 1000) {
    const int b = s.bin(v);
    EXPECT_GE(b, last) << v;
    last = b;
  }
}

TEST(LogBins, KeepEveryCallAndSeparateTheModes) {
  LatencyHistogram h;
  h.record(1'000'000, 30);   // 1ms
  h.record(10'000'000, 10);  // 10ms
  h.record(0, 2);            // compensated away
  const LogBins b = log_bins(h, LogScale(8));
  EXPECT_EQ(b.zeros, 2u);
  ASSERT_EQ(b.bins.size(), 2u);
  EXPECT_EQ(b.bins[0].count, 30u);
  EXPECT_LE(b.bins[0].lo, 1'000'000u);
  EXPECT_GT(b.bins[0].hi, 1'000'000u);
  EXPECT_EQ(b.bins[1].count, 10u);
  EXPECT_LE(b.bins[1].lo, 10'000'000u);
  EXPECT_GT(b.bins[1].hi, 10'000'000u);
  EXPECT_EQ(b.max_count(), 30u);

  LatencyHistogram wide;
  std::mt19937_64 rng(1);
  uint64_t n = 0;
  for (int i = 0; i < 50'000; ++i, ++n) wide.record(100 + rng() % 50'000'000);
  uint64_t sum = 0;
  int last = -1;
  for (const LogBin& bin : log_bins(wide, LogScale(8)).bins) {
    sum += bin.count;
    EXPECT_GT(bin.bin, last);
    EXPECT_LT(bin.lo, bin.hi);
    last = bin.bin;
  }
  EXPECT_EQ(sum, n);
}

}  // namespace
}  // namespace uprof
