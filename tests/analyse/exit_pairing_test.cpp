// Pairing of functions measured at their exit instructions (ProbeKind::Exit): the
// samples carry the stack pointer, which tells a returning frame from one that an
// exception left, and those frames do not count toward the kernel's nesting limit.
#include <gtest/gtest.h>

#include "analyse/event_builders.h"
#include "uprof/analyse/pairing.h"

namespace uprof {
namespace {

using test::probe;
using test::sample;

// x: entry #0 (moved 4 bytes off the symbol at 0x5000), exits #1 (ret, +0x10) and #2
// (a tail call, +0x20); y: entry #3, exit #4; z: entry #5 and a return probe #6.
constexpr uint32_t kXe = 0, kXret = 1, kXtail = 2, kYe = 3, kYx = 4, kZe = 5, kZr = 6;
constexpr uint32_t kX = 0, kY = 1, kZ = 2;

ProbeInfo framed(ProbeInfo p, std::string symbol) {
  p.symbol = std::move(symbol);
  p.frame = p.kind != ProbeKind::Return && p.function != "z";
  return p;
}

std::vector<ProbeInfo> table() {
  return {
      framed(probe(kXe, ProbeKind::Entry, "x", 0x5004, {"%di"}), "x"),
      framed(probe(kXret, ProbeKind::Exit, "x", 0x5010, {"%ax"}, 0x10), "x"),
      framed(probe(kXtail, ProbeKind::Exit, "x", 0x5020, {"%ax"}, 0x20), "x"),
      framed(probe(kYe, ProbeKind::Entry, "y", 0x6000), "y"),
      framed(probe(kYx, ProbeKind::Exit, "y", 0x6008, {}, 0x8), "y"),
      framed(probe(kZe, ProbeKind::Entry, "z", 0x7000), "z"),
      framed(probe(kZr, ProbeKind::Return, "z", 0x7000), "z"),
  };
}

Event at(uint32_t probe, uint64_t time, uint64_t sp, std::initializer_list<uint64_t> values = {}) {
  Event e = sample(probe, 1, time, values);
  e.frame = sp;
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

TEST(ExitProbes, EveryExitOfAFunctionIsItsReturnSide) {
  const ProbeFunctions f = group_probes(table());
  ASSERT_EQ(f.functions.size(), 3u);
  EXPECT_EQ(f.function_of_probe[kXret], kX);
  EXPECT_EQ(f.function_of_probe[kXtail], kX);  // found from the moved entry site
  EXPECT_EQ(f.function_of_probe[kYx], kY);
  EXPECT_EQ(f.role(kXret), ProbeRole::Return);
  EXPECT_EQ(f.role(kXtail), ProbeRole::Return);
  EXPECT_TRUE(f.functions[kX].at_exits);
  EXPECT_FALSE(f.functions[kZ].at_exits);
  EXPECT_EQ(f.functions[kX].return_probe, kXret);
  EXPECT_EQ(f.first_slot_of_probe[kXtail], 1u);  // after the entry's %di, like the first exit's
  EXPECT_EQ(f.functions[kX].values.size(), 2u);
}

TEST(ExitProbes, EitherExitEndsTheCall) {
  Paired r = pair({at(kXe, 100, 1000, {7}), at(kXret, 150, 1000, {70}), at(kXe, 200, 1000, {8}),
                   at(kXtail, 290, 1000, {0})});
  ASSERT_EQ(r.sink.calls.size(), 2u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 50u);
  EXPECT_EQ(r.sink.calls[0].return_values, std::vector<uint64_t>{70});
  EXPECT_EQ(r.sink.calls[1].call.duration, 90u);
  EXPECT_EQ(r.sink.calls[1].entry_values, std::vector<uint64_t>{8});
  EXPECT_TRUE(r.counts.balanced());
}

TEST(ExitProbes, FramesAnExceptionLeftCloseAsUnwoundAtTheNextEntry) {
  // x -> y -> z; z throws, caught above x (nothing returns); then x -> y again, returning.
  Paired r = pair({at(kXe, 0, 1000), at(kYe, 10, 900), at(kZe, 20, 0), at(kXe, 100, 1000), at(kYe, 110, 900),
                   at(kYx, 120, 900), at(kXret, 130, 1000)});
  ASSERT_EQ(r.sink.unmatched.size(), 3u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.function, kZ);  // innermost first, z has no stack pointer
  EXPECT_EQ(r.sink.unmatched[1].unmatched.function, kY);
  EXPECT_EQ(r.sink.unmatched[2].unmatched.function, kX);
  for (const auto& u : r.sink.unmatched) EXPECT_EQ(u.unmatched.reason, UnmatchedReason::Unwound);
  ASSERT_EQ(r.sink.calls.size(), 2u);
  EXPECT_EQ(r.sink.calls[0].call.function, kY);
  EXPECT_EQ(r.sink.calls[0].call.duration, 10u);
  EXPECT_EQ(r.sink.calls[1].call.function, kX);
  EXPECT_EQ(r.sink.calls[1].call.duration, 30u);
  EXPECT_EQ(r.sink.calls[1].call.depth, 0u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(ExitProbes, ALiveCallerIsNotClosedByANestedEntry) {
  // x (sp 1000) calls y (sp 900), which calls x again (sp 800): nothing is left.
  Paired r = pair({at(kXe, 0, 1000), at(kYe, 10, 900), at(kXe, 20, 800), at(kXret, 30, 800), at(kYx, 40, 900),
                   at(kXret, 50, 1000)});
  EXPECT_TRUE(r.sink.unmatched.empty());
  ASSERT_EQ(r.sink.calls.size(), 3u);
  EXPECT_EQ(r.sink.calls[2].call.duration, 50u);
  EXPECT_EQ(r.sink.calls[2].call.depth, 0u);
}

TEST(ExitProbes, RecursionReturnsTheFrameWithItsStackPointer) {
  // x recurses three deep; the innermost throws, caught in the middle level, which returns.
  Paired r = pair({at(kXe, 0, 1000), at(kXe, 10, 900), at(kXe, 20, 800), at(kXret, 50, 900), at(kXret, 60, 1000)});
  ASSERT_EQ(r.sink.unmatched.size(), 1u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.time, 20u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.reason, UnmatchedReason::Unwound);
  ASSERT_EQ(r.sink.calls.size(), 2u);
  EXPECT_EQ(r.sink.calls[0].call.entry_time, 10u);  // not the innermost frame's entry
  EXPECT_EQ(r.sink.calls[0].call.duration, 40u);
  EXPECT_EQ(r.sink.calls[1].call.duration, 60u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(ExitProbes, AnExitWithAnotherStackPointerDoesNotReturnAFrame) {
  Paired r = pair({at(kXe, 0, 1000), at(kXret, 10, 640), at(kXret, 20, 1000)});
  ASSERT_EQ(r.sink.unmatched.size(), 1u);
  EXPECT_EQ(r.sink.unmatched[0].unmatched.reason, UnmatchedReason::ReturnWithoutEntry);
  ASSERT_EQ(r.sink.calls.size(), 1u);
  EXPECT_EQ(r.sink.calls[0].call.duration, 20u);
  EXPECT_TRUE(r.counts.balanced());
}

TEST(ExitProbes, FramesAtExitsDoNotCountTowardTheKernelNestingLimit) {
  // 100 nested x: no return trampoline, so every one returns; then 64 nested z still do.
  std::vector<Event> events;
  uint64_t t = 0;
  for (uint64_t i = 0; i < 100; ++i) events.push_back(at(kXe, t++, 100000 - 16 * i));
  for (uint64_t i = 0; i < 64; ++i) events.push_back(at(kZe, t++, 0));
  for (uint64_t i = 0; i < 64; ++i) events.push_back(at(kZr, t++, 0));
  for (uint64_t i = 100; i-- > 0;) events.push_back(at(kXret, t++, 100000 - 16 * i));
  Paired r = pair(events);
  EXPECT_EQ(r.sink.calls.size(), 164u);
  EXPECT_TRUE(r.sink.unmatched.empty());
  EXPECT_TRUE(r.counts.balanced());
}

}  // namespace
}  // namespace uprof
