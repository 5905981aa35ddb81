#include "uprof/analyse/pairing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "analyse/event_builders.h"

namespace uprof {
namespace {

using test::exit_event;
using test::fork_event;
using test::probe;
using test::sample;

// Probe table: f (#0 entry, #1 return), g (#2, #3), h (#4, #5), main (#6 entry only),
// f+0x10 (#7, mid-function entry).
constexpr uint32_t kFe = 0, kFr = 1, kGe = 2, kGr = 3, kHe = 4, kHr = 5, kMain = 6, kFmid = 7;
constexpr uint32_t kF = 0, kG = 1, kH = 2;

std::vector<ProbeInfo> table() {
  return {
      probe(kFe, ProbeKind::Entry, "f", 0x1000, {"%di"}),
      probe(kFr, ProbeKind::Return, "f", 0x1000, {"$retval"}),
      probe(kGe, ProbeKind::Entry, "g", 0x2000),
      probe(kGr, ProbeKind::Return, "g", 0x2000),
      probe(kHe, ProbeKind::Entry, "h", 0x3000),
      probe(kHr, ProbeKind::Return, "h", 0x3000),
      probe(kMain, ProbeKind::Entry, "main", 0x4000),
      probe(kFmid, ProbeKind::Entry, "f", 0x1010, {}, 0x10),
  };
}

struct Paired {
  test::CollectingSink sink;
  PairingCounts counts;
};

Paired pair_with(const std::vector<ProbeInfo>& probes, const std::vector<Event>& events, bool finish = true,
                 std::vector<uint64_t> hit_costs = {}) {
  const ProbeFunctions functions = group_probes(probes);
  Pairer pairer(functions, hit_costs);
  Paired run;
  for (const Event& e : events) pairer.add(e, run.sink);
  if (finish) pairer.finish(run.sink);
  run.counts = pairer.counts();
  return run;
}

Paired pair(const std::vector<Event>& events, bool finish = true, std::vector<uint64_t> hit_costs = {}) {
  return pair_with(table(), events, finish, std::move(hit_costs));
}

TEST(Pairing, PlainCallsCarryDurationsAndValues) {
  Paired r = pair({sample(kFe, 7, 100, {42}), sample(kFr, 7, 150, {1}), sample(kFe, 7, 200, {43}),
                sample(kFr, 7, 260, {0})});
  ASSERT_EQ(r.sink.calls.size(), 2u);
  EXPECT_EQ(r.sink.calls[0].call.function, kF);
  EXPECT_EQ(r.sink.calls[0].call.duration, 50u);
  EXPECT_EQ(r.sink.calls[0].call.entry_time, 100u);
  EXPECT_EQ(r.sink.calls[0].call.return_time, 150u);
  EXPECT_EQ(r.sink.calls[0].entry_values, std::vector<uint64_t>{42});
  EXPECT_EQ(r.sink.calls[0].return_values, std::vector<uint64_t>{1});
  EXPECT_EQ(r.sink.calls[1].call.duration, 60u);
  EXPECT_EQ(r.sink.calls[1].entry_values, std::vector<uint64_t>{43});
  EXPECT_EQ(r.sink.calls[1].call.depth, 0u);
  EXPECT_TRUE(r.sink.unmatched.empty());
  EXPECT_EQ(r.counts.calls, 2u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(Pairing, RecursionGivesEachLevelItsOwnDuration) {
  // f(3) -> f(2) -> f(1): returns come innermost first.
  Paired r = pair({sample(kFe, 1, 0, {3}), sample(kFe, 1, 10, {2}), sample(kFe, 1, 20, {1}), sample(kFr, 1, 25),
                sample(kFr, 1, 40), sample(kFr, 1, 100)});
  ASSERT_EQ(r.sink.calls.size(), 3u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 5u);
  EXPECT_EQ(r.sink.calls[0].entry_values, std::vector<uint64_t>{1});
  EXPECT_EQ(r.sink.calls[0].call.depth, 2u);
  EXPECT_EQ(r.sink.calls[1].call.duration, 30u);
  EXPECT_EQ(r.sink.calls[1].entry_values, std::vector<uint64_t>{2});
  EXPECT_EQ(r.sink.calls[2].call.duration, 100u);
  EXPECT_EQ(r.sink.calls[2].entry_values, std::vector<uint64_t>{3});
  EXPECT_EQ(r.sink.calls[2].call.depth, 0u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(Pairing, NestedCallsIncludeTheirCallees) {
  Paired r = pair({sample(kFe, 1, 0), sample(kGe, 1, 10), sample(kHe, 1, 12), sample(kHr, 1, 13), sample(kGr, 1, 30),
                sample(kFr, 1, 50)});
  ASSERT_EQ(r.sink.calls.size(), 3u);
  EXPECT_EQ(r.sink.calls[0].call.function, kH);
  EXPECT_EQ(r.sink.calls[0].call.duration, 1u);
  EXPECT_EQ(r.sink.calls[1].call.function, kG);
  EXPECT_EQ(r.sink.calls[1].call.duration, 20u);
  EXPECT_EQ(r.sink.calls[1].call.depth, 1u);
  EXPECT_EQ(r.sink.calls[2].call.function, kF);
  EXPECT_EQ(r.sink.calls[2].call.duration, 50u);
  EXPECT_TRUE(r.counts.balanced());
}

// Per-probe hit costs: each call carries what the probe hits between its entry and its
// return on its own thread cost (its own two hits excluded), for --compensate.
TEST(Pairing, CallsCarryTheCostOfTheKernelCountsInsideThem) {
  //                   fe   fr   ge   gr   he   hr  main  fmid
  std::vector<uint64_t> cost{100, 200, 10, 20, 1, 2, 1000, 5000};
  // f { g { h } h  fmid }, with main (entry only) and another thread's g inside f's time.
  Paired r = pair({sample(kFe, 1, 0), sample(kGe, 1, 10), sample(kHe, 1, 12), sample(kHr, 1, 13), sample(kGr, 1, 30),
                   sample(kGe, 2, 31), sample(kGr, 2, 32), sample(kHe, 1, 40), sample(kHr, 1, 41),
                   sample(kFmid, 1, 42), sample(kFr, 1, 50), sample(kMain, 1, 60), sample(kFe, 1, 70),
                   sample(kFr, 1, 80)},
                  true, cost);
  ASSERT_EQ(r.sink.calls.size(), 6u);
  auto nested = [&](std::size_t i) { return r.sink.calls[i].call.nested_probe_ns; };
  EXPECT_EQ(r.sink.calls[0].call.function, kH);
  EXPECT_EQ(nested(0), 0u);
  EXPECT_EQ(r.sink.calls[1].call.function, kG);
  EXPECT_EQ(nested(1), 3u);          // h's two hits
  EXPECT_EQ(r.sink.calls[2].call.tid, 2u);
  EXPECT_EQ(nested(2), 0u);          // the other thread's g: nothing inside it
  EXPECT_EQ(r.sink.calls[4].call.function, kF);
  EXPECT_EQ(nested(4), 30u + 3u + 3u + 5000u);  // g, h inside g, h, f+0x10; not thread 2's g
  EXPECT_EQ(r.sink.calls[5].call.function, kF);
  EXPECT_EQ(nested(5), 0u);          // main's hit came before it

  // A forked child returns from its parent's open f: what was hit before the fork
  // counts in both, what each hit after it in its own.
  Paired k = pair({sample(kFe, 10, 0), sample(kGe, 10, 1), sample(kGr, 10, 2), fork_event(11, 11, 10, 10, 5),
                   sample(kHe, 11, 6), sample(kHr, 11, 7), sample(kFr, 11, 20), sample(kFr, 10, 30)},
                  true, cost);
  ASSERT_EQ(k.sink.calls.size(), 4u);  // g, the child's h, the child's f, the parent's f
  EXPECT_EQ(k.sink.calls[2].call.pid, 11u);
  EXPECT_EQ(k.sink.calls[2].call.nested_probe_ns, 30u + 3u);
  EXPECT_EQ(k.sink.calls[3].call.pid, 10u);
  EXPECT_EQ(k.sink.calls[3].call.nested_probe_ns, 30u);

  // Without costs, nothing is counted.
  Paired none = pair({sample(kFe, 1, 0), sample(kGe, 1, 10), sample(kGr, 1, 30), sample(kFr, 1, 50)});
  for (const auto& c : none.sink.calls) EXPECT_EQ(c.call.nested_probe_ns, 0u);
}

TEST(Pairing, ThreadsInterleavedPairOnTheirOwnStacks) {
  Paired r = pair({sample(kFe, 1, 0), sample(kFe, 2, 5), sample(kFr, 1, 20), sample(kFe, 1, 30), sample(kFr, 2, 100),
                sample(kFr, 1, 31)});
  ASSERT_EQ(r.sink.calls.size(), 3u);
  EXPECT_EQ(r.sink.calls[0].call.tid, 1u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 20u);
  EXPECT_EQ(r.sink.calls[1].call.tid, 2u);
  EXPECT_EQ(r.sink.calls[1].call.duration, 95u);
  EXPECT_EQ(r.sink.calls[1].call.depth, 0u);
  EXPECT_EQ(r.sink.calls[2].call.tid, 1u);
  EXPECT_EQ(r.sink.calls[2].call.duration, 1u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(Pairing, LongjmpLeavesInnerFramesUnwoundAndPairsTheOuter) {
  // f -> g -> h, then h longjmps to a setjmp in f: the next return is f's.
  Paired r = pair({sample(kFe, 1, 0), sample(kGe, 1, 10), sample(kHe, 1, 20), sample(kFr, 1, 50)});
  ASSERT_EQ(r.sink.unmatched.size(), 2u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.function, kH);  // innermost first
  EXPECT_EQ(r.sink.unmatched[0].unmatched.reason, UnmatchedReason::Unwound);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.time, 20u);
  EXPECT_EQ(r.sink.unmatched[1].unmatched.function, kG);
  EXPECT_EQ(r.sink.unmatched[1].unmatched.reason, UnmatchedReason::Unwound);
  ASSERT_EQ(r.sink.calls.size(), 1u);
  EXPECT_EQ(r.sink.calls[0].call.function, kF);
  EXPECT_EQ(r.sink.calls[0].call.duration, 50u);
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::Unwound), 2u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(Pairing, EntriesPastTheKernelNestingLimitNeverReturn) {
  // f recurses 70 deep; the kernel armed returns for the outer 64 only.
  std::vector<Event> events;
  uint64_t t = 0;
  for (int i = 0; i < 70; ++i) events.push_back(sample(kFe, 1, t++, {static_cast<uint64_t>(i)}));
  for (int i = 0; i < 64; ++i) events.push_back(sample(kFr, 1, t++));
  // Back at depth 0 the limit no longer applies.
  events.push_back(sample(kFe, 1, t++));
  events.push_back(sample(kFr, 1, t++));
  Paired r = pair(events);
  EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::NestingLimit), 6u);
  EXPECT_EQ(r.sink.unmatched.size(), 6u);
  ASSERT_EQ(r.sink.calls.size(), 65u);
  // The innermost armed call is level 63: its return is the first one.
  EXPECT_EQ(r.sink.calls[0].entry_values, std::vector<uint64_t>{63});
  EXPECT_EQ(r.sink.calls[0].call.depth, 63u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 70u - 63u);
  EXPECT_EQ(r.sink.calls[63].entry_values, std::vector<uint64_t>{0});
  EXPECT_EQ(r.sink.unmatched[0].values, std::vector<uint64_t>{64});
  EXPECT_TRUE(r.counts.balanced());
}

TEST(Pairing, NestingLimitCountsReturnProbedFramesOnly) {
  // main (entry only) and the mid-function probe do not arm returns; 64 nested f are all armed.
  std::vector<Event> events{sample(kMain, 1, 0)};
  for (int i = 0; i < 64; ++i) events.push_back(sample(kFe, 1, 1 + i));
  events.push_back(sample(kFmid, 1, 100));
  for (int i = 0; i < 64; ++i) events.push_back(sample(kFr, 1, 200 + i));
  Paired r = pair(events);
  EXPECT_EQ(r.sink.calls.size(), 64u);
  EXPECT_TRUE(r.sink.unmatched.empty());
  EXPECT_EQ(r.sink.hits.size(), 2u);
  EXPECT_EQ(r.counts.hits, 2u);
}

TEST(Pairing, ThreadExitMidCallClosesItsFrames) {
  Paired r = pair({sample(kFe, 2, 0), sample(kGe, 2, 5), sample(kFe, 3, 6), exit_event(2, 10),
                // tid 2 reused by a new thread: starts clean.
                sample(kFe, 2, 20), sample(kFr, 2, 30), sample(kFr, 3, 40)});
  EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::ThreadExited), 2u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.function, kG);
  EXPECT_EQ(r.sink.unmatched[1].unmatched.function, kF);
  ASSERT_EQ(r.sink.calls.size(), 2u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 10u);
  EXPECT_EQ(r.sink.calls[1].call.tid, 3u);
  EXPECT_EQ(r.sink.calls[1].call.duration, 34u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(Pairing, TidReusedByAnotherProcessWithoutExitClosesTheOldFrames) {
  Paired r = pair({sample(kFe, 5, 0, {}, 5), sample(kFe, 5, 10, {}, 9), sample(kFr, 5, 20, {}, 9)});
  ASSERT_EQ(r.sink.unmatched.size(), 1u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.reason, UnmatchedReason::ThreadExited);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.pid, 5u);
  ASSERT_EQ(r.sink.calls.size(), 1u);
  EXPECT_EQ(r.sink.calls[0].call.pid, 9u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 10u);
}

TEST(Pairing, OpenCallsAtTheEndAreRecordingStopped) {
  Paired r = pair({sample(kFe, 1, 0), sample(kGe, 1, 10), sample(kFe, 2, 11)});
  EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::RecordingStopped), 3u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.function, kG);
  EXPECT_EQ(r.sink.unmatched[1].unmatched.function, kF);
  EXPECT_EQ(r.sink.unmatched[2].unmatched.tid, 2u);
  EXPECT_TRUE(r.counts.balanced());
  // Without finish() they are still open, and the counts say so.
  Paired open = pair({sample(kFe, 1, 0)}, false);
  EXPECT_FALSE(open.counts.balanced());
}

TEST(Pairing, ReturnWithoutEntryKeepsTheStackIntact) {
  // g's entry came before the recording; f stays open and still pairs.
  Paired r = pair({sample(kFe, 1, 0), sample(kGr, 1, 5, {}), sample(kFr, 1, 9, {77})});
  ASSERT_EQ(r.sink.unmatched.size(), 1u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.reason, UnmatchedReason::ReturnWithoutEntry);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.function, kG);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.probe, kGr);
  ASSERT_EQ(r.sink.calls.size(), 1u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 9u);
  Paired r2 = pair({sample(kFr, 1, 5, {77})});
  ASSERT_EQ(r2.sink.unmatched.size(), 1u);
  EXPECT_EQ(r2.sink.unmatched[0].values, std::vector<uint64_t>{77});
  EXPECT_EQ(r2.counts.returns, 1u);
  EXPECT_TRUE(r2.counts.balanced());
}

