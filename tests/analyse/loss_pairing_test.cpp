// The pairing rule after lost events (analyse/pairing.h): a loss closes the open calls of
// the threads it touched as "events lost", and no return after it pairs with an entry
// before it; a loss of every thread also cuts what enters or returns in its gap.
#include <gtest/gtest.h>

#include <algorithm>
#include <compare>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "analyse/event_builders.h"
#include "uprof/analyse/pairing.h"

namespace uprof {
namespace {

using test::exit_event;
using test::fork_event;
using test::gap_lost;
using test::lost;
using test::probe;
using test::sample;
using test::thread_lost;

// f (#0 entry, #1 return), g (#2, #3).
constexpr uint32_t kFe = 0, kFr = 1, kGe = 2, kGr = 3;
constexpr uint32_t kF = 0, kG = 1;

struct Paired {
  test::CollectingSink sink;
  PairingCounts counts;
};

Paired pair(const std::vector<Event>& events) {
  const std::vector<ProbeInfo> probes = {probe(kFe, ProbeKind::Entry, "f", 0x1000),
                                         probe(kFr, ProbeKind::Return, "f", 0x1000),
                                         probe(kGe, ProbeKind::Entry, "g", 0x2000),
                                         probe(kGr, ProbeKind::Return, "g", 0x2000)};
  const ProbeFunctions functions = group_probes(probes);
  Pairer pairer(functions);
  Paired run;
  for (const Event& e : events) pairer.add(e, run.sink);
  pairer.finish(run.sink);
  run.counts = pairer.counts();
  return run;
}

uint64_t longest(const Paired& r) {
  uint64_t d = 0;
  for (const auto& c : r.sink.calls) d = std::max(d, c.call.duration);
  return d;
}

// The case: f's return and the next f's entry were dropped; that next f's return
// came. Paired across the gap it made one call of the whole interval.
TEST(LossPairing, ALossNeverJoinsTwoCallsIntoOne) {
  const std::vector<Event> gap = {sample(kFe, 1, 0), sample(kFr, 1, 67'000'000'000)};
  EXPECT_EQ(pair(gap).sink.calls.size(), 1u);  // what the stream alone says
  for (const Event& marker : {thread_lost(1, 67'000'000'000, 2), lost(5, 2)}) {
    Paired r = pair({sample(kFe, 1, 0), marker, sample(kFr, 1, 67'000'000'000), sample(kFe, 1, 67'000'000'100),
                     sample(kFr, 1, 67'000'000'102)});
    ASSERT_EQ(r.sink.calls.size(), 1u);
    EXPECT_EQ(r.sink.calls[0].call.duration, 2u);  // the call after the loss
    EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::Lost), 1u);
    EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::ReturnAfterLoss), 1u);
    EXPECT_EQ(r.counts.cut_by_loss(), 2u);
    EXPECT_EQ(r.counts.lost_samples, 2u);
    EXPECT_TRUE(r.counts.balanced());
  }
}

TEST(LossPairing, RecursionAcrossALossPairsNoLevel) {
  // f -> f(dropped) -> its return came, then the outer f's: neither may close the outer entry.
  Paired r = pair({sample(kFe, 1, 0), thread_lost(1, 30), sample(kFr, 1, 30), sample(kFr, 1, 40)});
  EXPECT_TRUE(r.sink.calls.empty());
  ASSERT_EQ(r.sink.unmatched.size(), 3u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.reason, UnmatchedReason::Lost);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.time, 0u);
  EXPECT_EQ(r.sink.unmatched[1].unmatched.reason, UnmatchedReason::ReturnAfterLoss);
  EXPECT_EQ(r.sink.unmatched[1].unmatched.probe, kFr);
  EXPECT_EQ(r.sink.unmatched[2].unmatched.reason, UnmatchedReason::ReturnAfterLoss);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(LossPairing, OneThreadsLossLeavesTheOthersPaired) {
  Paired r = pair({sample(kFe, 1, 0), sample(kFe, 2, 1), sample(kGe, 1, 2), thread_lost(1, 10, 1),
                   sample(kGr, 1, 10), sample(kFr, 2, 20), sample(kFr, 1, 30), sample(kGr, 2, 40)});
  ASSERT_EQ(r.sink.calls.size(), 1u);
  EXPECT_EQ(r.sink.calls[0].call.tid, 2u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 19u);
  // Thread 1: f and g cut (innermost first), both returns after the loss. Thread 2's g
  // return without entry is its own: no loss touched thread 2.
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::Lost), 2u);
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::ReturnAfterLoss), 2u);
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::ReturnWithoutEntry), 1u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.function, kG);
  EXPECT_EQ(r.sink.unmatched[1].unmatched.function, kF);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(LossPairing, ALossOfEveryThreadCutsItsGap) {
  // Any thread may have lost events between 100 and 200 (one CPU's ring was full):
  // calls open at 100, entered in the gap or returning in it are cut; those before and
  // after pair.
  Paired r = pair({sample(kFe, 1, 10), sample(kFr, 1, 20),   // before: paired
                   sample(kFe, 2, 50),                       // open at the gap: cut
                   gap_lost(100, 200, 7),
                   sample(kFe, 3, 150), sample(kFr, 3, 180),  // in the gap: cut, both halves
                   sample(kGe, 1, 160), sample(kGr, 1, 250),  // entered in it: cut
                   sample(kFr, 2, 260),                       // f of thread 2: its entry was before
                   sample(kFe, 3, 300), sample(kFr, 3, 310)});  // after: paired
  ASSERT_EQ(r.sink.calls.size(), 2u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 10u);
  EXPECT_EQ(r.sink.calls[1].call.entry_time, 300u);
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::Lost), 3u);
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::ReturnAfterLoss), 3u);
  EXPECT_EQ(r.counts.lost_samples, 7u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(LossPairing, AThreadFirstSeenAfterALossOfEveryThreadMayHaveLostItsEntries) {
  Paired r = pair({gap_lost(5, 5), sample(kFr, 9, 50), sample(kFe, 9, 60), sample(kFr, 9, 70)});
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::ReturnAfterLoss), 1u);
  ASSERT_EQ(r.sink.calls.size(), 1u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 10u);
}

