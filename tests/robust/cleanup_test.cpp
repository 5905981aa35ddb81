// The perf engine's tracefs probes (bpf_engine_test.cpp checks the BPF engine's objects).
// Nothing of uprof stays installed in tracefs after it exits, however it exits:
// normally, on an error after its probes were added, on Ctrl-C, and (through the
// next record) after a SIGKILL (kill_test.cpp). Stale groups still in use are
// left in place with a message that says how to remove them.
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "robust_support.h"
#include "uprof/attach/stale_uprobes.h"
#include "uprof/attach/tracefs_uprobe.h"
#include "uprof/util/unique_fd.h"

namespace uprof::robust {
namespace {

using test::fixture;
using test::uprof_binary;

TEST(NothingLeftInstalled, NormalExit) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  auto r = run_child({uprof_binary(), "record", "--engine", "perf", "-o", dir.file("u.data"), "-e", "add", "-e", "slow_add", "--",
                      fixture("x86_64", "workload"), "calls", "100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(tracefs_lines_of(r.pid).empty());
}

TEST(NothingLeftInstalled, SpecErrorAfterAGoodSpec) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  auto r = run_child({uprof_binary(), "record", "--engine", "perf", "-o", dir.file("u.data"), "-e", "add", "-e", "no_such_function",
                      "--", fixture("x86_64", "workload"), "calls", "100"});
  EXPECT_EQ(r.exit_code, 1);
  auto lines = error_lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find("no symbol 'no_such_function'"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "the workload ran: " << r.out;
  EXPECT_TRUE(tracefs_lines_of(r.pid).empty());
}

// The probes are in tracefs when the open-file limit stops uprof (it is checked
// after they are defined, before the perf events are opened): they go with it.
TEST(NothingLeftInstalled, ErrorAfterProbesWereAdded) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  Child::Options low_nofile{.in_child = [] {
    rlimit rl{.rlim_cur = 40, .rlim_max = 40};
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }};
  auto r = run_child({uprof_binary(), "record", "--engine", "perf", "-o", dir.file("u.data"), "-e", "add", "-e", "slow_add", "--",
                      fixture("x86_64", "workload"), "calls", "100"},
                     low_nofile);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("open files"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "the workload ran: " << r.out;
  EXPECT_TRUE(tracefs_lines_of(r.pid).empty());
}

TEST(NothingLeftInstalled, CtrlC) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  std::string pidfile = dir.file("pid");
  Child rec({uprof_binary(), "record", "--engine", "perf", "-o", dir.file("u.data"), "-e", "add", "--", fixture("x86_64", "workload"),
             "loop", pidfile});
  ASSERT_TRUE(test::wait_for_file(pidfile));
  EXPECT_EQ(tracefs_lines_of(rec.pid()).size(), 2u) << "add's entry and return, while recording";
  ::kill(rec.pid(), SIGINT);
  auto st = rec.wait_for(std::chrono::seconds(10));
  ASSERT_TRUE(st) << "uprof did not stop on SIGINT";
  EXPECT_EQ(*st, 0) << rec.err();
  EXPECT_TRUE(tracefs_lines_of(rec.pid()).empty());
}

// A group uprof_<dead pid> whose probe someone still has open (EBUSY) stays, with
// a message; one that nobody uses goes. Both are made here by hand, as a killed
// uprof would have left them.
TEST(StaleGroups, BusyProbeIsLeftWithAMessageIdleOneIsRemoved) {
  UPROF_REQUIRE_UPROBES();
  auto tracefs = find_tracefs();
  ASSERT_TRUE(tracefs) << tracefs.error().message;
  pid_t busy_pid = dead_pid(), idle_pid = dead_pid();
  std::string busy_group = "uprof_" + std::to_string(busy_pid), idle_group = "uprof_" + std::to_string(idle_pid);
  std::string bin = fixture("x86_64", "workload");
  auto busy = TracefsUprobe::create(*tracefs, {.group = busy_group, .name = "e0", .path = bin, .offset = 0x1000});
  ASSERT_TRUE(busy) << busy.error().message;
  // Defined with no owner to remove it, as a killed uprof leaves it.
  {
    UniqueFd events(::open((*tracefs + "/uprobe_events").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
    std::string def = "p:" + idle_group + "/e0 " + bin + ":0x1000\n";  // (an ofstream seeks, which tracefs refuses)
    ASSERT_EQ(::write(events.get(), def.data(), def.size()), static_cast<ssize_t>(def.size())) << std::strerror(errno);
  }
  ASSERT_EQ(tracefs_lines_of(idle_pid).size(), 1u);
  // An open perf event on the busy probe (on this test process; it never runs
  // offset 0x1000 of the fixture, so no sample comes).
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_TRACEPOINT;
  a.config = busy->tracepoint_id();
  a.disabled = 1;
  UniqueFd fd(static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC)));
  ASSERT_TRUE(fd.valid()) << std::strerror(errno);

  test::TempDir dir;
  auto r = run_child({uprof_binary(), "record", "--engine", "perf", "-o", dir.file("u.data"), "-e", "add", "--", bin, "calls", "10"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // (The idle group's removal is announced by whichever uprof gets there first:
  // another test's may run at the same time. Gone it must be.)
  EXPECT_NE(r.err.find("uprof: the stale tracefs probe " + busy_group + "/e0 is still in use (EBUSY): left in place; "
                       "once its user has closed it, remove it with: echo '-:" + busy_group + "/e0' >> " +
                       *tracefs + "/uprobe_events"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(tracefs_lines_of(idle_pid).empty());
  EXPECT_EQ(tracefs_lines_of(busy_pid).size(), 1u);
  fd.reset();
  ASSERT_TRUE(busy->remove());  // the test's own leftover
  EXPECT_TRUE(tracefs_lines_of(busy_pid).empty());
}

}  // namespace
}  // namespace uprof::robust
