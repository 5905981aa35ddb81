// Pairing of Go functions (measured at their exits, record/unwind_risk.h GoCode): the
// samples carry the goroutine's g, and an entry pairs with an exit of the same goroutine
// at the same depth, whatever thread either ran on and wherever its stack was (Go moves
// goroutines between threads and copies a stack to grow it).
#include <gtest/gtest.h>

#include "analyse/event_builders.h"
#include "uprof/analyse/pairing.h"

namespace uprof {
namespace {

using test::exit_event;
using test::probe;
using test::sample;

// work: entry #0 (past the stack check), exit #1 (ret); leaf: entry #2, exit #3. Process 50.
constexpr uint32_t kWe = 0, kWx = 1, kLe = 2, kLx = 3;
constexpr uint32_t kW = 0, kL = 1;
constexpr uint32_t kPid = 50;
constexpr uint64_t kG1 = 0xc000002000, kG2 = 0xc000003000;

std::vector<ProbeInfo> table() {
  std::vector<ProbeInfo> t{
      probe(kWe, ProbeKind::Entry, "main.work", 0x483ff2, {"depth"}),
      probe(kWx, ProbeKind::Exit, "main.work", 0x484087, {"$retval"}, 0xa7),
      probe(kLe, ProbeKind::Entry, "main.leaf", 0x485000),
      probe(kLx, ProbeKind::Exit, "main.leaf", 0x485010, {}, 0x10),
  };
  for (auto& p : t) {
    p.symbol = p.function;
    p.frame = p.goroutine = true;
  }
  return t;
}

// A hit of `probe` by goroutine `g` running on thread `tid`, at stack pointer `sp`.
Event on(uint32_t probe, uint32_t tid, uint64_t g, uint64_t time, uint64_t sp,
         std::initializer_list<uint64_t> values = {}) {
  Event e = sample(probe, tid, time, values, kPid);
  e.frame = sp;
  e.goroutine = g;
  return e;
}

struct Paired {
  test::CollectingSink sink;
  PairingCounts counts;
};

Paired pair(const std::vector<Event>& events) {
  const ProbeFunctions functions = group_probes(table());
  Pairer pairer(functions);
  Paired run;
  for (const Event& e : events) pairer.add(e, run.sink);
  pairer.finish(run.sink);
  run.counts = pairer.counts();
  return run;
}

TEST(GoroutinePairing, ACallPairsAcrossThreadsAndAMovedStack) {
  // work(2) -> work(1) -> work(0) on g1: the stack grows inside work(1) (0xc000100000 ->
  // 0xc000200000) and g1 moves from thread 51 to 53 and on to 52.
  Paired r = pair({on(kWe, 51, kG1, 0, 0xc0001007f0, {2}), on(kWe, 51, kG1, 10, 0xc000100000 - 0x820, {1}),
                   on(kWe, 53, kG1, 20, 0xc0002fe000, {0}), on(kWx, 53, kG1, 30, 0xc0002fe000, {7}),
                   on(kWx, 52, kG1, 40, 0xc0002fe820, {8}), on(kWx, 52, kG1, 50, 0xc0002ff040, {9})});
  EXPECT_TRUE(r.sink.unmatched.empty());
  ASSERT_EQ(r.sink.calls.size(), 3u);
  // Innermost first, each at its own depth, with its own entry's values.
  EXPECT_EQ(r.sink.calls[0].call.depth, 2u);
  EXPECT_EQ(r.sink.calls[0].entry_values, std::vector<uint64_t>{0});
  EXPECT_EQ(r.sink.calls[1].call.depth, 1u);
  EXPECT_EQ(r.sink.calls[1].call.duration, 30u);
  EXPECT_EQ(r.sink.calls[1].entry_values, std::vector<uint64_t>{1});
  EXPECT_EQ(r.sink.calls[2].call.depth, 0u);
  EXPECT_EQ(r.sink.calls[2].call.duration, 50u);
  EXPECT_EQ(r.sink.calls[2].return_values, std::vector<uint64_t>{9});
  // A call is its goroutine's, on the thread it was entered on.
  EXPECT_EQ(r.sink.calls[2].call.tid, 51u);
  EXPECT_EQ(r.sink.calls[0].call.tid, 53u);
  for (const auto& c : r.sink.calls) EXPECT_EQ(c.call.goroutine, kG1);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(GoroutinePairing, TwoGoroutinesOnOneThreadKeepTheirOwnCalls) {
  // g1 enters work, is parked; g2 runs work and leaf on the same thread; g1 returns.
  Paired r = pair({on(kWe, 51, kG1, 0, 0x1000, {5}), on(kWe, 51, kG2, 10, 0x2000, {6}),
                   on(kLe, 51, kG2, 15, 0x1f00), on(kLx, 51, kG2, 16, 0x1f00), on(kWx, 51, kG2, 20, 0x2000),
                   on(kWx, 51, kG1, 100, 0x1000)});
  EXPECT_TRUE(r.sink.unmatched.empty());
  ASSERT_EQ(r.sink.calls.size(), 3u);
  EXPECT_EQ(r.sink.calls[1].call.goroutine, kG2);
  EXPECT_EQ(r.sink.calls[1].call.duration, 10u);
  EXPECT_EQ(r.sink.calls[2].call.goroutine, kG1);
  EXPECT_EQ(r.sink.calls[2].call.duration, 100u);
  EXPECT_EQ(r.sink.calls[2].entry_values, std::vector<uint64_t>{5});
}

TEST(GoroutinePairing, AnOuterExitClosesTheCallsAPanicLeft) {
  // work -> leaf panics, recovered in work, which returns: leaf never returned.
  Paired r = pair({on(kWe, 51, kG1, 0, 0x1000), on(kLe, 51, kG1, 10, 0x0f00), on(kWx, 52, kG1, 30, 0x1000)});
  ASSERT_EQ(r.sink.unmatched.size(), 1u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.function, kL);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.reason, UnmatchedReason::Unwound);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.goroutine, kG1);
  ASSERT_EQ(r.sink.calls.size(), 1u);
  EXPECT_EQ(r.sink.calls[0].call.function, kW);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(GoroutinePairing, AThreadsExitLeavesGoroutinesOpenAndTheProcesssEndClosesThem) {
  // g1 enters on thread 51, which exits; g1 returns on 52. g2's call is open when the
  // process's main thread (50) exits.
  Paired r = pair({on(kWe, 51, kG1, 0, 0x1000), exit_event(51, 5, kPid), on(kWx, 52, kG1, 10, 0x1000),
                   on(kWe, 52, kG2, 20, 0x2000), exit_event(kPid, 30, kPid)});
  ASSERT_EQ(r.sink.calls.size(), 1u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 10u);
  ASSERT_EQ(r.sink.unmatched.size(), 1u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.reason, UnmatchedReason::ThreadExited);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.tid, 52u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(GoroutinePairing, ALossOfAnyThreadCutsEveryGoroutineOfTheProcess) {
  // Thread 53's lost events may have been g1's exit and entry: g1's open call is not
  // paired across it.
  Paired r = pair({on(kWe, 51, kG1, 0, 0x1000), test::thread_lost(53, 5, 1, kPid), on(kWx, 52, kG1, 10, 0x1000)});
  EXPECT_TRUE(r.sink.calls.empty());
  EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::Lost), 1u);
  EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::ReturnAfterLoss), 1u);
  EXPECT_TRUE(r.counts.balanced());
}

}  // namespace
}  // namespace uprof
