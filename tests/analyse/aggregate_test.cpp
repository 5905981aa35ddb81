#include "uprof/analyse/aggregate.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "analyse/event_builders.h"
#include "uprof/analyse/event_loop.h"

namespace uprof {
namespace {

using test::comm_event;
using test::exit_event;
using test::fork_event;
using test::probe;
using test::sample;

// f(int len) -> long (#0, #1), g (#2, #3), main entry only (#4).
constexpr uint32_t kFe = 0, kFr = 1, kGe = 2, kGr = 3, kMain = 4;
constexpr uint32_t kF = 0, kG = 1, kMainFn = 2;
constexpr uint64_t kStart = 1'000'000;  // the recording's start on the event clock

ProbeFunctions functions() {
  std::vector<ProbeInfo> probes{
      probe(kFe, ProbeKind::Entry, "f", 0x1000, {"len"}),
      probe(kFr, ProbeKind::Return, "f", 0x1000, {"$retval"}),
      probe(kGe, ProbeKind::Entry, "g", 0x2000),
      probe(kGr, ProbeKind::Return, "g", 0x2000),
      probe(kMain, ProbeKind::Entry, "main", 0x3000),
  };
  probes[0].values[0].size = 4;  // int len: the upper half of %rdi is junk
  probes[1].values[0].is_signed = false;
  return group_probes(probes);
}

// Through the read-side loop, as build_report does: it pairs and filters.
Aggregator aggregate(const std::vector<Event>& events, AggregateOptions options = {}) {
  const ProbeFunctions fns = functions();
  options.start_time = kStart;
  Aggregator agg(fns, options);
  EventLoop loop(fns, options.filter, options.start_time, agg);
  for (const Event& e : events) loop.add(e);
  loop.finish();
  return agg;
}

uint64_t t(uint64_t ns) { return kStart + ns; }

TEST(Aggregate, PerFunctionCallsLatencyAndUnmatched) {
  Aggregator agg = aggregate({
      sample(kMain, 1, t(0)),
      sample(kFe, 1, t(10), {5}), sample(kFr, 1, t(110), {0}),
      sample(kFe, 1, t(200), {6}), sample(kFr, 1, t(500), {0}),
      sample(kGe, 1, t(600)), sample(kFe, 1, t(610), {7}), sample(kGr, 1, t(700)),  // f unwound
      sample(kFe, 1, t(800), {8}), exit_event(1, t(900)),                            // f exited
      sample(kGr, 2, t(950)),                                                        // no entry
  });
  const auto& groups = agg.groups();
  ASSERT_EQ(groups.size(), 3u);  // every probed function, even main that only counts
  const GroupStats& f = groups[kF];
  EXPECT_EQ(f.calls, 2u);
  EXPECT_EQ(f.latency.count(), 2u);
  EXPECT_EQ(f.latency.min(), 100u);
  EXPECT_EQ(f.latency.max(), 300u);
  EXPECT_EQ(f.latency.mean(), 200.0);
  EXPECT_EQ(f.unmatched[static_cast<int>(UnmatchedReason::Unwound)], 1u);
  EXPECT_EQ(f.unmatched[static_cast<int>(UnmatchedReason::ThreadExited)], 1u);
  EXPECT_EQ(f.unmatched_total(), 2u);
  ASSERT_EQ(f.values.size(), 2u);
  EXPECT_EQ(f.values[0].count, 4u);  // the len of every entry, matched or not
  EXPECT_EQ(f.values[0].min, 5u);
  EXPECT_EQ(f.values[0].max, 8u);
  EXPECT_EQ(f.values[1].count, 2u);  // $retval of the two returns
  const GroupStats& g = groups[kG];
  EXPECT_EQ(g.calls, 1u);
  EXPECT_EQ(g.latency.max(), 100u);
  EXPECT_EQ(g.unmatched[static_cast<int>(UnmatchedReason::ReturnWithoutEntry)], 1u);
  EXPECT_EQ(groups[kMainFn].calls, 1u);
  EXPECT_EQ(groups[kMainFn].latency.count(), 0u);
}

// A USDT pair's done probe with no start before it (python 3.11's function__return for
// every call its function__entry never saw) is a call without a latency, not unmatched.
TEST(Aggregate, AUsdtDoneWithoutItsStartIsAnUntimedCall) {
  std::vector<ProbeInfo> probes{test::usdt_probe(0, "app:req_in", 0x100), test::usdt_probe(1, "app:req_out", 0x200)};
  probes[0].role = RowRole::UsdtStart;
  probes[1].role = RowRole::UsdtDone;
  probes[0].row = probes[1].row = "app:req";
  const ProbeFunctions fns = group_probes(probes);
  ASSERT_EQ(fns.functions.size(), 1u);
  ASSERT_TRUE(fns.functions[0].usdt && fns.functions[0].paired());
  AggregateOptions options;
  options.start_time = kStart;
  Aggregator agg(fns, options);
  EventLoop loop(fns, options.filter, options.start_time, agg);
  for (const Event& e : {sample(1, 1, t(5)), sample(0, 1, t(10)), sample(1, 1, t(50)), sample(1, 1, t(60))})
    loop.add(e);
  loop.finish();
  const GroupStats& g = agg.groups().at(0);
  EXPECT_EQ(g.calls, 3u);
  EXPECT_EQ(g.untimed, 2u);
  EXPECT_EQ(g.latency.count(), 1u);
  EXPECT_EQ(g.latency.max(), 40u);
  EXPECT_EQ(g.unmatched_total(), 0u);
}

TEST(Aggregate, ValuesAreNormalisedToTheirType) {
  // len = -2 in %edi with junk above; $retval unsigned 8 bytes.
  Aggregator agg = aggregate({
      sample(kFe, 1, t(0), {0x00007f3afffffffeULL}), sample(kFr, 1, t(5), {UINT64_MAX}),
      sample(kFe, 1, t(10), {3}), sample(kFr, 1, t(15), {1}),
  });
  const ValueStats& len = agg.groups()[kF].values[0];
  EXPECT_EQ(static_cast<int64_t>(len.min), -2);
  EXPECT_EQ(static_cast<int64_t>(len.max), 3);
  const ValueStats& ret = agg.groups()[kF].values[1];
  EXPECT_EQ(ret.min, 1u);
  EXPECT_EQ(ret.max, UINT64_MAX);  // unsigned: not -1 below 1
}

TEST(Aggregate, NormalizeValueTable) {
  auto spec = [](uint8_t size, bool is_signed) { return ValueSpec{.name = "v", .size = size, .is_signed = is_signed}; };
  EXPECT_EQ(normalize_value(0xffffffffffffff80ULL, spec(1, true)), 0xffffffffffffff80ULL);  // -128
  EXPECT_EQ(normalize_value(0x1234'0000'0000'0080ULL, spec(1, false)), 0x80u);
  EXPECT_EQ(normalize_value(0xabcd'8000ULL, spec(2, true)), 0xffffffffffff8000ULL);
  EXPECT_EQ(normalize_value(0xabcd'7fffULL, spec(2, true)), 0x7fffu);
  EXPECT_EQ(normalize_value(0x1'ffff'ffffULL, spec(4, false)), 0xffffffffu);
  EXPECT_EQ(normalize_value(0xdeadbeefcafeULL, spec(8, true)), 0xdeadbeefcafeULL);
}

TEST(Aggregate, TopValuesOfASkewedArgument) {
  std::vector<Event> events;
  std::mt19937_64 rng(1);
  uint64_t now = t(0);
  std::map<uint64_t, uint64_t> truth;
  for (int i = 0; i < 50'000; ++i) {
    // len 4096 half the time, 512 a quarter, else one of 5000 others.
    const uint64_t r = rng() % 4;
    const uint64_t len = r < 2 ? 4096 : r == 2 ? 512 : 10'000 + rng() % 5000;
    ++truth[len];
    events.push_back(sample(kFe, 1, now += 10, {len}));
    events.push_back(sample(kFr, 1, now += 10, {0}));
  }
  Aggregator agg = aggregate(events, {.top_capacity = 16});
  const auto top = agg.groups()[kF].values[0].top.top(2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].value, 4096u);
  EXPECT_LE(truth[4096], top[0].count);
  EXPECT_GE(truth[4096], top[0].count - top[0].error);
  EXPECT_EQ(top[1].value, 512u);
  EXPECT_LE(top[0].error, 50'000u / 16);
}

// The pid, tid, comm and time filters are the loop's (event_loop_test.cpp); --function
// also decides which groups the report has.
TEST(Aggregate, FunctionFilterSelectsTheGroups) {
  const std::vector<Event> events{
      sample(kFe, 1, t(10), {1}), sample(kFr, 1, t(20), {0}), sample(kGe, 1, t(90)), sample(kGr, 1, t(150)),
      sample(kGe, 1, t(200)), sample(kGr, 1, t(210)),
  };
  const Aggregator only_g = aggregate(events, {.filter = {.functions = {"g"}}});
  ASSERT_EQ(only_g.groups().size(), 1u);
  EXPECT_EQ(only_g.groups()[0].function, kG);
  EXPECT_EQ(only_g.groups()[0].calls, 2u);
  EXPECT_FALSE(only_g.selected(kF));
  EXPECT_EQ(only_g.function_totals().size(), 1u);
}

TEST(Aggregate, ByThreadGroupsAndTheirTotals) {
  std::vector<Event> events{comm_event(7, 7, "main"), comm_event(7, 8, "worker")};
  uint64_t now = t(0);
  for (int i = 0; i < 100; ++i) {
    const uint32_t tid = i % 3 ? 8 : 7;
    events.push_back(sample(kFe, tid, now, {static_cast<uint64_t>(i % 5)}, 7));
    events.push_back(sample(kFr, tid, now += 100 + i, {0}, 7));
  }
  events.push_back(sample(kFe, 8, now, {9}, 7));  // still open at the end
  const Aggregator flat = aggregate(events);
  const Aggregator threads = aggregate(events, {.by = GroupBy::Thread});
  ASSERT_EQ(threads.groups().size(), 2u);
  EXPECT_EQ(threads.groups()[0].tid, 7u);
  EXPECT_EQ(threads.groups()[0].pid, 7u);
  EXPECT_EQ(threads.groups()[0].comm, "main");
  EXPECT_EQ(threads.groups()[0].calls, 34u);
  EXPECT_EQ(threads.groups()[1].comm, "worker");
  EXPECT_EQ(threads.groups()[1].calls, 66u);
  EXPECT_EQ(threads.groups()[1].unmatched[static_cast<int>(UnmatchedReason::RecordingStopped)], 1u);

  const auto totals = threads.function_totals();
  ASSERT_EQ(totals.size(), 3u);
  const GroupStats& whole = flat.groups()[kF];
  EXPECT_EQ(totals[kF].calls, whole.calls);
  EXPECT_EQ(totals[kF].unmatched, whole.unmatched);
  EXPECT_EQ(totals[kF].latency.total(), whole.latency.total());
  for (double p : {50.0, 90.0, 99.0}) EXPECT_EQ(totals[kF].latency.percentile(p), whole.latency.percentile(p));
  EXPECT_EQ(totals[kF].values[0].top.top(5).size(), 5u);
  EXPECT_EQ(totals[kF].values[0].count, whole.values[0].count);
  EXPECT_EQ(totals[kF].values[0].max, 9u);
  EXPECT_EQ(totals[kF].tid, 0u);

  const Aggregator procs = aggregate(events, {.by = GroupBy::Process});
  ASSERT_EQ(procs.groups().size(), 1u);
  EXPECT_EQ(procs.groups()[0].pid, 7u);
  EXPECT_EQ(procs.groups()[0].calls, 100u);
}

TEST(Aggregate, ByValueGroupsLatencyPerArgument) {
  // f(len): len 1 takes 10ns, len 2 takes 1000ns. One unwound f has len 3.
  std::vector<Event> events;
  uint64_t now = t(0);
  for (int i = 0; i < 10; ++i) {
    const uint64_t len = 1 + i % 2;
    events.push_back(sample(kFe, 1, now, {len}));
    events.push_back(sample(kFr, 1, now += len == 1 ? 10 : 1000, {len * 100}));
  }
  events.push_back(sample(kGe, 1, now));
  events.push_back(sample(kFe, 1, now + 1, {3}));
  events.push_back(sample(kGr, 1, now + 5));
  const Aggregator by_len = aggregate(events, {.by_value = "len"});
  std::map<uint64_t, const GroupStats*> of;
  for (const GroupStats& g : by_len.groups()) {
    if (g.function == kF) of[g.by_value] = &g;
  }
  ASSERT_EQ(of.size(), 3u);
  EXPECT_EQ(of[1]->calls, 5u);
  EXPECT_EQ(of[1]->latency.max(), 10u);
  EXPECT_EQ(of[2]->latency.min(), 1000u);
  EXPECT_EQ(of[3]->unmatched[static_cast<int>(UnmatchedReason::Unwound)], 1u);
  EXPECT_TRUE(of[1]->has_by_value);
  // g captures no len: one group without a value.
  for (const GroupStats& g : by_len.groups()) {
    if (g.function == kG) {
      EXPECT_FALSE(g.has_by_value);
    }
  }

  const Aggregator by_ret = aggregate(events, {.by_value = "$retval"});
  std::map<uint64_t, uint64_t> calls_by_ret;
  uint64_t without = 0;
  for (const GroupStats& g : by_ret.groups()) {
    if (g.function != kF) continue;
    if (g.has_by_value) {
      calls_by_ret[g.by_value] += g.calls;
    } else {
      without += g.unmatched_total();  // the unwound call has no return value
    }
  }
  EXPECT_EQ(calls_by_ret, (std::map<uint64_t, uint64_t>{{100, 5}, {200, 5}}));
  EXPECT_EQ(without, 1u);

  // Past max_value_groups, new values share one "other" group.
  const Aggregator capped = aggregate(events, {.by_value = "len", .max_value_groups = 1});
  uint64_t other_calls = 0;
  for (const GroupStats& g : capped.groups()) {
    if (g.other_values) other_calls += g.calls + g.unmatched_total();
  }
  EXPECT_EQ(other_calls, 6u);  // len 2 (5 calls) and the unwound len 3
}

TEST(Aggregate, LinearHistogramPerGroup) {
  Aggregator agg = aggregate({sample(kFe, 1, t(0), {1}), sample(kFr, 1, t(50), {0}), sample(kFe, 1, t(100), {1}),
                              sample(kFr, 1, t(250), {0}), sample(kFe, 1, t(300), {1}), sample(kFr, 1, t(900), {0})},
                             {.linear = LinearSpec{.min = 100, .max = 500, .step = 100}});
  const auto& linear = agg.groups()[kF].linear;
  ASSERT_TRUE(linear.has_value());
  EXPECT_EQ(linear->underflow(), 1u);
  EXPECT_EQ(linear->overflow(), 1u);
  EXPECT_EQ(linear->buckets()[0].count, 1u);  // 150 in [100, 200)
}

TEST(Aggregate, EveryEntryIsAccountedPerFunction) {
  // Random nesting with unwinds, losses and exits: per function, calls + unmatched
  // entries equal the entries in the stream, and returns match too.
  std::mt19937_64 rng(77);
  std::vector<Event> events;
  std::map<uint32_t, uint64_t> entries, returns;
  std::vector<std::vector<uint32_t>> stacks(3);
  uint64_t now = t(0);
  for (int i = 0; i < 20'000; ++i) {
    const uint32_t ti = rng() % 3, tid = 10 + ti;
    auto& st = stacks[ti];
    now += 1 + rng() % 100;
    const uint64_t a = rng() % 100;
    if (a < 50 || st.empty()) {
      const uint32_t fn = rng() % 2;
      st.push_back(fn);
      ++entries[fn];
      events.push_back(sample(fn == kF ? kFe : kGe, tid, now, {a}));
    } else if (a < 95) {
      const uint32_t fn = st.back();
      st.pop_back();
      if (rng() % 50 == 0) continue;  // a return that never shows up
      ++returns[fn];
      events.push_back(sample(fn == kF ? kFr : kGr, tid, now, {0}));
    } else if (a < 97) {
      events.push_back(test::lost(now, 1 + rng() % 5));
    } else if (a < 98) {
      st.clear();
      events.push_back(exit_event(tid, now));
    } else {
      ++returns[kF];
      events.push_back(sample(kFr, tid, now, {0}));  // a stray return
    }
  }
  const Aggregator agg = aggregate(events, {.by = GroupBy::Thread});
  // function_totals() returns a new vector: keep it, or `total` dangles (ASan).
  const std::vector<GroupStats> totals = agg.function_totals();
  for (uint32_t fn : {kF, kG}) {
    const GroupStats& total = totals[fn];
    const uint64_t without_entry = total.unmatched[static_cast<int>(UnmatchedReason::ReturnWithoutEntry)] +
                                   total.unmatched[static_cast<int>(UnmatchedReason::ReturnAfterLoss)];
    EXPECT_EQ(total.calls + total.unmatched_total() - without_entry, entries[fn]) << fn;
    EXPECT_EQ(total.calls + without_entry, returns[fn]) << fn;
    EXPECT_GT(total.unmatched[static_cast<int>(UnmatchedReason::Lost)], 0u);
    EXPECT_GT(total.unmatched[static_cast<int>(UnmatchedReason::ReturnAfterLoss)], 0u);
    EXPECT_EQ(total.cut_by_loss(), total.unmatched[static_cast<int>(UnmatchedReason::Lost)] +
                                       total.unmatched[static_cast<int>(UnmatchedReason::ReturnAfterLoss)]);
    EXPECT_GT(total.unmatched[static_cast<int>(UnmatchedReason::Unwound)], 0u);
  }
}

// A forked child calls f as "sh", execs and calls it as "ls": --by-thread gives the
// calls after the exec a group of their own, named "ls", not "sh"'s; and a tid that
// another process reuses (its fork unseen) is a new group under its own pid.
TEST(Aggregate, ByThreadStartsANewGroupWhenAThreadTakesANewName) {
  std::vector<Event> events{comm_event(7, 7, "sh"), fork_event(9, 9, 7, 7, t(0))};
  uint64_t now = t(10);
  auto call = [&](uint32_t pid, uint32_t tid) {
    events.push_back(sample(kFe, tid, now, {1}, pid));
    events.push_back(sample(kFr, tid, now += 100, {0}, pid));
    now += 10;
  };
  call(9, 9);
  call(9, 9);
  events.push_back(comm_event(9, 9, "ls", now));  // exec
  for (int i = 0; i < 3; ++i) call(9, 9);
  events.push_back(comm_event(12, 9, "cat", now));  // tid 9 again, in another process
  call(12, 9);
  const Aggregator agg = aggregate(events, {.by = GroupBy::Thread});
  ASSERT_EQ(agg.groups().size(), 3u);
  EXPECT_EQ(agg.groups()[0].comm, "sh");
  EXPECT_EQ(agg.groups()[0].calls, 2u);
  EXPECT_EQ(agg.groups()[1].comm, "ls");
  EXPECT_EQ(agg.groups()[1].calls, 3u);
  EXPECT_EQ(agg.groups()[1].tid, 9u);
  EXPECT_EQ(agg.groups()[2].comm, "cat");
  EXPECT_EQ(agg.groups()[2].pid, 12u);
  EXPECT_EQ(agg.groups()[2].calls, 1u);
  EXPECT_EQ(agg.function_totals()[kF].calls, 6u);
}

TEST(Aggregate, OptionErrorsNameTheProblem) {
  const ProbeFunctions fns = functions();
  EXPECT_TRUE(check_aggregate_options(fns, {}).ok());
  EXPECT_TRUE(check_aggregate_options(fns, {.by_value = "len"}).ok());
  auto e = check_aggregate_options(fns, {.filter = {.functions = {"h*"}}});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "report: no probed function matches 'h*'");
  e = check_aggregate_options(fns, {.by_value = "size"});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message,
            "report: --by size: no selected function captures a value of that name (captured: len, $retval)");
  e = check_aggregate_options(fns, {.by_value = "len", .filter = {.functions = {"g"}}});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message,
            "report: --by len: no selected function captures a value of that name (none captures any value)");
  e = check_aggregate_options(fns, {.filter = {.since = 5, .until = 5}});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "report: --since 5ns is not before --until 5ns");
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

// gcc's clones of one source function (`scale`, `scale.constprop.0` and `scale.isra.0`,
// all named "scale" by the resolver) are one row, each adding the values it has; two
// functions that share a symbol name but are not clones (two `static helper`s) are two.
TEST(Aggregate, ClonesOfOneFunctionShareARow) {
  std::vector<ProbeInfo> probes{
      probe(0, ProbeKind::Entry, "scale", 0x1000, {"x", "k"}), probe(1, ProbeKind::Return, "scale", 0x1000, {"$retval"}),
      probe(2, ProbeKind::Entry, "scale", 0x2000, {"x", "k"}), probe(3, ProbeKind::Return, "scale", 0x2000, {"$retval"}),
      probe(4, ProbeKind::Entry, "helper", 0x3000), probe(5, ProbeKind::Entry, "helper", 0x4000),
      probe(6, ProbeKind::Entry, "scale", 0x5000, {"x"}), probe(7, ProbeKind::Return, "scale", 0x5000, {"$retval"}),
  };
  const char* symbols[] = {"scale", "scale", "scale.constprop.0", "scale.constprop.0", "helper", "helper",
                           "scale.isra.0", "scale.isra.0"};
  for (std::size_t i = 0; i < probes.size(); i++) probes[i].symbol = symbols[i];
  probes[2].values[1].source = ValueSource::Constant;  // k == 3 in the clone: DWARF's constant
  const ProbeFunctions fns = group_probes(probes);
  ASSERT_EQ(fns.functions.size(), 5u);
  EXPECT_EQ(fns.functions[1].row, 0u);            // scale.constprop.0 joins scale
  EXPECT_EQ(fns.functions[3].row, kNoFunction);   // the second helper is another function
  EXPECT_EQ(fns.functions[4].row, 0u);            // scale.isra.0: gcc dropped k

  for (bool by_thread : {false, true}) {
    AggregateOptions options;
    options.start_time = kStart;
    if (by_thread) options.by = GroupBy::Thread;
    Aggregator agg(fns, options);
    EventLoop loop(fns, options.filter, options.start_time, agg);
    uint64_t now = 0;
    auto call = [&](uint32_t entry, uint64_t x, uint64_t k) {
      loop.add(sample(entry, 1, t(now += 10), {x, k}));
      loop.add(sample(entry + 1, 1, t(now += 10), {x * k}));
    };
    call(0, 1, 5), call(2, 2, 3), call(2, 3, 3);
    loop.add(sample(6, 1, t(now += 10), {4}));
    loop.add(sample(7, 1, t(now += 10), {40}));
    loop.add(sample(4, 1, t(now += 10)));
    loop.add(sample(5, 1, t(now += 10)));
    loop.finish();
    const auto totals = agg.function_totals();
    std::map<std::pair<std::string, uint32_t>, uint64_t> calls;
    for (const GroupStats& g : totals) calls[{fns.functions[g.function].name, g.function}] = g.calls;
    EXPECT_EQ(calls, (std::map<std::pair<std::string, uint32_t>, uint64_t>{
                         {{"scale", 0}, 4}, {{"helper", 2}, 1}, {{"helper", 3}, 1}}))
        << "by thread: " << by_thread;
    const GroupStats& scale = totals.front();
    ASSERT_EQ(scale.values.size(), 3u);
    EXPECT_EQ(scale.values[0].count, 4u);  // x of every call, whichever copy ran
    EXPECT_EQ(scale.values[1].count, 3u);  // k: gcc dropped it from scale.isra.0
    EXPECT_EQ(scale.values[1].max, 5u);
    EXPECT_EQ(scale.values[2].count, 4u);  // $retval
    EXPECT_EQ(scale.values[2].max, 40u);
  }
}

}  // namespace
}  // namespace uprof
