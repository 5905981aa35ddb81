// Calls by caller and by stack, with on/off-CPU time (analyse/call_stacks.h, record -g
// and --off-cpu), from data files whose frames name the real why_slow fixture.
#include "uprof/analyse/call_stacks.h"

#include <gtest/gtest.h>

#include <map>

#include "analyse/why_slow_builders.h"
#include "uprof/analyse/report_model.h"

namespace uprof {
namespace {

constexpr std::size_t kSleep = static_cast<std::size_t>(OffCpuKind::Sleep);
constexpr std::size_t kRunnable = static_cast<std::size_t>(OffCpuKind::Runnable);

std::map<std::string, const CallerStats*> by_caller(const CallStacks& s) {
  std::map<std::string, const CallerStats*> out;
  for (const CallerStats& c : s.callers) out[c.caller] = &c;
  return out;
}

TEST(CallStacks, EachCallerItsCallsLatencyAndSplit) {
  const auto w = test::WhySlow::load();
  auto m = build_report(test::why_slow_recording(w, "callers.data"), {});
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->stacks);
  EXPECT_TRUE(m->offcpu);
  const auto callers = by_caller(*m->stacks);
  ASSERT_EQ(callers.size(), 3u);
  const CallerStats& spin = *callers.at("spinner");
  const CallerStats& sleep = *callers.at("sleeper");
  EXPECT_EQ(spin.w.calls, 30u);
  EXPECT_EQ(spin.w.latency_ns, 30'000'000u);
  EXPECT_EQ(spin.latency.percentile(50), 1'000'000u);
  EXPECT_EQ(spin.w.cpu.on_cpu_ns, 30u * 990'000);
  EXPECT_EQ(spin.w.cpu.runnable_ns(), 30u * 10'000);
  EXPECT_GE(spin.w.cpu.on_cpu_fraction(), 0.8);
  EXPECT_EQ(sleep.w.calls, 20u);
  EXPECT_EQ(sleep.w.cpu.off[kSleep], 20u * 1'900'000);
  EXPECT_EQ(sleep.w.cpu.blocked_ns(), 20u * 1'900'000);
  EXPECT_LE(sleep.w.cpu.on_cpu_fraction(), 0.2);
  EXPECT_EQ(callers.at(kNoStack)->w.calls, 1u);
  EXPECT_EQ(m->stacks->without_stack, 1u);
  // The most latency first: sleeper (40 ms), spinner (30 ms), [no stack].
  EXPECT_EQ(m->stacks->callers[0].caller, "sleeper");
  // Stacks by name, outermost first, whose sums are the function's.
  uint64_t calls = 0, latency = 0;
  for (const NamedStack& s : m->stacks->stacks) {
    calls += s.w.calls;
    latency += s.w.latency_ns;
  }
  ASSERT_EQ(m->totals.size(), 1u);
  EXPECT_EQ(calls, m->totals[0].calls);
  EXPECT_EQ(latency, m->totals[0].latency.total());
  EXPECT_EQ(m->stacks->stacks[0].frames, (std::vector<std::string>{"main", "sleeper"}));
  // The row's own split: every call's on + off is its duration.
  const CpuSplit& cpu = m->totals[0].cpu;
  EXPECT_EQ(cpu.calls, 51u);
  EXPECT_EQ(cpu.on_cpu_ns + cpu.off_cpu_ns(), m->totals[0].latency.total());
}

TEST(CallStacks, ByCallerGivesARowPerCaller) {
  const auto w = test::WhySlow::load();
  const std::string path = test::why_slow_recording(w, "by_caller.data");
  for (const char* how : {"--by-caller", "--by caller"}) {
    AggregateOptions o;
    if (std::string(how) == "--by-caller") o.by = GroupBy::Caller;
    else o.by_value = "caller";
    auto m = build_report(path, o);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(m->options.by, GroupBy::Caller) << how;
    std::map<std::string, const GroupStats*> rows;
    for (const GroupStats& g : m->groups) rows[g.has_caller ? g.caller : kNoStack] = &g;
    ASSERT_EQ(rows.size(), 3u) << how;
    EXPECT_EQ(rows.at("spinner")->calls, 30u);
    EXPECT_EQ(rows.at("sleeper")->calls, 20u);
    EXPECT_EQ(rows.at(kNoStack)->calls, 1u);
    EXPECT_GE(rows.at("spinner")->cpu.on_cpu_fraction(), 0.8);
    EXPECT_LE(rows.at("sleeper")->cpu.on_cpu_fraction(), 0.2);
    EXPECT_EQ(rows.at("sleeper")->latency.percentile(99), 2'000'000u);
  }
}

// Two call sites in one caller are one caller: sites merge by name.
TEST(CallStacks, CallSitesOfOneCallerMerge) {
  const auto w = test::WhySlow::load();
  std::vector<Event> ev{w.object_event()};
  StackFrame other_site = w.in_spinner;
  other_site.offset -= 1;  // another return address, still inside spinner
  test::work_call(ev, 7, 100, 1000, {w.in_spinner, w.main_to_spinner});
  test::work_call(ev, 7, 2000, 3000, {other_site, w.main_to_spinner});
  AggregateOptions o;
  o.by = GroupBy::Caller;
  auto m = build_report(test::write_data_file("sites.data", RecordingMeta{}, test::work_probes(w.path, false), ev), o);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->groups.size(), 1u);
  EXPECT_EQ(m->groups[0].caller, "spinner");
  EXPECT_EQ(m->groups[0].calls, 2u);
  ASSERT_EQ(m->stacks->callers.size(), 1u);
  EXPECT_EQ(m->stacks->callers[0].w.latency_ns, 4000u);
  EXPECT_EQ(m->stacks->stacks.size(), 1u);
  EXPECT_FALSE(m->offcpu);
  EXPECT_FALSE(m->groups[0].cpu.recorded());
}

TEST(CallStacks, ByCallerWithoutStacksIsRefused) {
  std::vector<ProbeInfo> probes{test::probe(0, ProbeKind::Entry, "work", 0x1000),
                                test::probe(1, ProbeKind::Return, "work", 0x1000)};
  const std::string path = test::write_data_file("nostacks.data", RecordingMeta{}, probes,
                                                 {test::sample(0, 7, 100), test::sample(1, 7, 200)});
  AggregateOptions o;
  o.by = GroupBy::Caller;
  auto m = build_report(path, o);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message, "report: " + path + " holds no call stacks to tell callers apart (record it with -g)");
  // A captured value named "caller" stays that value.
  std::vector<ProbeInfo> valued{test::probe(0, ProbeKind::Entry, "work", 0x1000, {"caller"}),
                                test::probe(1, ProbeKind::Return, "work", 0x1000)};
  AggregateOptions v;
  v.by_value = "caller";
  auto mv = build_report(test::write_data_file("valued.data", RecordingMeta{}, valued,
                                               {test::sample(0, 7, 100, {42}), test::sample(1, 7, 200)}),
                         v);
  ASSERT_TRUE(mv) << mv.error().message;
  EXPECT_EQ(mv->options.by, GroupBy::Function);
  ASSERT_EQ(mv->groups.size(), 1u);
  EXPECT_TRUE(mv->groups[0].has_by_value);
  EXPECT_EQ(mv->groups[0].by_value, 42u);
}

// More off-CPU time than the call lasted (the scheduler's clock against the probes'):
// scaled to the duration, never a negative on-CPU time.
TEST(CpuSplit, OffCpuBeyondTheDurationIsScaledToIt) {
  CpuSplit s;
  OffCpuTimes off{};
  off[kSleep] = 900;
  off[kRunnable] = 300;
  s.add(1000, off);
  EXPECT_EQ(s.on_cpu_ns, 0u);
  EXPECT_EQ(s.off_cpu_ns(), 1000u);
  EXPECT_EQ(s.off[kSleep], 750u);
  EXPECT_EQ(s.off[kRunnable], 250u);
  s.add(1000, OffCpuTimes{});
  EXPECT_EQ(s.on_cpu_ns, 1000u);
  EXPECT_DOUBLE_EQ(s.on_cpu_fraction(), 0.5);
}

TEST(CallStacks, PastTheLimitStacksAreCountedNotKept) {
  const auto w = test::WhySlow::load();
  StackCollector c(1);
  FrameSymbolizer names;
  names.add_object(1, w.path, w.build_id);
  std::vector<StackFrame> a{w.in_spinner, w.main_to_spinner}, b{w.in_sleeper, w.main_to_sleeper};
  Call call;
  call.stack = a;
  c.add(0, call, 10);
  call.stack = b;
  c.add(0, call, 20);
  c.add(0, call, 30);
  const CallStacks s = c.finish(names);
  EXPECT_EQ(s.over_limit, 2u);
  ASSERT_EQ(s.stacks.size(), 2u);
  EXPECT_EQ(s.stacks[0].frames, std::vector<std::string>{kMoreStacks});
  EXPECT_EQ(s.stacks[0].w.latency_ns, 50u);
  // The callers are still whole: a histogram per call site.
  EXPECT_EQ(by_caller(s).at("sleeper")->w.calls, 2u);
}

}  // namespace
}  // namespace uprof
