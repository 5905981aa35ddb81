// `uprof record --interval SEC`: blocks of per-function statistics while recording,
// on both engines; what the blocks count adds up to what the data file holds.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class Interval : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Interval, UPROF_ENGINES, test::engine_name);

struct Blocks {
  int count = 0;            // "uprof: interval N (...)" lines, N = 1, 2, ... in order
  uint64_t calls = 0;       // slow_add's CALLS, all blocks
  uint64_t hist_calls = 0;  // what its histograms count, all blocks
};

uint64_t number(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  return std::stoull(s);
}

Blocks parse(const std::string& err, const std::string& function = "slow_add") {
  Blocks b;
  const std::regex header(R"(^uprof: interval ([0-9]+) \(([0-9.]+)-([0-9.]+) s, [0-9:]+ UTC\): ([0-9,]+) events, ([0-9,]+) lost)");
  const std::regex row("^  " + function + " +([0-9,]+) ");
  const std::regex bucket(R"(^    \[[^)]*\) +([0-9]+) \|)");
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, header)) {
      EXPECT_EQ(std::stoi(m[1]), b.count + 1) << l;
      EXPECT_LE(std::stod(m[2]), std::stod(m[3])) << l;
      ++b.count;
    } else if (std::regex_search(l, m, row)) {
      b.calls += number(m[1]);
    } else if (std::regex_search(l, m, bucket)) {
      b.hist_calls += number(m[1]);
    }
  }
  return b;
}

// 100 calls of slow_add over ~0.7 s (75 of 2 ms, 25 of 20 ms), a block every 0.1 s:
// several blocks, whose calls add up to the file's 100, as report counts them.
TEST_P(Interval, BlocksAddUpToTheFilesTotals) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "--interval", "0.1", "--interval-hist", "-o",
                dir.file("i.data"), "-e", "slow_add", "--", fixture("x86_64", "workload"), "sleep", "2", "100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "calls 100\n");
  const Blocks b = parse(r.err);
  EXPECT_GE(b.count, 4) << r.err;
  EXPECT_EQ(b.calls, 100u) << r.err;
  EXPECT_EQ(b.hist_calls, 100u) << r.err;
  auto rep = run({uprof_binary(), "report", "--format", "csv", dir.file("i.data")});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.out.find("\nslow_add,slow_add,0,0,100,"), std::string::npos) << rep.out;
}

// -p and --duration: a process that outlives the recording (add every 100 us); the
// blocks stop with the recording, and add up to the file's calls.
TEST_P(Interval, WorksWithPidAndDuration) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string pidfile = dir.file("pid");
  pid_t child = fork();
  if (child == 0) {
    execl(fixture("x86_64", "workload").c_str(), "workload", "loop", pidfile.c_str(), (char*)nullptr);
    _exit(127);
  }
  for (int i = 0; i < 200 && !std::filesystem::exists(pidfile); i++) usleep(10000);
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "--interval", "0.2", "--duration", "1", "-o",
                dir.file("p.data"), "-p", std::to_string(child), "-e", "add"});
  kill(child, SIGTERM);
  waitpid(child, nullptr, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Blocks b = parse(r.err, "add");
  EXPECT_GE(b.count, 4) << r.err;
  EXPECT_LE(b.count, 12) << r.err;  // 5 in 1 s, and the last drain's: generous, for a loaded machine
  EXPECT_GT(b.calls, 100u) << r.err;
  auto rep = run({uprof_binary(), "report", "--format", "csv", dir.file("p.data")});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.out.find("\nadd,add,0,0," + std::to_string(b.calls) + ","), std::string::npos) << rep.out << r.err;
}

TEST(IntervalOptions, BadValuesAreRefused) {
  auto r = run({uprof_binary(), "record", "--interval", "0", "-e", "add", "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--interval takes 0.01 to 86400 seconds"), std::string::npos) << r.err;
  auto h = run({uprof_binary(), "record", "--interval-hist", "-e", "add", "--", "/bin/true"});
  EXPECT_EQ(h.exit_code, 2);
  EXPECT_NE(h.err.find("--interval-hist goes with --interval SEC"), std::string::npos) << h.err;
}

}  // namespace
}  // namespace uprof
