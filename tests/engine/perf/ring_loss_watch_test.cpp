// RingLossWatch: which rings hold the merged stream back, until when, and what a ring
// that went quiet while held is settled with.
#include "uprof/engine/perf/ring_loss_watch.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

TEST(RingLossWatch, ARingReadPastAQuarterHoldsAtItsLastRecordUntilItWritesAgain) {
  RingLossWatch w({4096, 4096});
  // Ring 0 read 1,200 bytes (it may have filled), ring 1 only 200.
  for (int i = 0; i < 12; i++) w.on_record(0, 100, 100 + i);
  w.on_record(1, 200, 150);
  w.on_record(0, 16, std::nullopt);  // a record that makes no event (MMAP2): no time
  w.pass_ended(1000);
  EXPECT_EQ(w.horizon(), 111u);
  // The next pass reads nothing of ring 0: still held.
  w.on_record(1, 100, 300);
  w.pass_ended(2000);
  EXPECT_EQ(w.horizon(), 111u);
  EXPECT_TRUE(w.overdue(2000).empty());
  // Ring 0 writes again, a LOST first (its Lost event, at 111), then a sample: released.
  EXPECT_EQ(w.on_lost_record(0, 7), 7u);
  w.on_record(0, 40, 111);
  w.on_record(0, 64, 2500);
  w.pass_ended(3000);
  EXPECT_EQ(w.horizon(), UINT64_MAX);
  EXPECT_EQ(w.said(), 7u);
}

// Two small reads in a row may hide a fill past a quarter: the kernel wrote on while the
// first went on, against the tail it had before.
TEST(RingLossWatch, TwoReadsInARowCountTowardTheFill) {
  RingLossWatch w({4096});
  w.on_record(0, 800, 10);
  w.pass_ended(100);
  EXPECT_EQ(w.horizon(), UINT64_MAX);
  w.on_record(0, 800, 20);
  w.pass_ended(200);
  EXPECT_EQ(w.horizon(), 20u);
  w.on_record(0, 100, 30);
  w.pass_ended(300);
  EXPECT_EQ(w.horizon(), UINT64_MAX);
}

TEST(RingLossWatch, AQuietHeldRingIsSettledFromTheKernelsCounter) {
  RingLossWatch w({4096, 4096, 4096}, 1'000);
  w.on_record(0, 1500, 500);
  w.on_record(1, 1500, 600);
  w.on_record(2, 3000, 700);
  EXPECT_EQ(w.on_lost_record(1, 4), 4u);  // ring 1's drops so far were all said
  w.pass_ended(10'000);
  EXPECT_TRUE(w.overdue(10'500).empty());
  EXPECT_EQ(w.overdue(11'000), (std::vector<std::size_t>{0, 1, 2}));
  // Ring 0's CPU dropped 9 that no LOST record said: a Lost of every thread from its
  // last record to now.
  auto lost = w.settle(0, 9, 11'000);
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->kind, EventKind::Lost);
  EXPECT_EQ(lost->tid, 0u);
  EXPECT_EQ(lost->lost, 9u);
  EXPECT_EQ(lost->time, 500u);
  EXPECT_EQ(lost->lost_until, 11'000u);
  // Ring 1 dropped nothing new, and was read less than half full: let go without one.
  EXPECT_FALSE(w.settle(1, 4, 11'000));
  // Ring 2 was read more than half full: the counters cannot see the drops of threads
  // still running, so it may have dropped; a Lost of unknown count.
  auto maybe = w.settle(2, 0, 11'000);
  ASSERT_TRUE(maybe);
  EXPECT_EQ(maybe->lost, 0u);
  EXPECT_EQ(maybe->time, 700u);
  EXPECT_EQ(w.horizon(), UINT64_MAX);
  EXPECT_EQ(w.said(), 13u);
  // Ring 0's LOST record comes when its CPU writes again: absorbed, even when it says
  // more than the counter did then; a later one is a new loss.
  EXPECT_EQ(w.on_lost_record(0, 11), 0u);
  EXPECT_EQ(w.on_lost_record(0, 3), 3u);
  EXPECT_EQ(w.said(), 16u);
  // Without the kernel's counter (before Linux 6.0) a ring read less than half full is
  // let go with nothing.
  RingLossWatch old({4096}, 1'000);
  old.on_record(0, 1500, 800);
  old.pass_ended(20'000);
  EXPECT_EQ(old.overdue(30'000), std::vector<std::size_t>{0});
  EXPECT_FALSE(old.settle(0, std::nullopt, 30'000));
}

}  // namespace
}  // namespace uprof
