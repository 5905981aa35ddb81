#include "uprof/analyse/call_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace uprof {
namespace {

uint64_t grid_total(const HeatGrid& g) {
  uint64_t n = 0;
  for (uint32_t r = 0; r < g.rows(); ++r)
    for (uint32_t c = 0; c < g.columns(); ++c) n += g.at(c, r);
  return n;
}

TEST(CallTimeline, KeepsEveryCallUpToTheLimit) {
  CallTimeline t(TimelineLimits{.exact_calls = 100, .outliers = 5, .columns = 20, .rows_per_octave = 4});
  for (uint64_t i = 0; i < 100; ++i) t.add(TimedCall{.time = i * 1000, .duration = 500 + i, .tid = 7});
  EXPECT_TRUE(t.exact());
  EXPECT_EQ(t.grid(), nullptr);
  const auto kept = t.kept();
  ASSERT_EQ(kept.size(), 100u);
  EXPECT_EQ(kept[42].time, 42'000u);
  EXPECT_EQ(kept[42].duration, 542u);
}

// Past the limit every call is still counted, in the grid, and the slowest stay as they were.
TEST(CallTimeline, PastTheLimitAGridCountsEveryCallAndTheSlowestStay) {
  CallTimeline t(TimelineLimits{.exact_calls = 1000, .outliers = 8, .columns = 40, .rows_per_octave = 4});
  std::mt19937_64 rng(3);
  std::vector<uint64_t> durations;
  const uint64_t n = 200'000;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t d = 1000 + rng() % 100'000;
    durations.push_back(d);
    t.add(TimedCall{.time = i * 50'000, .duration = d, .tid = 1});  // 10 s in all
  }
  EXPECT_FALSE(t.exact());
  ASSERT_NE(t.grid(), nullptr);
  const HeatGrid& g = *t.grid();
  EXPECT_EQ(g.total(), n);
  EXPECT_EQ(grid_total(g), n);
  // The columns span what was seen, no more than twice over.
  EXPECT_GT(g.column_ns() * g.columns(), t.last_time());
  EXPECT_LE(g.column_ns() * g.columns(), 2 * (t.last_time() + 1) + 1024 * g.columns());
  // Rows cover 1us..101us: bins of 2^(1/4).
  EXPECT_EQ(g.first_bin(), LogScale(4).bin(1000));
  EXPECT_EQ(g.first_bin() + static_cast<int>(g.rows()) - 1, LogScale(4).bin(*std::max_element(durations.begin(), durations.end())));

  std::sort(durations.rbegin(), durations.rend());
  const auto kept = t.kept();
  ASSERT_EQ(kept.size(), 8u);
  for (std::size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(kept[i].duration, durations[i]);
}

TEST(HeatGrid, WideningMergesColumnsInPairs) {
  HeatGrid g(4, 1);
  g.add(0, 10);             // column 0 of 1024ns columns
  g.add(1500, 10);          // column 1
  g.add(3000, 10);          // column 2
  EXPECT_EQ(g.column_ns(), 1024u);
  g.add(5000, 10);          // past 4 x 1024: columns double to 2048
  EXPECT_EQ(g.column_ns(), 2048u);
  EXPECT_EQ(g.at(0, 0), 2u);  // 0 and 1500
  EXPECT_EQ(g.at(1, 0), 1u);  // 3000
  EXPECT_EQ(g.at(2, 0), 1u);  // 5000
  g.add(1, 100'000);          // a new row above, the counts stay in theirs
  EXPECT_EQ(g.rows(), static_cast<uint32_t>(LogScale(1).bin(100'000) - LogScale(1).bin(10) + 1));
  EXPECT_EQ(g.at(0, 0), 2u);
  EXPECT_EQ(g.at(0, g.rows() - 1), 1u);
  g.add(2, 0);                // a zero duration counts in the lowest row
  EXPECT_EQ(g.at(0, 0), 3u);
  EXPECT_EQ(g.total(), 6u);
}

}  // namespace
}  // namespace uprof
