// C++ exceptions thrown through probed functions: by default the program runs as it
// does without uprof (a return probe there would make it abort), every entry is
// counted, and the leaf that cannot be unwound through keeps its return probe and its
// latency (record/unwind_risk.h).
#include <gtest/gtest.h>

#include <map>

#include "support/test_support.h"
#include "uprof/analyse/report_model.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class Unwind : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Unwind, UPROF_ENGINES, test::engine_name);

TEST_P(Unwind, AProgramThatThrowsThroughProbedFunctionsRunsAsWithoutUprof) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "throw");
  auto plain = run({program, "1000"});
  ASSERT_EQ(plain.exit_code, 0);
  ASSERT_EQ(plain.out, "sum 751500 caught 250\n");

  auto r = run({uprof_binary(), "record", "--engine", GetParam(), "-o", dir.file("t.data"), "-e", "outer", "-e", "inner",
                "-e", "leaf", "--", program, "1000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(r.err.find("SIGABRT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no return probes on 2 C++ functions that call others (outer(int), inner(int)): an exception "
                       "unwinding through a return probe aborts the program"),
            std::string::npos)
      << r.err;

  auto rec = test::load_recording(dir.file("t.data"));
  std::map<std::string, std::pair<int, int>> hits;  // function -> entries, returns
  for (const auto& s : rec.samples) {
    const ProbeInfo& p = rec.probes[s.probe];
    (p.kind == ProbeKind::Entry ? hits[p.function].first : hits[p.function].second)++;
  }
  EXPECT_EQ(hits["outer(int)"], std::make_pair(1000, 0));
  EXPECT_EQ(hits["inner(int)"], std::make_pair(1000, 0));
  EXPECT_EQ(hits["leaf(int)"], std::make_pair(750, 750));

  auto m = build_report(dir.file("t.data"), AggregateOptions{});
  ASSERT_TRUE(m.ok()) << m.error().message;
  bool leaf_seen = false;
  for (const auto& g : m->groups) {
    if (m->functions.functions[g.function].name != "leaf(int)") continue;
    leaf_seen = true;
    EXPECT_EQ(g.calls, 750u);
    EXPECT_EQ(g.latency.count(), 750u);
    EXPECT_GT(g.latency.min(), 0u);
  }
  EXPECT_TRUE(leaf_seen);
}

TEST(UnwindRisk, AReturnProbeAskedForByNameIsRefusedWithTheReason) {
  test::TempDir dir;
  const std::string program = fixture("x86_64", "throw");
  auto r = run({uprof_binary(), "record", "-o", dir.file("t.data"), "-e", "outer%return", "--", program, "10"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("spec: 'outer%return': a C++ exception unwinding through outer(int) would abort the program "
                       "under a return probe (the kernel's return trampoline has no unwind information); "
                       "--unsafe-returns probes it anyway"),
            std::string::npos)
      << r.err;
  auto ret = run({uprof_binary(), "record", "-o", dir.file("t.data"), "-e", "inner $retval", "--", program, "10"});
  EXPECT_EQ(ret.exit_code, 1) << ret.err;
  EXPECT_NE(ret.err.find("$retval needs a return probe, and a C++ exception unwinding through inner(int)"),
            std::string::npos)
      << ret.err;
}

}  // namespace
}  // namespace uprof
