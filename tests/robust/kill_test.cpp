// The perf engine killed (bpf_engine_test.cpp kills the BPF engine).
// uprof killed with SIGKILL while it records: it can clean nothing up. What the
// user checks: the traced program runs on and finishes with its own output, the
// data file reports what was recorded up to the kill, and the tracefs probes it
// left are removed by the next `uprof record`.
#include <sys/prctl.h>

#include <regex>

#include "robust_support.h"

namespace uprof::robust {
namespace {

using test::fixture;
using test::uprof_binary;

// The children of `pid` (its threads' children, from /proc).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> kids;
  std::istringstream in(slurp_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children"));
  for (pid_t k; in >> k;) kids.push_back(k);
  return kids;
}

// Makes this process the reaper of orphaned descendants while it lives, so that
// the workload of a killed uprof comes back to the test with its exit status.
struct SubreaperScope {
  SubreaperScope() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
  ~SubreaperScope() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
};

TEST(Sigkill, WorkloadRunsOnFileReportsNextRecordRemovesTheLeftovers) {
  UPROF_REQUIRE_UPROBES();
  SubreaperScope reaper;
  test::TempDir dir;
  std::string out = dir.file("u.data");
  // 40 calls of slow_add, 30 sleeping 10 ms and 10 sleeping 100 ms: about 1.3 s.
  Child rec({uprof_binary(), "record", "--engine", "perf", "-o", out, "-e", "slow_add %di", "--", fixture("x86_64", "workload"), "sleep",
             "10", "40"});
  pid_t workload = -1;
  for (int i = 0; i < 300 && workload < 0; i++) {
    auto kids = children_of(rec.pid());
    if (!kids.empty()) workload = kids.front();
    else std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(workload, 0);
  // Past the workload's first calls and uprof's first flushes (every 100 ms).
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_FALSE(tracefs_lines_of(rec.pid()).empty()) << "uprof's probes should be in tracefs while it records";
  ::kill(rec.pid(), SIGKILL);
  EXPECT_EQ(rec.wait(), 128 + SIGKILL);

  // The workload was not killed with uprof: it finishes, with its own output and
  // status (it writes to the stdout uprof gave it).
  int st = 0;
  pid_t got = -1;
  for (int i = 0; i < 1000; i++) {  // up to 10 s
    got = ::waitpid(workload, &st, WNOHANG);
    if (got != 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(got, workload) << "the workload did not finish within 10 s of uprof's death";
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  EXPECT_EQ(rec.out(), "calls 40\n");

  // The file holds the calls up to the kill, and says it was cut short.
  auto rep = test::run({uprof_binary(), "report", out, "--hist", "none"});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.out.find("cut short"), std::string::npos) << rep.out;
  EXPECT_NE(rep.err.find("cut short at byte"), std::string::npos) << rep.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(rep.out, m, std::regex(R"(\nslow_add +(\d+) )"))) << rep.out;
  int calls = std::stoi(m[1]);
  EXPECT_GE(calls, 5);  // 600 ms: about 15 calls done
  EXPECT_LT(calls, 40);
  Loaded d = load_data(out);
  EXPECT_FALSE(d.trailer);
  for (std::size_t i = 0; i < d.samples.size(); i++) {
    if (d.probes[d.samples[i].probe].kind != ProbeKind::Entry) continue;
    EXPECT_LT(d.samples[i].values[0], 40u);  // the arguments are the workload's: 0, 1, 2...
  }

  // SIGKILL left uprof's tracefs group behind; the next record removes it.
  // (Still there unless a uprof of a test running beside this one removed them.)
  EXPECT_LE(tracefs_lines_of(rec.pid()).size(), 2u);  // slow_add's entry and return
  auto next = run_child({uprof_binary(), "record", "--engine", "perf", "-o", dir.file("v.data"), "-e", "add", "--",
                         fixture("x86_64", "workload"), "calls", "10"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  // It says so, unless a uprof of a test running beside this one got there first.
  bool said = next.err.find("uprof: removed the tracefs probes of uprof_" + std::to_string(rec.pid()) +
                            ", left by a uprof that is gone (killed?)\n") != std::string::npos;
  std::cout << "[ note ] the next record " << (said ? "reported" : "did not need to report") << " the removal\n";
  EXPECT_TRUE(tracefs_lines_of(rec.pid()).empty());
  EXPECT_TRUE(tracefs_lines_of(next.pid).empty());
}

// `uprof probe --cleanup` does the same without recording anything.
TEST(Sigkill, ProbeCleanupRemovesTheLeftovers) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  std::string pidfile = dir.file("pid");
  Child rec({uprof_binary(), "record", "--engine", "perf", "-o", dir.file("u.data"), "-e", "add", "--", fixture("x86_64", "workload"),
             "loop", pidfile});
  ASSERT_TRUE(test::wait_for_file(pidfile));
  ::kill(rec.pid(), SIGKILL);
  EXPECT_EQ(rec.wait(), 128 + SIGKILL);
  pid_t workload = std::stoi(slurp_file(pidfile));
  ::kill(workload, SIGTERM);  // orphaned: init reaps it
  auto c = test::run({uprof_binary(), "probe", "--cleanup"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_TRUE(c.err.empty()) << c.err;
  EXPECT_FALSE(c.out.empty());  // what it removed, or that there was nothing (a parallel test's uprof was first)
  EXPECT_TRUE(tracefs_lines_of(rec.pid()).empty());
  auto again = test::run({uprof_binary(), "probe", "--cleanup", "bin"});
  EXPECT_EQ(again.exit_code, 2);
}

}  // namespace
}  // namespace uprof::robust