TEST(Pairing, ForkedChildReturnsFromItsParentsOpenCalls) {
  // f() calls fork(): both processes return from f. A new thread (same pid) inherits nothing.
  Paired r = pair({sample(kFe, 10, 0), fork_event(11, 11, 10, 10, 5), fork_event(10, 12, 10, 10, 6),
                sample(kFr, 11, 20), sample(kFr, 10, 30), sample(kFr, 12, 31)});
  ASSERT_EQ(r.sink.calls.size(), 2u);
  EXPECT_EQ(r.sink.calls[0].call.pid, 11u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 20u);
  EXPECT_EQ(r.sink.calls[1].call.pid, 10u);
  EXPECT_EQ(r.sink.calls[1].call.duration, 30u);
  EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::ReturnWithoutEntry), 1u);  // the thread's
  EXPECT_EQ(r.counts.inherited, 1u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(Pairing, UnpairedProbesCountHits) {
  Paired r = pair({sample(kMain, 1, 0), sample(kFe, 1, 1), sample(kFmid, 1, 2), sample(kFr, 1, 3),
                sample(99, 1, 4)});
  EXPECT_EQ(r.sink.hits.size(), 2u);
  EXPECT_EQ(r.sink.hits[0].function, 3u);  // main
  EXPECT_EQ(r.sink.hits[1].probe, kFmid);
  EXPECT_EQ(r.sink.calls.size(), 1u);
  EXPECT_EQ(r.counts.bad_events, 1u);
}

// Random call trees on several threads, with longjmps, exits, the nesting limit
// and truncation at both ends; the pairer must reproduce exactly the calls that
// a simulated program made, and account for every other entry.
TEST(Pairing, RandomProgramsPairExactlyAndAccountForEveryEntry) {
  std::mt19937_64 rng(12345);
  std::array<std::size_t, kUnmatchedReasons> seen{};  // the rounds must exercise every case
  for (int round = 0; round < 20; ++round) {
    struct Open {
      uint32_t fn;
      uint64_t time;
      bool armed;
    };
    std::vector<std::vector<Open>> stacks(4);
    std::vector<Event> events;
    std::vector<std::tuple<uint32_t, uint32_t, uint64_t>> expected;  // tid, fn, duration
    std::size_t expected_unwound = 0, expected_limit = 0, expected_exited = 0;
    const uint32_t entry_of[] = {kFe, kGe, kHe}, return_of[] = {kFr, kGr, kHr};
    // Some rounds stay shallow, some climb past the kernel's nesting limit.
    const int push_per_mille = 500 + 80 * (round % 3);
    uint64_t t = 1000;
    for (int step = 0; step < 4000; ++step) {
      const uint32_t ti = rng() % 4, tid = 100 + ti;
      auto& st = stacks[ti];
      const int action = static_cast<int>(rng() % 1000);
      t += 1 + rng() % 50;
      std::size_t armed_depth = 0;
      for (const Open& o : st) armed_depth += o.armed;
      if (action < push_per_mille || st.empty()) {
        const uint32_t fn = static_cast<uint32_t>(rng() % 3);
        const bool armed = armed_depth < kMaxUretprobeDepth;
        expected_limit += !armed;
        st.push_back({fn, t, armed});
        events.push_back(sample(entry_of[fn], tid, t));
      } else if (action < 975) {
        const Open o = st.back();
        st.pop_back();
        if (!o.armed) continue;  // the kernel gives no return
        events.push_back(sample(return_of[o.fn], tid, t));
        expected.emplace_back(tid, o.fn, t - o.time);
      } else if (action < 997) {
        // longjmp out of the top frames to an outer frame that then returns.
        // Only when the target is the innermost armed frame of its function can a
        // pairer without stack pointers tell; a setjmp in an outer f below an inner f
        // is the documented limit.
        const std::size_t target = rng() % st.size();
        bool ambiguous = false;
        for (std::size_t i = target + 1; i < st.size(); ++i) ambiguous |= st[i].fn == st[target].fn;
        if (ambiguous || !st[target].armed) continue;
        for (std::size_t i = target + 1; i < st.size(); ++i) expected_unwound += st[i].armed;
        st.resize(target + 1);
        const Open o = st.back();
        st.pop_back();
        events.push_back(sample(return_of[o.fn], tid, t));
        expected.emplace_back(tid, o.fn, t - o.time);
      } else {
        for (const Open& o : st) expected_exited += o.armed;
        st.clear();
        events.push_back(exit_event(tid, t));
      }
    }
    std::size_t expected_stopped = 0;
    for (const auto& st : stacks) {
      for (const Open& o : st) expected_stopped += o.armed;
    }

    Paired r = pair(events);
    std::vector<std::tuple<uint32_t, uint32_t, uint64_t>> got;
    for (const auto& c : r.sink.calls) got.emplace_back(c.call.tid, c.call.function, c.call.duration);
    EXPECT_EQ(got, expected) << "round " << round;
    EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::Unwound), expected_unwound);
    EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::NestingLimit), expected_limit);
    EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::ThreadExited), expected_exited);
    EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::RecordingStopped), expected_stopped);
    EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::ReturnWithoutEntry), 0u);
    EXPECT_TRUE(r.counts.balanced());
    EXPECT_EQ(r.counts.entries, r.counts.calls + r.sink.unmatched.size());
    for (std::size_t i = 0; i < kUnmatchedReasons; ++i) seen[i] += r.counts.unmatched[i];
  }
  EXPECT_GT(seen[static_cast<std::size_t>(UnmatchedReason::Unwound)], 20u);
  EXPECT_GT(seen[static_cast<std::size_t>(UnmatchedReason::NestingLimit)], 20u);
  EXPECT_GT(seen[static_cast<std::size_t>(UnmatchedReason::ThreadExited)], 20u);
  EXPECT_GT(seen[static_cast<std::size_t>(UnmatchedReason::RecordingStopped)], 20u);
}

