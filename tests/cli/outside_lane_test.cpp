// A recording stays in its own lane: a process uprof does not record keeps its return
// addresses (uprobe sessions decline the return outside the recording), and with -p
// the breakpoints go only into that process (the multi-uprobe link's pid filter).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

// The engines and paths that keep a recording in its lane. The BPF engine on uprobe-PMU
// events cannot (its events are for every process), and must not run beside these: its
// return probes on qsort would abort their outside process (EventsPathSaysSo below
// probes another function).
class OutsideLane : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, OutsideLane, ::testing::Values(std::string("bpf"), std::string("perf")),
                         test::engine_name);

// Runs `argv` in the background with stdout and stderr into `log`.
pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_P(OutsideLane, AProcessOutsideTheRecordingThrowsThroughAProbedLibcFunction) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string prog = fixture("x86_64", "qsort_throw");
  // Alone, every sort's exception reaches main.
  auto alone = run({prog, "1", "0.2"});
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  // The recording: qsort probed at entry and, with --unsafe-returns, by a return probe in
  // libc (by default qsort gets an entry probe only in a process with the C++ runtime:
  // its entry is its exit), the workload sorting for 4 s without throwing; it creates
  // `ready` at its start, when the probes are live.
  const std::string ready = dir.file("ready"), log = dir.file("rec.log");
  pid_t rec = spawn_logged({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                            test::attach_of(GetParam()), "--no-args", "--unsafe-returns", "-o", dir.file("q.data"), "-e",
                            "libc:qsort", "--", prog, "0", "4", ready},
                           log);
  ASSERT_TRUE(test::wait_for_file(ready, 60)) << slurp(log);
  // Beside it, a process uprof does not follow throws through qsort for 1 s.
  auto outside = run({prog, "1", "1"});
  const int rec_status = wait_exit(rec);
  const std::string rec_log = slurp(log);
  ASSERT_EQ(rec_status, 0) << rec_log;
  EXPECT_EQ(outside.exit_code, 0) << outside.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(outside.out, m, std::regex("sorts (\\d+) caught (\\d+)"))) << outside.out;
  EXPECT_EQ(m[1], m[2]);
  EXPECT_GT(std::stol(m[1]), 0);
  // The workload's own sorts were recorded, every one paired.
  auto report = run({uprof_binary(), "report", "-i", dir.file("q.data"), "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("\"qsort\""), std::string::npos);
}

// uprof keeps out of its own recording: a spec on a library uprof maps itself makes it
// run on a private copy (another inode, no breakpoints), which it has unlinked.
TEST(OutsideLane, UprofRunsOnAPrivateCopyOfALibraryItProbes) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string log = dir.file("rec.log"), ready = dir.file("ready");
  pid_t rec = spawn_logged({uprof_binary(), "record", "--no-args", "-o", dir.file("l.data"), "-e", "libc:labs", "--",
                            fixture("x86_64", "qsort_throw"), "0", "1", ready},
                           log);
  ASSERT_TRUE(test::wait_for_file(ready, 60)) << slurp(log);
  std::string libc_map;
  std::ifstream maps("/proc/" + std::to_string(rec) + "/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("/libc.so.6") != std::string::npos) libc_map = line;
  ASSERT_EQ(wait_exit(rec), 0) << slurp(log);
  EXPECT_NE(libc_map.find("/uprof-libs-"), std::string::npos) << libc_map;
  EXPECT_NE(libc_map.find("(deleted)"), std::string::npos) << libc_map;
}

// One uprobe-PMU event for every process: the kernel replaces the return address in
// each process that calls the function, and record says so before the run.
TEST(OutsideLane, EventsPathSaysReturnsAreHijackedEverywhere) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  auto r = run({uprof_binary(), "record", "--engine", "bpf", "--attach", "events", "--no-args", "-o",
                dir.file("e.data"), "-e", "libc:labs", "--", "/bin/true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("their returns go through the kernel's return trampoline too (uprobe-PMU events)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("bpf engine (uprobe-PMU events)"), std::string::npos) << r.err;
}

// The first byte of `path`'s code at file offset `offset` in process `pid`, read
// through /proc/PID/mem: 0xcc where the kernel put a breakpoint.
int code_byte(pid_t pid, const std::string& path, uint64_t offset) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const std::string real = std::filesystem::canonical(path).string();
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0, off = 0;
    char perms[8] = {};
    char file[4096] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi, perms, &off, file) != 5) continue;
    if (real != file || perms[2] != 'x' || offset < off || offset >= off + (hi - lo)) continue;
    int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY);
    unsigned char b = 0;
    const ssize_t n = ::pread(fd, &b, 1, static_cast<off_t>(lo + (offset - off)));
    ::close(fd);
    return n == 1 ? b : -1;
  }
  return -1;
}

// add's file offset in the workload fixture, as `uprof probe` finds it.
uint64_t add_offset(const std::string& workload) {
  auto r = run({uprof_binary(), "probe", workload + ":add"});
  std::smatch m;
  if (!std::regex_search(r.out, m, std::regex(" add +\\S+ +(0x[0-9a-f]+) "))) return 0;
  return std::stoull(m[1], nullptr, 16);
}

// The pid filter is the multi-uprobe links' (the BPF engine's default path).
TEST(OutsideLane, DashPPutsBreakpointsOnlyIntoThatProcess) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string workload = fixture("x86_64", "workload");
  const uint64_t off = add_offset(workload);
  ASSERT_NE(off, 0u);
  pid_t a = spawn_logged({workload, "loop", dir.file("a.pid")}, dir.file("a.log"));
  pid_t b = spawn_logged({workload, "loop", dir.file("b.pid")}, dir.file("b.log"));
  ASSERT_TRUE(test::wait_for_file(dir.file("a.pid"), 30) && test::wait_for_file(dir.file("b.pid"), 30));
  const int original = code_byte(b, workload, off);
  ASSERT_NE(original, -1);
  ASSERT_NE(original, 0xcc);
  const std::string log = dir.file("rec.log");
  pid_t rec = spawn_logged({uprof_binary(), "record", "--engine", "bpf", "--attach", "links", "-p", std::to_string(a),
                            "--duration", "3", "-o", dir.file("p.data"), "-e", "add"},
                           log);
  // Once A's add starts with a breakpoint, the probes are on: B's must not.
  bool armed = false;
  for (int i = 0; i < 600 && !armed; i++) {
    armed = code_byte(a, workload, off) == 0xcc;
    if (!armed) usleep(10000);
  }
  const int in_b = code_byte(b, workload, off);
  const int rec_status = wait_exit(rec);
  kill(a, SIGTERM);
  kill(b, SIGTERM);
  wait_exit(a);
  wait_exit(b);
  ASSERT_EQ(rec_status, 0) << slurp(log);
  ASSERT_TRUE(armed) << "no breakpoint ever appeared in process " << a << "\n" << slurp(log);
  EXPECT_EQ(in_b, original) << "process " << b << " got a breakpoint too";
  EXPECT_NE(slurp(log).find("(multi-uprobe links, sessions, pid " + std::to_string(a) + " only)"), std::string::npos)
      << slurp(log);
}

}  // namespace
}  // namespace uprof
