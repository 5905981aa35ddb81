// Losses never invent latencies: a recording on a ring too small for its workload loses
// events, and the report pairs no entry with a return across the gap, says how many
// calls the losses cut, and still accounts for every call the fixture made.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "support/test_support.h"
#include "uprof/store/data_file.h"
#include "uprof/util/thousands.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class Losses : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Losses, UPROF_ENGINES, test::engine_name);

uint64_t number(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  return std::stoull(s);
}

// The text report's "unmatched entries:" lines: reason -> count.
std::map<std::string, uint64_t> unmatched_reasons(const std::string& report) {
  std::map<std::string, uint64_t> out;
  static const std::regex line(R"(\n    ([a-z ]+): ([0-9,]+)(?=\n))");
  for (auto it = std::sregex_iterator(report.begin(), report.end(), line); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = number((*it)[2]);
  return out;
}

// One CSV row's columns by the header's names.
std::map<std::string, std::string> csv_row(const std::string& csv) {
  std::istringstream in(csv);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  std::map<std::string, std::string> out;
  std::istringstream h(header), r(row);
  for (std::string name, cell; std::getline(h, name, ',') && std::getline(r, cell, ',');) out[name] = cell;
  return out;
}

TEST_P(Losses, ATinyRingCutsCallsButInventsNoLatency) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string out = dir.file("u.data");
  constexpr uint64_t kThreads = 4, kCalls = 25'000, kTotal = kThreads * kCalls;
  // One page of ring: 4 threads calling add flat out fill it between two reads.
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-m", "1", "-o", out, "-e", "add", "--",
                fixture("x86_64", "workload"), "threads", std::to_string(kThreads), std::to_string(kCalls)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out, "calls " + std::to_string(kTotal) + "\n");
  auto rec = test::load_recording(out);
  ASSERT_TRUE(rec.trailer);
  ASSERT_GT(rec.trailer->lost, 0u) << "the ring kept up: no losses to test";

  // Each loss is in the file before anything newer than its gap's start: the pairer hears
  // of a gap before any event in it (the perf engine: engine/perf/ring_loss_watch.h).
  {
    auto file = DataFileReader::open(out);
    ASSERT_TRUE(file) << file.error().message;
    uint64_t newest = 0, late = 0;
    for (Event e; file->next(e); newest = std::max(newest, e.time)) late += e.kind == EventKind::Lost && e.time < newest;
    EXPECT_EQ(late, 0u);
  }

  // Every drop is in a Lost event of the file: the BPF engine marks each thread's
  // next record, and a loss the perf engine's LOST records did not report comes at the end.
  uint64_t in_markers = 0;
  for (const Event& e : rec.losses) in_markers += e.lost;
  if (GetParam() != "perf") EXPECT_EQ(in_markers, rec.trailer->lost);
  else EXPECT_GE(in_markers, rec.trailer->lost);

  // Per side, what the kernel counted and what the file holds.
  uint64_t entry_kernel = 0, entry_recorded = 0, return_kernel = 0, return_recorded = 0;
  for (std::size_t i = 0; i < rec.probes.size(); i++) {
    const ProbeCount& c = rec.trailer->counts[i];
    (rec.probes[i].kind == ProbeKind::Entry ? entry_kernel : return_kernel) += c.kernel;
    (rec.probes[i].kind == ProbeKind::Entry ? entry_recorded : return_recorded) += c.recorded;
  }
  EXPECT_EQ(entry_kernel, kTotal);
  EXPECT_EQ(return_kernel, kTotal);

  auto text = run({uprof_binary(), "report", out, "--hist", "none"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  auto csv = run({uprof_binary(), "report", out, "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  auto json = run({uprof_binary(), "report", out, "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto row = csv_row(csv.out);
  ASSERT_EQ(row["function"], "add") << csv.out;
  const uint64_t calls = number(row["calls"]), cut = number(row["cut_by_loss"]);

  // No latency longer than the recording (the issue saw 67.6 s in a 97 s one: entries
  // paired with returns seconds later, across the gap).
  auto file = DataFileReader::open(out);
  ASSERT_TRUE(file) << file.error().message;
  const uint64_t recording_ns = rec.trailer->end_monotonic_ns - file->meta().start_monotonic_ns;
  EXPECT_LE(number(row["max_ns"]), recording_ns);
  EXPECT_LE(number(row["total_ns"]), kThreads * recording_ns);
  EXPECT_GT(calls, 0u) << "nothing paired at all";

  // The report says how many calls the losses cut, in each format.
  const auto reasons = unmatched_reasons(text.out);
  const uint64_t cut_open = reasons.count("events lost") ? reasons.at("events lost") : 0;
  const uint64_t cut_returns = reasons.count("return after lost events") ? reasons.at("return after lost events") : 0;
  EXPECT_GT(cut, 0u);
  EXPECT_EQ(cut, cut_open + cut_returns) << text.out;
  EXPECT_NE(text.out.find("losses:   " + with_commas(cut) + " calls cut by lost events"), std::string::npos)
      << text.out;
  EXPECT_NE(json.out.find("\"cut_by_loss\":" + std::to_string(cut)), std::string::npos) << json.out;

  // Recorded + lost + cut make the fixture's count, on each side: every entry the kernel
  // counted was dropped, or paired, or is unmatched (cut, or for a reason of its own).
  uint64_t unmatched_entries = 0;
  for (const auto& [reason, n] : reasons)
    if (reason != "return without entry" && reason != "return after lost events") unmatched_entries += n;
  EXPECT_EQ(entry_recorded, calls + unmatched_entries) << text.out;
  EXPECT_EQ(calls + unmatched_entries + (entry_kernel - entry_recorded), kTotal) << text.out;
  const uint64_t without_entry = reasons.count("return without entry") ? reasons.at("return without entry") : 0;
  EXPECT_EQ(calls + cut_returns + without_entry + (return_kernel - return_recorded), kTotal) << text.out;
  std::cout << "[ measured ] " << GetParam() << ": " << kTotal << " calls; " << rec.trailer->lost << " events lost, "
            << calls << " calls paired, " << cut_open << " cut open, " << cut_returns << " returns after a loss\n";
}

}  // namespace
}  // namespace uprof