// Python's function pair, keyed by $arg1 and $arg2 (file and function name: here 1/2
// for fib, 1/3 for main) with the line as $arg3; then an unkeyed start/done pair.
Paired pair_usdt(const std::vector<Event>& events) {
  return pair_with({test::usdt_probe(0, "python:function__entry", 0x100, {"$arg1", "$arg2", "$arg3"}, 0b011),
                    test::usdt_probe(1, "python:function__return", 0x200, {"$arg1", "$arg2", "$arg3"}, 0b011),
                    test::usdt_probe(2, "fx:work__start", 0x300, {"$arg1"}),
                    test::usdt_probe(3, "fx:work__done", 0x400, {"$arg1"})},
                   events);
}

// python3.11 fires function__return for every return but function__entry for few
// (CPython gh-98894): a return whose key matches no open call is "return without entry",
// and never closes another function's call.
TEST(Pairing, KeyedUsdtReturnClosesTheCallWithItsKey) {
  Paired r = pair_usdt({
      sample(0, 7, 100, {1, 3, 10}),  // main enters
      sample(1, 7, 150, {1, 2, 5}),   // fib returns: its entry never fired
      sample(1, 7, 160, {1, 2, 5}),
      sample(0, 7, 200, {1, 2, 4}),   // fib enters
      sample(1, 7, 260, {1, 2, 5}),   // and returns (another line: not in the key)
      sample(1, 7, 400, {1, 3, 12}),  // main returns
  });
  ASSERT_EQ(r.sink.calls.size(), 2u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 60u);
  EXPECT_EQ(r.sink.calls[0].entry_values, (std::vector<uint64_t>{1, 2, 4}));
  EXPECT_EQ(r.sink.calls[0].return_values, (std::vector<uint64_t>{1, 2, 5}));
  EXPECT_EQ(r.sink.calls[0].call.depth, 1u);
  EXPECT_EQ(r.sink.calls[1].call.duration, 300u);
  EXPECT_EQ(r.sink.calls[1].entry_values, (std::vector<uint64_t>{1, 3, 10}));
  EXPECT_EQ(r.sink.unmatched_count(UnmatchedReason::ReturnWithoutEntry), 2u);
  EXPECT_EQ(r.sink.unmatched.size(), 2u);
}

