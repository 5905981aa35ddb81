// Matching two recordings' functions, threads and values, the order of the rows, the
// binaries' build-ids, and what --fail-above counts, on report models built by hand.
#include "uprof/analyse/diff_model.h"

#include <gtest/gtest.h>

#include "analyse/report_builders.h"

namespace uprof {
namespace {

using test::calls;
using test::Fn;
using test::model;

const DiffRow* find(const DiffModel& d, const std::string& function, const std::string& thread = "") {
  for (const DiffRow& r : d.rows)
    if (r.function == function && r.thread == thread) return &r;
  return nullptr;
}

TEST(DiffModel, MatchesFunctionsByNameAndOrdersWhatChangedFirst) {
  const ReportModel a = model({{.name = "steady", .latencies = calls(2000, 5e6)},
                               {.name = "parse", .latencies = calls(2000, 1e6)},
                               {.name = "faster", .latencies = calls(2000, 2e6)},
                               {.name = "gone", .latencies = calls(10, 1e3)},
                               {.name = "main", .paired = false, .hits = 1}});
  ReportModel b = model({{.name = "parse", .latencies = calls(3000, 1.5e6)},
                         {.name = "steady", .latencies = calls(1000, 5e6)},
                         {.name = "faster", .latencies = calls(2000, 1e6)},
                         {.name = "new", .latencies = calls(5, 1e3)},
                         {.name = "main", .paired = false, .hits = 2}});
  const DiffModel d = diff_reports(a, std::move(b), DiffOptions{});
  std::vector<std::string> order;
  for (const DiffRow& r : d.rows) order.push_back(r.function);
  // Slower, faster, the rest by time (steady's 5 s before main's hits), only in A, only in B.
  EXPECT_EQ(order, (std::vector<std::string>{"parse", "faster", "steady", "main", "gone", "new"}));

  const DiffRow& parse = d.rows[0];
  EXPECT_EQ(parse.a.calls, 2000u);
  EXPECT_EQ(parse.b.calls, 3000u);
  ASSERT_EQ(parse.shifts.size(), 3u);
  for (const QuantileShift& s : parse.shifts) {
    EXPECT_EQ(s.verdict, ShiftVerdict::Slower) << "p" << s.percent;
    EXPECT_NEAR(s.ratio, 1.5, 0.02);
  }
  EXPECT_NEAR(parse.max_ratio, 1.5, 0.01);
  for (const QuantileShift& s : find(d, "faster")->shifts) EXPECT_EQ(s.verdict, ShiftVerdict::Faster);
  for (const QuantileShift& s : find(d, "steady")->shifts) EXPECT_EQ(s.verdict, ShiftVerdict::Same);

  // Hits only: calls, no latency to compare.
  const DiffRow* main = find(d, "main");
  EXPECT_TRUE(main->in_both());
  EXPECT_FALSE(main->compared());
  EXPECT_EQ(main->a.calls, 1u);
  EXPECT_EQ(main->b.calls, 2u);

  const DiffRow* gone = find(d, "gone");
  EXPECT_TRUE(gone->a.probed);
  EXPECT_FALSE(gone->b.probed);
  EXPECT_FALSE(gone->compared());
  EXPECT_FALSE(find(d, "new")->a.probed);
  EXPECT_TRUE(find(d, "new")->b.probed);
}

TEST(DiffModel, FailAboveCountsP50AndP99Only) {
  // A: 95% of calls at 1 ms, 5% at 10 ms; B: 88% and 12%. p90 moves from 1 ms to
  // 10 ms; p50 (1 ms) and p99 (10 ms) do not.
  std::vector<uint64_t> va(9500, 1'000'000), vb(8800, 1'000'000);
  va.insert(va.end(), 500, 10'000'000);
  vb.insert(vb.end(), 1200, 10'000'000);
  const DiffModel d = diff_reports(model({{.name = "tail", .latencies = va}}), model({{.name = "tail", .latencies = vb}}),
                                   DiffOptions{});
  ASSERT_EQ(d.rows.size(), 1u);
  ASSERT_EQ(d.rows[0].shifts.size(), 3u);
  EXPECT_EQ(d.rows[0].shifts[0].verdict, ShiftVerdict::Same);
  EXPECT_EQ(d.rows[0].shifts[1].verdict, ShiftVerdict::Slower);
  EXPECT_EQ(d.rows[0].shifts[2].verdict, ShiftVerdict::Same);
  EXPECT_TRUE(regressions(d, 20).empty());

  const DiffModel worse = diff_reports(model({{.name = "f", .latencies = calls(2000, 1e6)}}),
                                       model({{.name = "f", .latencies = calls(2000, 1.5e6)}}), DiffOptions{});
  const auto r = regressions(worse, 20);
  ASSERT_EQ(r.size(), 2u);  // p50 and p99
  EXPECT_EQ(r[0].shift.percent, 50);
  EXPECT_EQ(r[1].shift.percent, 99);
  EXPECT_EQ(worse.rows[r[0].row].function, "f");
  EXPECT_TRUE(regressions(worse, 60).empty());  // 50% slower is not more than 60%
  // The other way round it got faster: never a regression.
  const DiffModel better = diff_reports(model({{.name = "f", .latencies = calls(2000, 1.5e6)}}),
                                        model({{.name = "f", .latencies = calls(2000, 1e6)}}), DiffOptions{});
  EXPECT_TRUE(regressions(better, 0).empty());
}

TEST(DiffModel, ThreadsMatchByNameAcrossRuns) {
  // Two "worker" threads in A (tids 11, 12), one in B (tid 40): merged by name.
  const ReportModel a = model({{.name = "work", .latencies = calls(500, 1e6), .comm = "worker", .tid = 11},
                               {.name = "work", .latencies = calls(500, 1e6), .comm = "worker", .tid = 12},
                               {.name = "work", .latencies = calls(100, 1e6), .comm = "main", .tid = 10}});
  const ReportModel b = model({{.name = "work", .latencies = calls(900, 3e6), .comm = "worker", .tid = 40},
                               {.name = "work", .latencies = calls(100, 1e6), .comm = "main", .tid = 39}});
  const DiffModel d = diff_reports(a, b, DiffOptions{.by = GroupBy::Thread});
  ASSERT_EQ(d.rows.size(), 2u);
  const DiffRow* worker = find(d, "work", "worker");
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->a.calls, 1000u);
  EXPECT_EQ(worker->b.calls, 900u);
  EXPECT_EQ(worker->shifts[0].verdict, ShiftVerdict::Slower);
  EXPECT_EQ(d.rows[0].thread, "worker");  // what changed first
  EXPECT_EQ(find(d, "work", "main")->shifts[0].verdict, ShiftVerdict::Same);
}

TEST(DiffModel, SameNameInTwoBinariesStaysApart) {
  const ReportModel a = model({{.name = "init", .latencies = calls(100, 1e6), .path = "/v1/app"},
                               {.name = "init", .latencies = calls(100, 9e6), .path = "/usr/lib/libfoo.so.1"}});
  const ReportModel b = model({{.name = "init", .latencies = calls(100, 1e6), .path = "/v2/app"},
                               {.name = "init", .latencies = calls(100, 9e6), .path = "/usr/lib/libfoo.so.1"}});
  const DiffModel d = diff_reports(a, b, DiffOptions{});
  ASSERT_EQ(d.rows.size(), 2u);
  ASSERT_NE(find(d, "init in app"), nullptr);
  ASSERT_NE(find(d, "init in libfoo.so.1"), nullptr);
  for (const DiffRow& r : d.rows) EXPECT_EQ(r.shifts[0].verdict, ShiftVerdict::Same) << r.function;
}

TEST(DiffModel, BinariesMatchByFileNameWithTheirBuildIds) {
  const ReportModel a = model({{.name = "f", .latencies = {1}, .path = "/v1/app", .build_id = "1111"},
                               {.name = "g", .latencies = {1}, .path = "/lib/libz.so.1", .build_id = "2222"}});
  const ReportModel b = model({{.name = "f", .latencies = {1}, .path = "/v2/app", .build_id = "3333"},
                               {.name = "g", .latencies = {1}, .path = "/lib/libz.so.1", .build_id = "2222"},
                               {.name = "h", .latencies = {1}, .path = "/other", .build_id = "4444"}});
  const DiffModel d = diff_reports(a, b, DiffOptions{});
  ASSERT_EQ(d.binaries.size(), 2u);  // "other" is in B only
  EXPECT_EQ(d.binaries[0].name, "app");
  EXPECT_EQ(d.binaries[0].path_a, "/v1/app");
  EXPECT_EQ(d.binaries[0].path_b, "/v2/app");
  EXPECT_FALSE(d.binaries[0].same_build());
  EXPECT_EQ(d.binaries[1].name, "libz.so.1");
  EXPECT_TRUE(d.binaries[1].same_build());

  // Renamed: the one binary left on each side is paired.
  const DiffModel renamed = diff_reports(model({{.name = "f", .latencies = {1}, .path = "/b/app-v1", .build_id = "1111"}}),
                                         model({{.name = "f", .latencies = {1}, .path = "/b/app-v2", .build_id = "3333"}}),
                                         DiffOptions{});
  ASSERT_EQ(renamed.binaries.size(), 1u);
  EXPECT_EQ(renamed.binaries[0].name, "app-v1 / app-v2");
  EXPECT_FALSE(renamed.binaries[0].same_build());
}

}  // namespace
}  // namespace uprof
