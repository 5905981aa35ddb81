#include "uprof/analyse/interval_stats.h"

#include <gtest/gtest.h>

#include "analyse/event_builders.h"

namespace uprof {
namespace {

using test::probe;
using test::sample;

// f (entry #0, return #1) and main (entry only, #2): a call counts in the block in
// which its return came, a hit and a loss in theirs, a call still open at the end in
// the last block as unmatched; cut() starts the next block where the last ended.
TEST(IntervalStats, BlocksCountWhatCameSinceTheLastCut) {
  const std::vector<ProbeInfo> probes{probe(0, ProbeKind::Entry, "f", 0x1000), probe(1, ProbeKind::Return, "f", 0x1000),
                                      probe(2, ProbeKind::Entry, "main", 0x2000)};
  IntervalStats s(probes, 1000);
  s.add(sample(2, 7, 1100));
  s.add(sample(0, 7, 1200));
  s.add(sample(1, 7, 1500));  // f: 300 ns
  s.add(sample(0, 7, 1900));  // returns after the cut
  IntervalBlock one = s.cut(2000);
  EXPECT_EQ(one.index, 1u);
  EXPECT_EQ(one.begin, 1000u);
  EXPECT_EQ(one.end, 2000u);
  EXPECT_EQ(one.samples, 4u);
  ASSERT_EQ(one.functions.size(), 2u);
  EXPECT_EQ(one.functions[0].calls, 1u);
  EXPECT_EQ(one.functions[0].latency.max(), 300u);
  EXPECT_EQ(one.functions[1].calls, 1u);  // main's hit

  s.add(sample(1, 7, 2100));  // f: 200 ns, in block 2
  s.add(test::lost(2200, 5));
  s.add(sample(0, 7, 2300));  // never returns
  s.finish();
  IntervalBlock two = s.cut(3000);
  EXPECT_EQ(two.index, 2u);
  EXPECT_EQ(two.begin, 2000u);
  EXPECT_EQ(two.samples, 2u);
  EXPECT_EQ(two.lost, 5u);
  EXPECT_EQ(two.functions[0].calls, 1u);
  EXPECT_EQ(two.functions[0].latency.max(), 200u);
  EXPECT_EQ(two.functions[0].unmatched, 1u);
  EXPECT_EQ(two.functions[1].calls, 0u);
}

}  // namespace
}  // namespace uprof