TEST(LossPairing, CallsEnteredInAGapAreBlamedOnTheLossWhateverEndsThem) {
  // An exit, the end of the recording, an unwind: a call entered in the gap is "events lost".
  Paired r = pair({gap_lost(0, 100), sample(kFe, 1, 10), sample(kGe, 1, 20), sample(kFe, 2, 30),
                   exit_event(1, 150)});
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::Lost), 3u);
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::ThreadExited), 0u);
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::RecordingStopped), 0u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(LossPairing, AForkedChildInheritsTheCutFrames) {
  Paired r = pair({gap_lost(0, 100), sample(kFe, 10, 10), fork_event(11, 11, 10, 10, 20), sample(kFr, 11, 150),
                   sample(kFr, 10, 160)});
  EXPECT_TRUE(r.sink.calls.empty());
  EXPECT_EQ(r.counts.inherited, 1u);
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::Lost), 2u);
  EXPECT_EQ(r.counts.unmatched_of(UnmatchedReason::ReturnAfterLoss), 2u);
  EXPECT_TRUE(r.counts.balanced());
}

// A program's true calls, as events, with losses laid over them in the two ways the
// engines see them; the pairer must report exactly the calls whose halves both came and
// that no loss of their thread separates, and never another.
struct TrueCall {
  uint32_t tid, fn;
  uint64_t entry, ret;
  auto operator<=>(const TrueCall&) const = default;
};

struct Program {
  std::vector<Event> events;      // every hit, in time order
  std::vector<TrueCall> calls;
  std::vector<uint32_t> cpu;      // per event: the CPU (ring) it ran on
};

Program random_program(std::mt19937_64& rng) {
  Program p;
  const uint32_t entry_of[] = {kFe, kGe}, return_of[] = {kFr, kGr};
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> stacks(4);
  std::vector<uint32_t> on_cpu = {0, 1, 2, 0};
  uint64_t t = 1000;
  for (int step = 0; step < 6000; ++step) {
    const uint32_t ti = rng() % 4, tid = 100 + ti;
    auto& st = stacks[ti];
    t += 1 + rng() % 20;
    if (rng() % 10 == 0) on_cpu[ti] = rng() % 3;  // migrates
    // Few functions, so that recursion (an f inside an f) is common: the case a loss
    // would mis-pair.
    if (st.empty() || (st.size() < 20 && rng() % 2)) {
      const uint32_t fn = rng() % 2;
      st.emplace_back(fn, t);
      p.events.push_back(sample(entry_of[fn], tid, t));
    } else {
      auto [fn, at] = st.back();
      st.pop_back();
      p.events.push_back(sample(return_of[fn], tid, t));
      p.calls.push_back({tid, fn, at, t});
    }
    p.cpu.push_back(on_cpu[ti]);
  }
  return p;
}

// The calls whose entry and return both came: those the pairer may report.
std::set<TrueCall> kept_calls(const Program& p, const std::vector<bool>& dropped) {
  std::set<uint64_t> kept_times;
  for (std::size_t i = 0; i < p.events.size(); ++i)
    if (!dropped[i]) kept_times.insert(p.events[i].time);
  std::set<TrueCall> out;
  for (const TrueCall& c : p.calls)
    if (kept_times.count(c.entry) && kept_times.count(c.ret)) out.insert(c);
  return out;
}

std::set<TrueCall> reported(const Paired& r) {
  std::set<TrueCall> out;
  for (const auto& c : r.sink.calls) out.insert({c.call.tid, c.call.function, c.call.entry_time, c.call.return_time});
  return out;
}

