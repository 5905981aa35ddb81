// Go programs under uprof (record/unwind_risk.h GoCode): never a return probe, whose
// trampoline Go's runtime finds on a goroutine stack and dies of ("unexpected return pc
// for main.work"); the entry probe past the stack-growth check; the exits paired with
// their entries by goroutine (analyse/pairing.h). tests/fixtures/go/gw.go: goroutines
// call a recursive work() whose frames outgrow their stacks, and the program prints its
// own count of work() calls and the sum of the top-level results, the oracles here.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "uprof/analyse/pairing.h"
#include "uprof/analyse/report_model.h"

namespace uprof {
namespace {

using test::run;
using test::uprof_binary;

class Go : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Go, UPROF_ENGINES, test::engine_name);

#define UPROF_REQUIRE_GO_FIXTURE(path)                                                                    \
  do {                                                                                                    \
    if (!std::filesystem::exists(path))                                                                   \
      GTEST_SKIP() << "no Go toolchain when the tests were built (" << (path)                             \
                   << " missing): scripts/setup.sh installs golang-go";                                   \
  } while (0)

// gw 8 20 12: 8 goroutines x 20 rounds x work(12) -> 13 calls each.
const std::vector<std::string> kArgs{"8", "20", "12"};
constexpr uint64_t kCalls = 8 * 20 * 13;
constexpr uint64_t kCallsPerGoroutine = 20 * 13;

// "calls=2080 sum=35028\n" -> {2080, 35028}
std::pair<uint64_t, int64_t> own_counts(const std::string& out) {
  uint64_t calls = 0;
  long long sum = 0;
  EXPECT_EQ(std::sscanf(out.c_str(), "calls=%lu sum=%lld", &calls, &sum), 2) << out;
  return {calls, sum};
}

// The top-level calls' $retval, as the pairer pairs them (depth 0 on their goroutine).
struct TopLevel : PairingSink {
  std::size_t retval_slot = 0;
  int64_t sum = 0;
  uint64_t calls = 0;
  void on_call(const Call& c) override {
    ++calls;
    if (c.depth == 0 && retval_slot < c.return_values.size())
      sum += static_cast<int64_t>(c.return_values[retval_slot]);
  }
  void on_unmatched(const Unmatched&) override {}
  void on_hit(const Hit&) override {}
};

TEST_P(Go, GoroutinesThatGrowTheirStacksInsideAProbedFunctionRunAsAloneAndEveryCallPairs) {
  UPROF_REQUIRE_UPROBES();
  const std::string gw = test::fixture("x86_64", "go_gw");
  UPROF_REQUIRE_GO_FIXTURE(gw);
  std::vector<std::string> alone_argv{gw};
  alone_argv.insert(alone_argv.end(), kArgs.begin(), kArgs.end());
  const auto alone = run(alone_argv);
  ASSERT_EQ(alone.exit_code, 3) << alone.err;
  const auto [own_calls, own_sum] = own_counts(alone.out);
  ASSERT_EQ(own_calls, kCalls);

  test::TempDir dir;
  std::vector<std::string> cmd{uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                               test::attach_of(GetParam()), "-o", dir.file("t.data"), "-e", "main.work $retval",
                               "--"};
  cmd.insert(cmd.end(), alone_argv.begin(), alone_argv.end());
  const auto r = run(cmd);
  // As alone: its own output (the same sum: the calls computed what they compute
  // alone) and exit status, and no word of Go's runtime.
  EXPECT_EQ(r.out, alone.out) << r.err;
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.find("unexpected return pc"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("fatal error"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Go's stack-growth check"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 Go function (main.work) are measured at their exit instructions"), std::string::npos)
      << r.err;

  auto rec = test::load_recording(dir.file("t.data"));
  ASSERT_TRUE(rec.losses.empty());
  std::size_t retval_slot = SIZE_MAX;
  for (const auto& p : rec.probes) {
    EXPECT_NE(p.kind, ProbeKind::Return) << p.function;  // never a return probe
    EXPECT_TRUE(p.goroutine) << p.function;
    if (p.kind == ProbeKind::Exit)
      for (std::size_t i = 0; i < p.values.size(); i++)
        if (p.values[i].name == "$retval") retval_slot = i;
  }
  // One entry per call (a probe before the stack check fires again when the function
  // restarts on a grown stack), one exit per call; and stacks did move inside work():
  // exits whose stack pointer is not their entry's, by each goroutine's own nesting.
  uint64_t entries = 0, exits = 0, moved = 0;
  std::map<uint64_t, std::vector<uint64_t>> open;  // by g: the entries' stack pointers
  for (const Event& e : rec.samples) {
    const ProbeInfo& p = rec.probes[e.probe];
    ASSERT_NE(e.goroutine, 0u);
    auto& stack = open[e.goroutine];
    if (p.kind == ProbeKind::Entry) {
      ++entries;
      stack.push_back(e.frame);
    } else {
      ++exits;
      ASSERT_FALSE(stack.empty());
      moved += stack.back() != e.frame;
      stack.pop_back();
    }
  }
  EXPECT_EQ(entries, kCalls);
  EXPECT_EQ(exits, kCalls);
  EXPECT_GT(moved, 0u);

  // The report: every call paired, none unmatched, a latency per call.
  auto report = build_report(dir.file("t.data"), AggregateOptions{});
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->groups.size(), 1u);
  EXPECT_EQ(report->groups[0].calls, kCalls);
  EXPECT_EQ(report->groups[0].unmatched_total(), 0u);
  EXPECT_EQ(report->groups[0].latency.count(), kCalls);
  // By goroutine: one row per goroutine, by the id its entry read from g, each with
  // its 260 calls.
  AggregateOptions by_g;
  by_g.by = GroupBy::Goroutine;
  auto split = build_report(dir.file("t.data"), by_g);
  ASSERT_TRUE(split.ok()) << split.error().message;
  ASSERT_EQ(split->groups.size(), 8u);
  std::set<uint64_t> ids;
  for (const auto& g : split->groups) {
    EXPECT_TRUE(g.goroutine_is_id);
    ids.insert(g.goroutine);
    EXPECT_EQ(g.calls, kCallsPerGoroutine);
    EXPECT_EQ(g.unmatched_total(), 0u);
  }
  // Go numbers goroutines as it starts them: the 8 workers, started one after another
  // by main, have 8 consecutive ids (another field of g would not be).
  ASSERT_EQ(ids.size(), 8u);
  EXPECT_EQ(*ids.rbegin() - *ids.begin(), 7u);
  EXPECT_GT(*ids.begin(), 1u);  // main is goroutine 1
  EXPECT_LT(*ids.rbegin(), 1000u);
  // $retval at the exits: the top-level calls' results add up to the program's sum.
  ASSERT_NE(retval_slot, SIZE_MAX);
  TopLevel top;
  top.retval_slot = retval_slot;
  const ProbeFunctions functions = group_probes(rec.probes);
  Pairer pairer(functions);
  for (const Event& e : rec.samples) pairer.add(e, top);
  pairer.finish(top);
  EXPECT_EQ(top.calls, kCalls);
  EXPECT_EQ(top.sum, own_sum);
}

// A net/http server of the standard library under a load of requests from the same
// program (4 clients x 50 requests, keep-alive): recorded with its handler probed, it
// serves every request as alone, and the handler's latency is measured per call, within
// the clients' own time for the requests (one-sided: each call is inside one request).
TEST_P(Go, AnHttpServerUnderLoadServesAsAloneAndItsHandlerIsTimed) {
  UPROF_REQUIRE_UPROBES();
  const std::string httpd = test::fixture("x86_64", "go_httpd");
  UPROF_REQUIRE_GO_FIXTURE(httpd);
  const std::string served = "requests=200 failed=0 served=200\n";
  const auto alone = run({httpd, "4", "50"});
  ASSERT_EQ(alone.out, served) << alone.err;
  test::TempDir dir;
  const auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                      test::attach_of(GetParam()), "-o", dir.file("t.data"), "-e", "main.handle", "--", httpd, "4",
                      "50"});
  EXPECT_EQ(r.out, served) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("fatal error"), std::string::npos) << r.err;
  const auto at = r.err.find("client_ns=");
  ASSERT_NE(at, std::string::npos) << r.err;
  const uint64_t client_ns = std::stoull(r.err.substr(at + 10));
  auto report = build_report(dir.file("t.data"), AggregateOptions{});
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->groups.size(), 1u);
  const GroupStats& g = report->groups[0];
  EXPECT_EQ(g.calls, 200u);
  EXPECT_EQ(g.unmatched_total(), 0u);
  ASSERT_EQ(g.latency.count(), 200u);
  EXPECT_GE(g.latency.min(), 1'000'000u);  // it sleeps 1 ms
  EXPECT_LT(g.latency.total(), client_ns);
}

