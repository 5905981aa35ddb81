// C++ exceptions thrown through probed functions: by default the program runs as it
// does without uprof (a return probe there would make it abort), every entry is
// counted, the functions an exception can unwind through are measured at their own
// exit instructions (the calls it left are counted as unwound, the others have
// latencies and return values), and the leaf that cannot be unwound through keeps its
// return probe (record/unwind_risk.h).
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

void expect_measured_at_exits(const std::string& engine, const std::string& name) {
  test::TempDir dir;
  const std::string program = fixture("x86_64", name);
  auto plain = run({program, "1000"});
  ASSERT_EQ(plain.exit_code, 0);
  ASSERT_EQ(plain.out, "sum 751500 caught 250\n");

  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(engine), "--attach", test::attach_of(engine), "-o", dir.file("t.data"), "-e", "outer $retval", "-e",
                "inner $retval", "-e", "leaf", "--", program, "1000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(r.err.find("SIGABRT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("returns of 2 C++ functions that call others (outer(int), inner(int)) are measured at their "
                       "exit instructions, not by return probes: an exception unwinding through a return probe "
                       "aborts the program"),
            std::string::npos)
      << r.err;

  auto rec = test::load_recording(dir.file("t.data"));
  std::map<std::pair<std::string, ProbeKind>, int> hits;
  uint64_t outer_returned = 0;  // the sum of outer's return values: what the program printed
  int inner_exit_values_known = 0;
  for (const auto& s : rec.samples) {
    const ProbeInfo& p = rec.probes[s.probe];
    hits[{p.function, p.kind}]++;
    if (p.function == "outer(int)" && p.kind == ProbeKind::Exit) outer_returned += s.values[0];
    if (p.function == "inner(int)" && p.kind == ProbeKind::Exit) inner_exit_values_known += (s.missing & 1) == 0;
  }
  using K = ProbeKind;
  EXPECT_EQ((hits[{"outer(int)", K::Entry}]), 1000);
  EXPECT_EQ((hits[{"outer(int)", K::Exit}]), 750);  // at its ret
  EXPECT_EQ((hits[{"outer(int)", K::Return}]), 0);  // no trampoline
  EXPECT_EQ((hits[{"inner(int)", K::Entry}]), 1000);
  EXPECT_EQ((hits[{"inner(int)", K::Exit}]), 750);  // at its tail call to leaf
  EXPECT_EQ((hits[{"leaf(int)", K::Entry}]), 750);
  EXPECT_EQ((hits[{"leaf(int)", K::Return}]), 750);
  EXPECT_EQ(outer_returned, 751500u);
  EXPECT_EQ(inner_exit_values_known, 0);  // at a tail call the return value is leaf's, still to come

  auto m = build_report(dir.file("t.data"), AggregateOptions{});
  ASSERT_TRUE(m.ok()) << m.error().message;
  std::map<std::string, const GroupStats*> by_name;
  for (const auto& g : m->groups) by_name[m->functions.functions[g.function].name] = &g;
  for (const char* fn : {"outer(int)", "inner(int)", "leaf(int)"}) {
    SCOPED_TRACE(fn);
    ASSERT_TRUE(by_name.count(fn));
    const GroupStats& g = *by_name[fn];
    EXPECT_EQ(g.calls, 750u);
    EXPECT_EQ(g.latency.count(), 750u);
    EXPECT_GT(g.latency.min(), 0u);
    EXPECT_EQ(g.unmatched[static_cast<std::size_t>(UnmatchedReason::Unwound)], std::string(fn) == "leaf(int)" ? 0u : 250u);
  }
  EXPECT_TRUE(m->pairing.balanced());
}

TEST_P(Unwind, AProgramThatThrowsThroughProbedFunctionsRunsAsWithoutUprof) {
  UPROF_REQUIRE_UPROBES();
  expect_measured_at_exits(GetParam(), "throw");
}

// inner split into inner and inner.cold (the throw), in a stripped file that names
// neither part: the jump into the cold part is no exit, the part is found by its FDE.
TEST_P(Unwind, AStrippedFunctionWithASplitOffPartIsMeasuredTheSame) {
  UPROF_REQUIRE_UPROBES();
  expect_measured_at_exits(GetParam(), "throw_split_stripped");
}

TEST(UnwindRisk, AReturnProbeWhereTheExitsCannotAllBeSeenIsRefusedWithTheReason) {
  test::TempDir dir;
  const std::string program = fixture("x86_64", "throw");
  auto r = run({uprof_binary(), "record", "-o", dir.file("t.data"), "-e", "via_pointer%return", "--", program, "10", "3"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("spec: 'via_pointer%return': a C++ exception unwinding through via_pointer(int) would abort the "
                       "program under a return probe (the kernel's return trampoline has no unwind information), and "
                       "its exits cannot all be probed: an indirect jump at +0x4 (jmpq *0x"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(%rip)) may leave it; --unsafe-returns probes it anyway"), std::string::npos) << r.err;
  auto ret = run({uprof_binary(), "record", "-o", dir.file("t.data"), "-e", "via_pointer $retval", "--", program, "10", "3"});
  EXPECT_EQ(ret.exit_code, 1) << ret.err;
  EXPECT_NE(ret.err.find("$retval needs a return probe, and a C++ exception unwinding through via_pointer(int)"),
            std::string::npos)
      << ret.err;
  // By default it is counted, without latency, and the note says why.
  auto plain = run({uprof_binary(), "record", "-o", dir.file("t.data"), "-e", "via_pointer", "--", program, "10", "3"});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, "sum 80 caught 3\nvia 7\n");
  EXPECT_NE(plain.err.find("no return probes on 1 C++ function that call others (via_pointer(int))"), std::string::npos)
      << plain.err;
}

// uprof probe says how each function's returns are measured, for an arm64 file too
// (ret, and `b leaf` as the tail call; via_pointer's `br x16` hides its exits).
TEST(UnwindRisk, ProbeShowsHowReturnsAreMeasuredOnBothArches) {
  for (const char* arch : {"x86_64", "arm64"}) {
    SCOPED_TRACE(arch);
    auto r = run({uprof_binary(), "probe", fixture(arch, "throw"), "outer", "inner", "leaf", "via_pointer"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("RETURNS"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("outer(int)"), std::string::npos);
    EXPECT_NE(r.out.find("at 1 exit "), std::string::npos) << r.out;                // outer: ret
    EXPECT_NE(r.out.find("at 1 exit (1 tail call)"), std::string::npos) << r.out;  // inner: jmp/b leaf
    EXPECT_NE(r.out.find("return probe"), std::string::npos) << r.out;             // leaf
    EXPECT_NE(r.out.find(std::string("none: an indirect jump at +0x") +
                         (std::string(arch) == "arm64" ? "10 (br x16)" : "4 (jmpq *")),
              std::string::npos)
        << r.out;
  }
}

TEST(UnwindRisk, AReturnProbeAskedForByNameUsesTheExits) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "throw");
  auto r = run({uprof_binary(), "record", "-o", dir.file("t.data"), "-e", "outer%return", "--", program, "100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "sum 7650 caught 25\n");
  auto rec = test::load_recording(dir.file("t.data"));
  ASSERT_EQ(rec.probes.size(), 1u);
  EXPECT_EQ(rec.probes[0].kind, ProbeKind::Exit);
  EXPECT_EQ(rec.samples.size(), 75u);
}

}  // namespace
}  // namespace uprof
