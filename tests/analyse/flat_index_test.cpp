#include "uprof/analyse/flat_index.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace uprof {
namespace {

TEST(AggregateFlatIndex, InsertFindErase) {
  FlatIndex index;
  EXPECT_FALSE(index.find({.a = 1}));
  auto ins = index.insert({.a = 1, .b = 2}, 7);
  EXPECT_TRUE(ins.inserted);
  ins = index.insert({.a = 1, .b = 2}, 8);
  EXPECT_FALSE(ins.inserted);
  EXPECT_EQ(ins.position, 7u);
  EXPECT_EQ(index.find({.a = 1, .b = 2}), 7u);
  EXPECT_FALSE(index.find({.a = 2, .b = 1}));
  EXPECT_TRUE(index.erase({.a = 1, .b = 2}));
  EXPECT_FALSE(index.erase({.a = 1, .b = 2}));
  EXPECT_EQ(index.size(), 0u);
}

// Against std::unordered_map, with erases mixed in (the backward shift must keep
// every remaining key reachable).
TEST(AggregateFlatIndex, MatchesAReferenceMapUnderChurn) {
  std::mt19937_64 rng(7);
  FlatIndex index;
  std::unordered_map<uint64_t, uint32_t> ref;
  for (uint32_t i = 0; i < 200000; ++i) {
    const uint64_t k = rng() % 3000;
    if (rng() % 3 == 0) {
      EXPECT_EQ(index.erase({.a = k}), ref.erase(k) == 1);
    } else {
      auto [it, fresh] = ref.try_emplace(k, i);
      auto ins = index.insert({.a = k}, i);
      ASSERT_EQ(ins.inserted, fresh);
      ASSERT_EQ(ins.position, it->second);
    }
  }
  EXPECT_EQ(index.size(), ref.size());
  for (uint64_t k = 0; k < 3000; ++k) {
    auto it = ref.find(k);
    auto got = index.find({.a = k});
    ASSERT_EQ(got.has_value(), it != ref.end()) << k;
    if (got) {
      EXPECT_EQ(*got, it->second);
    }
  }
}

}  // namespace
}  // namespace uprof
