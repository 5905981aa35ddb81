#include "uprof/drain/event_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace uprof {
namespace {

Event at(uint64_t t, uint32_t tid = 1) {
  Event e;
  e.time = t;
  e.tid = tid;
  return e;
}

TEST(EventOrder, MergesRingsAndHoldsBackWhatCouldBeOvertaken) {
  EventOrderer o;
  std::vector<uint64_t> out;
  auto sink = [&](const Event& e) -> Status {
    out.push_back(e.time);
    return ok();
  };
  o.pass_started(100);
  o.push(0, at(50));
  o.push(1, at(30));  // ring 1 is older, drained later in the same pass
  ASSERT_TRUE(o.pass_ended(sink));
  EXPECT_TRUE(out.empty());  // nothing is older than the previous pass start (0)
  o.pass_started(200);
  o.push(1, at(95));  // taken before pass 1 started but only visible now
  o.push(0, at(150));
  ASSERT_TRUE(o.pass_ended(sink));
  EXPECT_EQ(out, (std::vector<uint64_t>{30, 50, 95}));  // < 100, the previous pass start
  o.pass_started(300);
  ASSERT_TRUE(o.pass_ended(sink));
  EXPECT_EQ(out.back(), 150u);
  ASSERT_TRUE(o.flush_all(sink));
  EXPECT_EQ(o.late(), 0u);
  EXPECT_EQ(o.pending(), 0u);
}

// A ring that may still owe an older event (a LOST record dated at its record before
// the drops: engine/perf/ring_loss_watch.h) holds the others back.
TEST(EventOrder, AHoldKeepsBackEverythingFromItsTimeOn) {
  EventOrderer o;
  std::vector<uint64_t> out;
  auto sink = [&](const Event& e) -> Status {
    out.push_back(e.time);
    return ok();
  };
  o.pass_started(100);
  o.push(0, at(40));
  o.push(1, at(60));
  ASSERT_TRUE(o.pass_ended(sink));
  o.pass_started(200);
  o.push(1, at(90));
  ASSERT_TRUE(o.pass_ended(sink, 40));  // ring 0 may owe an event of time 40
  EXPECT_TRUE(out.empty());
  o.pass_started(300);
  o.push(0, at(40));  // it did: the loss, after its record of 40
  o.push(0, at(250));
  ASSERT_TRUE(o.pass_ended(sink));
  EXPECT_EQ(out, (std::vector<uint64_t>{40, 40, 60, 90}));
  EXPECT_EQ(o.late(), 0u);
}

TEST(EventOrder, EqualTimesKeepArrivalOrderWithinARing) {
  EventOrderer o;
  std::vector<uint32_t> tids;
  for (uint32_t i = 0; i < 100; i++) o.push(0, at(7, i));
  ASSERT_TRUE(o.flush_all([&](const Event& e) -> Status {
    tids.push_back(e.tid);
    return ok();
  }));
  for (uint32_t i = 0; i < 100; i++) EXPECT_EQ(tids[i], i);
}

TEST(EventOrder, RandomInterleavingOfSortedRingsComesOutSorted) {
  std::mt19937_64 rng(1);
  EventOrderer o;
  std::vector<uint64_t> out;
  auto sink = [&](const Event& e) -> Status {
    out.push_back(e.time);
    return ok();
  };
  uint64_t now = 1000;
  std::size_t pushed = 0;
  for (int pass = 0; pass < 200; pass++) {
    o.pass_started(now);
    // Each of 4 rings gets sorted times taken between the previous pass start and now.
    for (std::size_t ring = 0; ring < 4; ring++) {
      std::vector<uint64_t> ts;
      for (int k = 0; k < 20; k++) ts.push_back(now - 1000 + rng() % 1000);
      std::sort(ts.begin(), ts.end());
      for (auto t : ts) o.push(ring, at(t)), pushed++;
    }
    ASSERT_TRUE(o.pass_ended(sink));
    now += 1000;
  }
  ASSERT_TRUE(o.flush_all(sink));
  EXPECT_EQ(out.size(), pushed);
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
  EXPECT_EQ(o.late(), 0u);
}

TEST(EventOrder, AnOutOfOrderRingIsCountedAsLate) {
  EventOrderer o;
  o.push(0, at(20));
  o.push(0, at(10));
  std::vector<uint64_t> out;
  ASSERT_TRUE(o.flush_all([&](const Event& e) -> Status {
    out.push_back(e.time);
    return ok();
  }));
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(o.late(), 1u);
}


// Full: the reader stops taking records. The events held are counted compactly
// (event_queue.h), not at sizeof(Event) each.
TEST(EventOrder, FullAtTheBudget) {
  EventOrderer o(1 << 20);
  uint64_t n = 0;
  Event e = at(0);
  e.nvalues = 2;
  while (!o.full()) {
    e.time = ++n;
    o.push(0, e);
  }
  // Counted by the chunk: full once the last chunk it needed was taken. A chunk holds
  // whole events of 72 bytes (56 + 2 values).
  const uint64_t per_chunk = ChunkPool::kChunkBytes / 72, chunks = (1u << 20) / ChunkPool::kChunkBytes;
  EXPECT_GT(n, (chunks - 1) * per_chunk);
  EXPECT_LE(n, chunks * per_chunk);
  EXPECT_EQ(o.held_bytes(), o.peak_bytes());
  std::size_t out = 0;
  ASSERT_TRUE(o.flush_all([&](const Event&) -> Status { out++; return ok(); }));
  EXPECT_EQ(out, n);
  EXPECT_FALSE(o.full());
  EXPECT_EQ(o.held_bytes(), 0u);
}

// A pass that stopped early read its ring only up to its newest event: the records
// left behind may be older than the pass's start, so that is not where it counts from.
TEST(EventOrder, ACutPassCountsFromItsNewestEvent) {
  EventOrderer o;
  std::vector<uint64_t> out;
  auto sink = [&](const Event& e) -> Status {
    out.push_back(e.time);
    return ok();
  };
  o.pass_started(1000);
  for (uint64_t t : {100, 300, 500}) o.push(0, at(t));
  o.pass_cut();  // records of 600 and 900 stay in the ring
  ASSERT_TRUE(o.pass_ended(sink));
  EXPECT_TRUE(out.empty());
  o.pass_started(2000);
  o.push(0, at(600));
  o.push(0, at(900));
  o.push(1, at(550));
  ASSERT_TRUE(o.pass_ended(sink));
  EXPECT_EQ(out, (std::vector<uint64_t>{100, 300}));  // < 500, not < 1000
  o.pass_started(3000);
  ASSERT_TRUE(o.pass_ended(sink));
  EXPECT_EQ(out, (std::vector<uint64_t>{100, 300, 500, 550, 600, 900}));
  EXPECT_EQ(o.late(), 0u);
}

// A reader that stops at a small budget in every pass still gets every event out,
// in order: each pass frees what the one before it read.
TEST(EventOrder, ATightBudgetStillDrainsEverythingInOrder) {
  EventOrderer o(128 << 10);
  // Two rings' records, in time order each, interleaved as one ring holds them.
  std::vector<std::pair<std::size_t, uint64_t>> ring;
  for (uint64_t i = 0; i < 50000; i++) ring.emplace_back(i % 2, 10 + 3 * i - (i % 2));
  std::vector<uint64_t> out;
  auto sink = [&](const Event& e) -> Status {
    out.push_back(e.time);
    return ok();
  };
  std::size_t next = 0, passes = 0, cuts = 0;
  uint64_t now = 1'000'000;
  while (next < ring.size() || o.pending()) {
    ASSERT_LT(++passes, 1000u) << "no progress";
    o.pass_started(now += 1000);
    bool cut = false;
    while (next < ring.size()) {
      if (o.full()) {
        cut = true;
        break;
      }
      o.push(ring[next].first, at(ring[next].second));
      next++;
    }
    if (cut) o.pass_cut(), cuts++;
    ASSERT_TRUE(o.pass_ended(sink));
    EXPECT_LE(o.peak_bytes(), (128u << 10) + 2 * ChunkPool::kChunkBytes);
  }
  EXPECT_GT(cuts, 10u);
  EXPECT_EQ(out.size(), ring.size());
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
  EXPECT_EQ(o.late(), 0u);
}

}  // namespace
}  // namespace uprof
