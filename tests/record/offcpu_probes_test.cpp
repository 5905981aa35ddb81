// record --off-cpu: which probes carry their thread's off-CPU totals
// (record/offcpu_probes.h), on hand-made tables and on plan_recording of a fixture.
#include "uprof/record/offcpu_probes.h"

#include <gtest/gtest.h>

#include "support/test_support.h"
#include "uprof/record/recording_plan.h"

namespace uprof {
namespace {

ProbeTable table_of(std::vector<std::pair<RowRole, std::string>> probes) {
  ProbeTable t;
  for (auto& [role, row] : probes) {
    const uint32_t i = static_cast<uint32_t>(t.probes.size());
    ProbeInfo p;
    p.index = i;
    p.path = "/bin/x";
    p.role = role;
    p.row = row;
    t.probes.push_back(p);
    ProbeCapture c;
    c.probe = i;
    c.path = p.path;
    t.capture.probes.push_back(c);
  }
  return t;
}

TEST(OffCpuProbes, AFunctionWithBothEndsEntersAndLeaves) {
  ProbeTable t = table_of({{RowRole::Entry, "add"}, {RowRole::Return, "add"},
                           {RowRole::Entry, "parse"}, {RowRole::Exit, "parse"}, {RowRole::Exit, "parse"}});
  mark_offcpu_probes(t);
  const OffCpuRole want[] = {OffCpuRole::Enter, OffCpuRole::Leave, OffCpuRole::Enter, OffCpuRole::Leave,
                             OffCpuRole::Leave};
  for (std::size_t i = 0; i < t.probes.size(); i++) {
    EXPECT_TRUE(t.probes[i].offcpu) << i;
    EXPECT_EQ(t.capture.probes[i].offcpu, want[i]) << i;
  }
}

// An entry without a return would keep its thread followed for ever and splits no call;
// points inside functions, lines and USDT probes are no calls.
TEST(OffCpuProbes, RowsWithoutBothEndsGetNone) {
  ProbeTable t = table_of({{RowRole::Entry, "only_entry"}, {RowRole::Return, "only_return"},
                           {RowRole::Instruction, "add+0x10"}, {RowRole::Line, "lines.c:23"},
                           {RowRole::UsdtStart, "python:gc"}, {RowRole::UsdtDone, "python:gc"}});
  mark_offcpu_probes(t);
  for (std::size_t i = 0; i < t.probes.size(); i++) {
    EXPECT_FALSE(t.probes[i].offcpu) << i;
    EXPECT_EQ(t.capture.probes[i].offcpu, OffCpuRole::None) << i;
  }
}

RecordRequest request(const std::string& spec, bool offcpu) {
  RecordRequest r;
  auto s = parse_probe_spec(spec);
  EXPECT_TRUE(s) << s.error().message;
  if (s) r.specs.push_back(*s);
  r.command = {test::fixture("x86_64", "why_slow"), "1", "1"};
  r.offcpu = offcpu;
  return r;
}

TEST(OffCpuProbes, PlanRecordingMarksWorksEntryAndReturn) {
  auto plan = plan_recording(request("work", true));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->probes.size(), 2u);
  EXPECT_TRUE(plan->probes[0].offcpu);
  EXPECT_TRUE(plan->probes[1].offcpu);
  EXPECT_EQ(plan->capture.probes[0].offcpu, OffCpuRole::Enter);
  EXPECT_EQ(plan->capture.probes[1].offcpu, OffCpuRole::Leave);
  auto without = plan_recording(request("work", false));
  ASSERT_TRUE(without) << without.error().message;
  EXPECT_FALSE(without->probes[0].offcpu);
  EXPECT_EQ(without->capture.probes[1].offcpu, OffCpuRole::None);
}

TEST(OffCpuProbes, NothingToSplitIsRefusedWithTheReason) {
  RecordRequest r = request("work", true);
  r.plan.entry_only = true;
  auto plan = plan_recording(r);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().message,
            "record: --off-cpu splits a call's time, and no probed function is measured at both its entry and its "
            "return (or exits): drop --entry-only / --return-only");
}

}  // namespace
}  // namespace uprof
