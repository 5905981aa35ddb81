// `uprof report` and `uprof diff` with callers (record -g) and on/off-CPU time (record
// --off-cpu), end to end through the binary, on data files whose frames name the real
// why_slow fixture (tests/analyse/why_slow_builders.h): the formats a user asks for,
// and one clear line with a non-zero exit for what the recording cannot give.
#include <gtest/gtest.h>

#include <fstream>

#include "analyse/why_slow_builders.h"
#include "support/test_support.h"

namespace uprof {
namespace {

using test::run;
using test::uprof_binary;

TEST(ReportCallers, FoldedStacksByWeight) {
  const auto w = test::WhySlow::load();
  const std::string data = test::why_slow_recording(w, "cli_folded.data");
  auto r = run({uprof_binary(), "report", data, "--format", "folded"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "main;sleeper;work 40000000\nmain;spinner;work 30000000\n[no stack];work 500000\n");
  auto calls = run({uprof_binary(), "report", data, "--format", "folded", "--weight", "calls"});
  ASSERT_EQ(calls.exit_code, 0) << calls.err;
  EXPECT_EQ(calls.out, "main;sleeper;work 20\nmain;spinner;work 30\n[no stack];work 1\n");
  auto bad = run({uprof_binary(), "report", data, "--format", "folded", "--weight", "cpu"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "uprof report: --weight takes calls, latency, on-cpu or off-cpu, not 'cpu' (see 'uprof report --help')\n");
}

TEST(ReportCallers, ByCallerRows) {
  const auto w = test::WhySlow::load();
  const std::string data = test::why_slow_recording(w, "cli_by.data");
  for (const char* flag : {"--by-caller", "--by=caller"}) {
    auto r = run({uprof_binary(), "report", data, flag, "--format", "csv"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("work,work [from spinner],0,0,30,"), std::string::npos) << flag << "\n" << r.out;
    EXPECT_NE(r.out.find("work,work [from sleeper],0,0,20,"), std::string::npos) << flag << "\n" << r.out;
  }
}

TEST(ReportCallers, JsonFollowsItsSchema) {
  const auto w = test::WhySlow::load();
  const std::string data = test::why_slow_recording(w, "cli_json.data");
  test::TempDir dir;
  for (const char* by : {"--by-thread", "--by-caller"}) {
    for (bool split : {false, true}) {
      std::vector<std::string> argv{uprof_binary(), "report", data, "--format", "json", "-o", dir.file("r.json")};
      if (split) argv.push_back(by);
      auto r = run(argv);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      auto v = test::run_shell("/usr/bin/python3 " + std::string(UPROF_SOURCE_DIR) + "/scripts/validate_json.py " +
                               std::string(UPROF_SOURCE_DIR) + "/docs/report.schema.json < " + dir.file("r.json"));
      EXPECT_EQ(v.out, "valid\n") << by << " " << split << ": " << v.out << v.err;
    }
  }
  auto d = test::run_shell("'" + uprof_binary() + "' diff --by-caller --format json " + data + " " + data + " | /usr/bin/python3 " +
                           std::string(UPROF_SOURCE_DIR) + "/scripts/validate_json.py " + std::string(UPROF_SOURCE_DIR) +
                           "/docs/diff.schema.json");
  EXPECT_EQ(d.out, "valid\n") << d.out << d.err;
}

TEST(ReportCallers, PprofGoesToAFile) {
  const auto w = test::WhySlow::load();
  const std::string data = test::why_slow_recording(w, "cli_pprof.data");
  auto none = run({uprof_binary(), "report", data, "--format", "pprof"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--format pprof writes to a file: give -o FILE"), std::string::npos) << none.err;
  test::TempDir dir;
  auto r = run({uprof_binary(), "report", data, "--format", "pprof", "-o", dir.file("p.pb.gz")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir.file("p.pb.gz"), std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  EXPECT_EQ(magic[0], 0x1f);  // gzip
  EXPECT_EQ(magic[1], 0x8b);
}

TEST(ReportCallers, WhatTheRecordingLacksIsOneLine) {
  const std::string data = test::write_data_file(
      "cli_nostack.data", RecordingMeta{},
      {test::probe(0, ProbeKind::Entry, "work", 0x1000), test::probe(1, ProbeKind::Return, "work", 0x1000)},
      {test::sample(0, 7, 100), test::sample(1, 7, 200)});
  auto folded = run({uprof_binary(), "report", data, "--format", "folded"});
  EXPECT_EQ(folded.exit_code, 1);
  EXPECT_EQ(folded.err, "uprof: report: --format folded: " + data + " holds no call stacks (record it with -g)\n");
  auto by = run({uprof_binary(), "report", data, "--by-caller"});
  EXPECT_EQ(by.exit_code, 1);
  EXPECT_EQ(by.err, "uprof: report: " + data + " holds no call stacks to tell callers apart (record it with -g)\n");
  auto weight = run({uprof_binary(), "report", data, "--weight", "calls"});
  EXPECT_EQ(weight.exit_code, 2);
}

TEST(DiffCallers, TheSlowerCallerIsNamed) {
  const auto w = test::WhySlow::load();
  const std::string a = test::why_slow_recording(w, "cli_diff_a.data");
  const std::string b = test::why_slow_recording(w, "cli_diff_b.data", 3'000'000);
  auto r = run({uprof_binary(), "diff", a, b, "--by-caller"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The slower row first: sleeper's calls went from 2 ms to 3 ms.
  const auto table = r.out.find("FUNCTION");
  ASSERT_NE(table, std::string::npos) << r.out;
  const auto first = r.out.find('\n', table) + 1;
  EXPECT_EQ(r.out.compare(first, 19, "work [from sleeper]"), 0) << r.out;
  EXPECT_NE(r.out.find("x1.50 slower", first), std::string::npos) << r.out;
}

}  // namespace
}  // namespace uprof