// The BPF engine: drops of a thread's events mark its next event written (and a note
// left at the end becomes a loss then).
TEST(LossPairing, RandomDropsMarkedPerThreadCutExactlyTheCallsTheySeparate) {
  std::mt19937_64 rng(2024);
  uint64_t cut_total = 0;
  for (int round = 0; round < 10; ++round) {
    const Program p = random_program(rng);
    std::vector<bool> dropped(p.events.size());
    for (std::size_t i = 0; i < p.events.size(); ++i) dropped[i] = rng() % 100 < 3;
    std::vector<Event> stream;
    std::map<uint32_t, uint64_t> pending;                 // tid -> drops not yet marked
    std::map<uint32_t, std::vector<uint64_t>> drops_of;   // tid -> times of its dropped events
    for (std::size_t i = 0; i < p.events.size(); ++i) {
      const Event& e = p.events[i];
      if (dropped[i]) {
        pending[e.tid]++;
        drops_of[e.tid].push_back(e.time);
        continue;
      }
      if (pending[e.tid]) stream.push_back(thread_lost(e.tid, e.time, pending[e.tid]));
      pending[e.tid] = 0;
      stream.push_back(e);
    }
    for (auto [tid, n] : pending)
      if (n) stream.push_back(thread_lost(tid, p.events.back().time + 1, n));

    std::set<TrueCall> expected;
    for (const TrueCall& c : kept_calls(p, dropped)) {
      const auto& d = drops_of[c.tid];
      if (std::none_of(d.begin(), d.end(), [&](uint64_t at) { return at > c.entry && at < c.ret; })) expected.insert(c);
    }
    Paired r = pair(stream);
    EXPECT_EQ(reported(r), expected) << "round " << round;
    EXPECT_EQ(r.sink.calls.size(), expected.size());
    EXPECT_TRUE(r.counts.balanced());
    uint64_t lost = 0;
    for (bool d : dropped) lost += d;
    EXPECT_EQ(r.counts.lost_samples, lost);
    cut_total += r.counts.cut_by_loss();
  }
  EXPECT_GT(cut_total, 1000u);
}

// The perf engine: one ring per CPU. A ring that fills drops every event of its CPU for
// a while; its LOST record comes before its next event written, and the gap runs from
// that ring's event before the drops to that next event. Any thread may be in it.
TEST(LossPairing, RandomRingGapsCutExactlyTheCallsTheyOverlap) {
  std::mt19937_64 rng(77);
  for (int round = 0; round < 10; ++round) {
    const Program p = random_program(rng);
    const std::size_t n = p.events.size();
    std::vector<bool> dropped(n);
    // Per ring: a few windows of consecutive events of that ring, each followed by an
    // event of the ring that is written (the kernel's LOST record rides on it).
    std::vector<std::pair<uint64_t, uint64_t>> gaps;   // (time, until)
    std::vector<std::pair<std::size_t, Event>> lost_after;  // insert after event index (SIZE_MAX: first)
    for (uint32_t ring = 0; ring < 3; ++ring) {
      std::vector<std::size_t> idx;
      for (std::size_t i = 0; i < n; ++i)
        if (p.cpu[i] == ring) idx.push_back(i);
      for (int w = 0; w < 6 && idx.size() > 20; ++w) {
        const std::size_t from = rng() % (idx.size() - 10), len = 1 + rng() % 8;
        bool clear = true;  // windows of one ring do not touch
        for (std::size_t k = from == 0 ? 0 : from - 1; k <= from + len; ++k) clear &= !dropped[idx[k]];
        if (!clear) continue;
        for (std::size_t k = from; k < from + len; ++k) dropped[idx[k]] = true;
        const uint64_t a = from == 0 ? 0 : p.events[idx[from - 1]].time;
        const uint64_t b = p.events[idx[from + len]].time;
        gaps.emplace_back(a, b);
        lost_after.emplace_back(from == 0 ? SIZE_MAX : idx[from - 1], gap_lost(a, b, len));
      }
    }
    std::vector<Event> stream;
    for (const auto& [at, e] : lost_after)
      if (at == SIZE_MAX) stream.push_back(e);
    for (std::size_t i = 0; i < n; ++i) {
      if (!dropped[i]) stream.push_back(p.events[i]);
      for (const auto& [at, e] : lost_after)
        if (at == i) stream.push_back(e);
    }
    std::set<TrueCall> expected;
    for (const TrueCall& c : kept_calls(p, dropped)) {
      if (std::all_of(gaps.begin(), gaps.end(), [&](auto g) { return c.ret <= g.first || c.entry > g.second; }))
        expected.insert(c);
    }
    Paired r = pair(stream);
    EXPECT_EQ(reported(r), expected) << "round " << round;
    EXPECT_TRUE(r.counts.balanced());
    EXPECT_GT(r.counts.cut_by_loss(), 0u);
    EXPECT_GT(expected.size(), 100u);
    // Nothing longer than the program: no latency is invented.
    EXPECT_LE(longest(r), p.events.back().time);
  }
}

}  // namespace
}  // namespace uprof
