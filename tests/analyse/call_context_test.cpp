// What a call carries besides its time (format 1.9): the callers its entry's stack (or,
// with -g --stack-min, its return's) names, and its share of its thread's off-CPU time.
#include <gtest/gtest.h>

#include <vector>

#include "analyse/event_builders.h"
#include "uprof/analyse/pairing.h"

namespace uprof {
namespace {

using test::probe;
using test::sample;

struct Seen {
  std::vector<StackFrame> stack;
  bool has_offcpu = false;
  OffCpuTimes offcpu{};
  uint64_t duration = 0;
};

class ContextSink : public PairingSink {
 public:
  void on_call(const Call& c) override {
    calls.push_back({{c.stack.begin(), c.stack.end()}, c.has_offcpu, c.offcpu, c.duration});
  }
  void on_unmatched(const Unmatched&) override {}
  void on_hit(const Hit&) override {}
  void on_object(uint32_t object, std::string_view path, std::string_view) override {
    objects.emplace_back(object, std::string(path));
  }
  std::vector<Seen> calls;
  std::vector<std::pair<uint32_t, std::string>> objects;
};

std::vector<ProbeInfo> table(bool entry_stack, bool offcpu) {
  std::vector<ProbeInfo> t = {probe(0, ProbeKind::Entry, "work", 0x1000), probe(1, ProbeKind::Return, "work", 0x1000)};
  t[0].stack = entry_stack;
  t[1].stack = !entry_stack;
  t[0].offcpu = t[1].offcpu = offcpu;
  return t;
}

std::vector<Seen> pair(const std::vector<ProbeInfo>& probes, const std::vector<Event>& events,
                       ContextSink* out = nullptr) {
  const ProbeFunctions functions = group_probes(probes);
  Pairer pairer(functions);
  ContextSink sink;
  for (const Event& e : events) pairer.add(e, sink);
  pairer.finish(sink);
  if (out) *out = sink;
  return sink.calls;
}

TEST(CallContext, TheEntrysStackIsTheCallsAndNestedCallsKeepTheirOwn) {
  Event outer = sample(0, 7, 100);
  outer.stack = {{1, 0x500}, {1, 0x400}};
  Event inner = sample(0, 7, 110);
  inner.stack = {{1, 0x1010}, {1, 0x500}, {1, 0x400}};  // work calls itself
  Event object;
  object.kind = EventKind::Object;
  object.object = 1;
  object.path = "/bin/app";
  ContextSink sink;
  auto calls = pair(table(true, false), {object, outer, inner, sample(1, 7, 120), sample(1, 7, 200)}, &sink);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].stack, inner.stack);  // the inner call returns first
  EXPECT_EQ(calls[1].stack, outer.stack);
  EXPECT_EQ(calls[1].duration, 100u);
  EXPECT_FALSE(calls[0].has_offcpu);
  ASSERT_EQ(sink.objects.size(), 1u);
  EXPECT_EQ(sink.objects[0], (std::pair<uint32_t, std::string>{1, "/bin/app"}));
}

TEST(CallContext, WithOnlyTheReturnCarryingAStackTheCallTakesThatOne) {
  Event ret = sample(1, 7, 300);
  ret.stack = {{2, 0x77}};
  auto calls = pair(table(false, false), {sample(0, 7, 100), sample(0, 8, 150), ret, sample(1, 8, 400)});
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].stack, ret.stack);
  EXPECT_TRUE(calls[1].stack.empty());  // a fast call whose return kept no stack
}

TEST(CallContext, OffCpuTimeIsTheReturnsTotalsMinusTheEntrys) {
  Event in = sample(0, 7, 1000);
  in.offcpu = {10, 20, 30, 40, 50, 60};
  Event out = sample(1, 7, 9000);
  out.offcpu = {15, 20, 2030, 40, 4050, 60};
  auto calls = pair(table(true, true), {in, out});
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_TRUE(calls[0].has_offcpu);
  EXPECT_EQ(calls[0].offcpu, (OffCpuTimes{5, 0, 2000, 0, 4000, 0}));
  EXPECT_EQ(calls[0].duration, 8000u);
  // Totals that went back (a reused thread slot in the kernel) never make a huge share.
  Event back = sample(0, 7, 10000);
  back.offcpu = {100, 0, 0, 0, 0, 0};
  Event ret = sample(1, 7, 11000);
  ret.offcpu = {50, 0, 0, 0, 0, 0};
  calls = pair(table(true, true), {back, ret});
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].offcpu[0], 0u);
}

TEST(CallContext, ProbesWithoutOffCpuTotalsGiveNoSplit) {
  Event in = sample(0, 7, 1000);
  in.offcpu = {10, 0, 0, 0, 0, 0};  // not carried by the probe: ignored
  auto calls = pair(table(true, false), {in, sample(1, 7, 2000)});
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_FALSE(calls[0].has_offcpu);
  EXPECT_EQ(calls[0].offcpu, OffCpuTimes{});
}

}  // namespace
}  // namespace uprof