// `uprof probe` says how main.work's returns are measured: at its two `ret`s.
TEST(GoDecisions, ProbeSaysAGoFunctionIsMeasuredAtItsExits) {
  const std::string gw = test::fixture("x86_64", "go_gw");
  UPROF_REQUIRE_GO_FIXTURE(gw);
  const auto r = run({uprof_binary(), "probe", gw, "main.work"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("at 2 exits"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Go's stack-growth check"), std::string::npos) << r.out;
}

// --unsafe-returns never gives a Go function a return probe: the runtime's stack walks
// do not depend on what the program does, they always happen.
TEST(GoDecisions, UnsafeReturnsGivesAGoFunctionNoReturnProbe) {
  UPROF_REQUIRE_UPROBES();
  const std::string gw = test::fixture("x86_64", "go_gw");
  UPROF_REQUIRE_GO_FIXTURE(gw);
  test::TempDir dir;
  const auto r = run({uprof_binary(), "record", "--unsafe-returns", "-o", dir.file("t.data"), "-e", "main.work", "--",
                      gw, "2", "3", "12"});
  EXPECT_EQ(r.out, "calls=78 sum=" + std::to_string(own_counts(run({gw, "2", "3", "12"}).out).second) + "\n") << r.err;
  EXPECT_EQ(r.exit_code, 3) << r.err;
  for (const auto& p : test::load_recording(dir.file("t.data")).probes) EXPECT_NE(p.kind, ProbeKind::Return);
}

}  // namespace
}  // namespace uprof
