#include "uprof/analyse/top_values.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace uprof {
namespace {

// Checks the Space-Saving guarantees of `s` against the true counts.
void expect_guarantees(const TopValues& s, const std::map<uint64_t, uint64_t>& truth, uint64_t n,
                       const std::string& what) {
  const uint64_t bound = n / s.capacity();
  const auto held = s.top(s.capacity());
  std::map<uint64_t, TopValues::Entry> by_value;
  for (const auto& e : held) {
    EXPECT_FALSE(by_value.count(e.value)) << what << ": value " << e.value << " held twice";
    by_value[e.value] = e;
    const uint64_t t = truth.count(e.value) ? truth.at(e.value) : 0;
    EXPECT_LE(t, e.count) << what << ": value " << e.value;
    EXPECT_GE(t, e.count - e.error) << what << ": value " << e.value;
    EXPECT_LE(e.error, bound) << what;
  }
  EXPECT_LE(s.min_count(), bound) << what;
  for (const auto& [value, t] : truth) {
    if (by_value.count(value)) continue;
    EXPECT_LE(t, s.min_count()) << what << ": value " << value << " seen " << t << " times is missing";
    EXPECT_LE(t, bound) << what;
  }
  EXPECT_EQ(s.total(), n);
}

TEST(AggregateTopValues, ExactWhileFewerValuesThanCapacity) {
  TopValues s(4);
  for (uint64_t v : {7, 7, 3, 7, 9, 3}) s.add(v);
  s.add(1, 10);
  EXPECT_TRUE(s.exact());
  const auto top = s.top(3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].value, 1u);
  EXPECT_EQ(top[0].count, 10u);
  EXPECT_EQ(top[1].value, 7u);
  EXPECT_EQ(top[1].count, 3u);
  EXPECT_EQ(top[2].value, 3u);
  EXPECT_EQ(top[2].error, 0u);
  EXPECT_EQ(s.min_count(), 0u);
  EXPECT_EQ(s.total(), 16u);
}

TEST(AggregateTopValues, FindsTheHeavyValuesOfASkewedStream) {
  // Zipf-like sizes over 10000 distinct values, as read(2) sizes or fds tend to be.
  std::mt19937_64 rng(11);
  std::vector<double> weights;
  for (int k = 1; k <= 10'000; ++k) weights.push_back(1.0 / std::pow(k, 1.3));
  std::discrete_distribution<uint64_t> zipf(weights.begin(), weights.end());
  TopValues s(32);
  std::map<uint64_t, uint64_t> truth;
  const uint64_t n = 1'000'000;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t v = zipf(rng) * 4096;  // value k*4096 has rank k
    s.add(v);
    ++truth[v];
  }
  EXPECT_FALSE(s.exact());
  expect_guarantees(s, truth, n, "zipf");
  std::vector<std::pair<uint64_t, uint64_t>> sorted(truth.begin(), truth.end());
  std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.second > b.second; });
  const auto top = s.top(5);
  ASSERT_EQ(top.size(), 5u);
  for (std::size_t i = 0; i < top.size(); ++i) EXPECT_EQ(top[i].value, sorted[i].first) << i;
}

TEST(AggregateTopValues, AHeavyValueSurvivesAFloodOfDistinctOnes) {
  // Every value distinct except one at 5% (more than N/32): worst case for replacement.
  TopValues s(32);
  std::map<uint64_t, uint64_t> truth;
  const uint64_t n = 200'000;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t v = i % 20 == 0 ? 42 : 1'000'000 + i;
    s.add(v);
    ++truth[v];
  }
  expect_guarantees(s, truth, n, "flood");
  EXPECT_EQ(s.top(1)[0].value, 42u);
}

TEST(AggregateTopValues, MergeKeepsTheGuaranteesOfTheCombinedStream) {
  std::mt19937_64 rng(4);
  std::vector<double> weights;
  for (int k = 1; k <= 2'000; ++k) weights.push_back(1.0 / k);
  std::discrete_distribution<uint64_t> zipf(weights.begin(), weights.end());
  TopValues a(16), b(16), small(16);
  std::map<uint64_t, uint64_t> truth;
  const uint64_t n = 300'000;
  for (uint64_t i = 0; i < n; ++i) {
    // The halves see different heavy values: b's ranks are shifted by 7.
    const uint64_t v = i % 2 ? zipf(rng) : zipf(rng) + 7;
    (i % 2 ? a : b).add(v);
    ++truth[v];
  }
  small.add(3, 5);  // an exact sketch merges in exactly
  ++truth[3];
  truth[3] += 4;
  a.merge(b);
  a.merge(small);
  a.merge(TopValues(16));
  expect_guarantees(a, truth, n + 5, "merged");
}

TEST(AggregateTopValues, CapacityIsClampedAndEveryReplacementFindsItsValue) {
  EXPECT_EQ(TopValues(0).capacity(), 1u);
  EXPECT_EQ(TopValues(1000).capacity(), TopValues::kMaxCapacity);
  // Values that collide in the slot index (multiples of a large power of two) and a
  // stream that replaces a slot on almost every add.
  for (uint32_t capacity : {1u, 3u, 64u}) {
    TopValues s(capacity);
    std::map<uint64_t, uint64_t> truth;
    std::mt19937_64 rng(capacity);
    const uint64_t n = 100'000;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = i % 7 == 0 ? 5 : (rng() % 5000) << 40;
      s.add(v);
      ++truth[v];
    }
    expect_guarantees(s, truth, n, "capacity " + std::to_string(capacity));
  }
}

}  // namespace
}  // namespace uprof