// A USDT pair arms no return trampoline: the kernel's nesting limit is not theirs.
TEST(Pairing, UsdtPairsNestBeyondTheTrampolineLimit) {
  std::vector<Event> events;
  const uint64_t depth = kMaxUretprobeDepth + 36;
  for (uint64_t i = 0; i < depth; i++) events.push_back(sample(2, 9, 1000 + i, {i}));
  for (uint64_t i = 0; i < depth; i++) events.push_back(sample(3, 9, 5000 + i, {depth - 1 - i}));
  Paired r = pair_usdt(events);
  ASSERT_EQ(r.sink.calls.size(), depth);
  EXPECT_TRUE(r.sink.unmatched.empty());
  // Unkeyed: each done closes the innermost start.
  EXPECT_EQ(r.sink.calls.front().entry_values, std::vector<uint64_t>{depth - 1});
  EXPECT_EQ(r.sink.calls.front().call.duration, 5000u - (1000u + depth - 1));
  EXPECT_EQ(r.sink.calls.back().call.duration, 5000u + depth - 1 - 1000u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(Pairing, ReasonNames) {
  EXPECT_EQ(to_string(UnmatchedReason::ThreadExited), "thread exited");
  EXPECT_EQ(to_string(UnmatchedReason::ReturnWithoutEntry), "return without entry");
  EXPECT_EQ(to_string(UnmatchedReason::Lost), "events lost");
  EXPECT_EQ(to_string(UnmatchedReason::ReturnAfterLoss), "return after lost events");
}

}  // namespace
}  // namespace uprof
