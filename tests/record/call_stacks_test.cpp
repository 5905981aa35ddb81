// record -g: which probes carry the call stack (record/call_stacks.h), and --call-graph's text.
#include "uprof/record/call_stacks.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

ProbeInfo probe(uint32_t index, const std::string& row, RowRole role) {
  ProbeInfo p;
  p.index = index;
  p.function = row;
  p.row = row;
  p.role = role;
  p.kind = role == RowRole::Return ? ProbeKind::Return : role == RowRole::Exit ? ProbeKind::Exit : ProbeKind::Entry;
  return p;
}

struct Table {
  std::vector<ProbeInfo> probes;
  CapturePlan capture;
  explicit Table(std::vector<ProbeInfo> p) : probes(std::move(p)) {
    for (const auto& i : probes) capture.probes.push_back(ProbeCapture{.probe = i.index});
  }
  std::vector<StackCapture> modes() const {
    std::vector<StackCapture> m;
    for (const auto& c : capture.probes) m.push_back(c.stack);
    return m;
  }
};

using S = StackCapture;

TEST(CallStacks, WithoutDashGNothingChanges) {
  Table t({probe(0, "work", RowRole::Entry), probe(1, "work", RowRole::Return)});
  EXPECT_TRUE(plan_call_stacks(t.probes, t.capture, CallGraphPlan{}).empty());
  EXPECT_EQ(t.modes(), (std::vector<S>{S::None, S::None}));
  EXPECT_FALSE(t.probes[0].stack);
  EXPECT_FALSE(t.capture.call_graph.on);
}

TEST(CallStacks, TheEntryTakesTheStackAndItsReturnNone) {
  // work: an entry and a return; free: measured at its two exits; lines.c:23 a point of code.
  Table t({probe(0, "work", RowRole::Entry), probe(1, "work", RowRole::Return), probe(2, "free", RowRole::Entry),
           probe(3, "free", RowRole::Exit), probe(4, "free", RowRole::Exit), probe(5, "lines.c:23", RowRole::Line)});
  EXPECT_TRUE(plan_call_stacks(t.probes, t.capture, CallGraphPlan{.on = true}).empty());
  EXPECT_EQ(t.modes(), (std::vector<S>{S::Always, S::None, S::Always, S::None, S::None, S::Always}));
  EXPECT_TRUE(t.probes[0].stack);
  EXPECT_FALSE(t.probes[1].stack);
  EXPECT_TRUE(t.capture.call_graph.on);
  // The perf engine's samples copy the registers and the stack for it.
  EXPECT_EQ(t.capture.probes[0].reads.stack_bytes, 8192u);
  EXPECT_NE(t.capture.probes[0].reads.regs_mask & (uint64_t{1} << arch_info(Arch::X86_64).sp_reg), 0u);
  EXPECT_EQ(t.capture.probes[1].reads, ProbeReads{});
}

TEST(CallStacks, AReturnWithoutItsEntryTakesTheStack) {
  Table t({probe(0, "work", RowRole::Return)});
  plan_call_stacks(t.probes, t.capture, CallGraphPlan{.on = true});
  EXPECT_EQ(t.modes(), (std::vector<S>{S::Always}));
  EXPECT_TRUE(t.probes[0].stack);
}

TEST(CallStacks, StackMinTimesTheEntryAndTakesTheStackAtTheReturn) {
  Table t({probe(0, "work", RowRole::Entry), probe(1, "work", RowRole::Return), probe(2, "free", RowRole::Entry),
           probe(3, "free", RowRole::Exit), probe(4, "free", RowRole::Exit), probe(5, "_start", RowRole::Entry)});
  auto notes = plan_call_stacks(t.probes, t.capture, CallGraphPlan{.on = true, .stack_min_ns = 1'000'000});
  EXPECT_EQ(t.modes(), (std::vector<S>{S::EntryTime, S::IfLong, S::EntryTime, S::IfLong, S::IfLong, S::None}));
  EXPECT_FALSE(t.probes[0].stack);  // its events never carry one
  EXPECT_TRUE(t.probes[1].stack);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "--stack-min: no call stacks for 1 probe without both an entry and a return (_start): their calls "
                      "have no duration to compare");
  EXPECT_EQ(t.capture.probes[0].reads, ProbeReads{});  // an entry copies nothing
  EXPECT_EQ(t.capture.probes[1].reads.stack_bytes, 8192u);
}

TEST(CallStacks, CallGraphIsSpelledAsPerfSpellsIt) {
  auto d = parse_call_graph("dwarf");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, (CallGraphPlan{.on = true, .method = CallGraphMethod::Dwarf, .stack_bytes = 8192}));
  auto sized = parse_call_graph("dwarf,16384");
  ASSERT_TRUE(sized.ok());
  EXPECT_EQ(sized->stack_bytes, 16384u);
  auto fp = parse_call_graph("fp");
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(fp->method, CallGraphMethod::FramePointer);
  auto lbr = parse_call_graph("lbr");
  ASSERT_FALSE(lbr.ok());
  EXPECT_EQ(lbr.error().message, "--call-graph is dwarf[,SIZE] or fp, not 'lbr'");
  for (const char* bad : {"dwarf,100", "dwarf,0", "dwarf,65536", "dwarf,8k", "dwarf,"}) {
    auto r = parse_call_graph(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("a multiple of 8 from 8 to 65528"), std::string::npos) << r.error().message;
    }
  }
}

}  // namespace
}  // namespace uprof
