// `uprof record` end to end: real uprobes on the workload fixture, checked
// against what the fixture did and against the kernel's own hit counts.
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "support/test_support.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

using Recording = test::LoadedRecording;

// Every test runs on each capture engine.
class Record : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Record, UPROF_ENGINES, test::engine_name);
Recording load(const std::string& path) { return test::load_recording(path); }

// Entry and return counts per probe kind.
std::pair<uint64_t, uint64_t> entries_returns(const Recording& r) {
  uint64_t en = 0, re = 0;
  for (const auto& s : r.samples) (r.probes[s.probe].kind == ProbeKind::Entry ? en : re)++;
  return {en, re};
}

void expect_exact(const Recording& r, uint64_t calls) {
  auto [en, re] = entries_returns(r);
  EXPECT_EQ(en, calls);
  EXPECT_EQ(re, calls);
  ASSERT_TRUE(r.trailer);
  EXPECT_EQ(r.trailer->lost, 0u);
  for (const auto& c : r.trailer->counts) EXPECT_EQ(c.recorded, c.kernel);
  EXPECT_TRUE(r.problems.empty());
}

TEST_P(Record, ExactCountsAndValuesMainThread) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  std::string out = dir.file("u.data");
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", out, "-e", "add %di %si $retval", "--", fixture("x86_64", "workload"),
                "calls", "20000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "calls 20000\n");
  EXPECT_NE(r.err.find("uprof: 40,000 events recorded, 0 lost (kernel counted 40,000); " + out), std::string::npos)
      << r.err;
  auto rec = load(out);
  expect_exact(rec, 20000);
  // In order: entry i carries (i, 10 i); its return carries i + 10 i.
  uint64_t i = 0;
  uint64_t last_time = 0;
  for (std::size_t k = 0; k + 1 < rec.samples.size(); k += 2, i++) {
    const Event& en = rec.samples[k];
    const Event& re = rec.samples[k + 1];
    ASSERT_EQ(rec.probes[en.probe].kind, ProbeKind::Entry);
    ASSERT_EQ(rec.probes[re.probe].kind, ProbeKind::Return);
    EXPECT_EQ(static_cast<uint32_t>(en.values[0]), i);
    EXPECT_EQ(static_cast<uint32_t>(en.values[1]), 10 * i);
    EXPECT_EQ(static_cast<uint32_t>(re.values[0]), 11 * i);
    EXPECT_LE(last_time, en.time);
    EXPECT_LE(en.time, re.time);
    last_time = re.time;
    if (HasFailure()) break;
  }
  EXPECT_EQ(i, 20000u);
}

TEST_P(Record, FourThreadsEveryCallOncePerThreadInOrder) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  std::string out = dir.file("u.data");
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", out, "-e", "add %di %si", "--", fixture("x86_64", "workload"),
                "threads", "4", "5000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = load(out);
  expect_exact(rec, 20000);
  // Per thread, the entries count 0, 1, 2, ... with b = 10 a.
  std::map<uint32_t, uint32_t> next;
  for (const auto& s : rec.samples) {
    if (rec.probes[s.probe].kind != ProbeKind::Entry) continue;
    uint32_t a = static_cast<uint32_t>(s.values[0]);
    EXPECT_EQ(a, next[s.tid]) << "tid " << s.tid;
    EXPECT_EQ(static_cast<uint32_t>(s.values[1]), 10 * a);
    next[s.tid] = a + 1;
    if (HasFailure()) break;
  }
  EXPECT_EQ(next.size(), 4u);
  for (auto& [tid, n] : next) EXPECT_EQ(n, 5000u) << tid;
}

TEST_P(Record, ForkedAndExecdChildrenAreFollowed) {
  UPROF_REQUIRE_UPROBES();
  for (std::string mode : {"fork", "exec"}) {
    test::TempDir dir;
    std::string out = dir.file("u.data");
    auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", out, "-e", "add", "--", fixture("x86_64", "workload"), mode, "3000"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto rec = load(out);
    expect_exact(rec, 6000);
    std::set<uint32_t> pids;
    for (const auto& s : rec.samples) pids.insert(s.pid);
    EXPECT_EQ(pids.size(), 2u) << mode;
  }
}

TEST_P(Record, ExitStatusIsTheWorkloads) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("u.data"), "-e", "add", "--", fixture("x86_64", "workload"),
                "exit", "42"});
  EXPECT_EQ(r.exit_code, 42) << r.err;
  expect_exact(load(dir.file("u.data")), 1);
  auto missing = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("v.data"), "-e", "add", "--", "/nonexistent/prog"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_EQ(missing.err, "uprof: workload: /nonexistent/prog: No such file or directory\n");
}

TEST_P(Record, LibraryAndDlopenedLibrary) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  // uselib links libfx.so.1; the spec names the library by its short name.
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("a.data"), "-e", "libfx:fx_lib_add %di %si $retval", "--",
                fixture("x86_64", "uselib"), "100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // fx_lib_twice calls fx_lib_add too: 100 direct + 100 through twice.
  expect_exact(load(dir.file("a.data")), 200);
  // The workload dlopens the library; the probe names it by path.
  std::string lib = fixture("x86_64", "libfx.so.1");
  auto d = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("b.data"), "-e", lib + ":fx_lib_add", "--",
                fixture("x86_64", "workload"), "dlopen", lib, "700"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  expect_exact(load(dir.file("b.data")), 700);
}

TEST_P(Record, AttachToRunningProcess) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  std::string pidfile = dir.file("pid");
  pid_t child = fork();
  if (child == 0) {
    execl(fixture("x86_64", "workload").c_str(), "workload", "loop", pidfile.c_str(), (char*)nullptr);
    _exit(127);
  }
  for (int i = 0; i < 200 && !std::filesystem::exists(pidfile); i++) usleep(10000);
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("u.data"), "-e", "add %di %si", "-p",
                std::to_string(child), "--duration", "1"});
  kill(child, SIGTERM);
  waitpid(child, nullptr, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = load(dir.file("u.data"));
  auto [en, re] = entries_returns(rec);
  EXPECT_GT(en, 100u);  // ~1 s of calls every 100 us
  EXPECT_LE(en > re ? en - re : re - en, 1u);  // a call may straddle the start or the end
  ASSERT_TRUE(rec.trailer);
  for (const auto& c : rec.trailer->counts) EXPECT_EQ(c.recorded, c.kernel);
  // Consecutive entries count up by one.
  std::optional<uint32_t> prev;
  for (const auto& s : rec.samples) {
    if (rec.probes[s.probe].kind != ProbeKind::Entry) continue;
    uint32_t a = static_cast<uint32_t>(s.values[0]);
    if (prev) {
      EXPECT_EQ(a, *prev + 1);
    }
    EXPECT_EQ(static_cast<uint32_t>(s.values[1]), 10 * a);
    prev = a;
    if (HasFailure()) break;
  }
}

TEST_P(Record, SystemWideSeesEveryProcessRunningTheCode) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  // A private copy (its own inode): other tests running the fixture at the same
  // time must not show up in a system-wide recording.
  std::string bin = dir.file("workload");
  std::filesystem::copy_file(fixture("x86_64", "workload"), bin);
  // -a with a command: every process on the machine, while the command runs. The
  // command starts two unrelated workload processes; both are seen.
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-a", "-o", dir.file("u.data"), "-e", bin + ":add", "--", "/bin/sh", "-c",
                bin + " calls 300 && " + bin + " calls 200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = load(dir.file("u.data"));
  expect_exact(rec, 500);
  std::map<uint32_t, int> per_pid;
  for (const auto& s : rec.samples)
    if (rec.probes[s.probe].kind == ProbeKind::Entry) per_pid[s.pid]++;
  ASSERT_EQ(per_pid.size(), 2u);
  std::multiset<int> counts;
  for (auto& [p, n] : per_pid) counts.insert(n);
  EXPECT_EQ(counts, (std::multiset<int>{200, 300}));
}

// -a on a function uprof itself calls (libc's malloc): uprof's own calls are not
// followed, so draining the records makes no new ones (the BPF engine's drain once
// never ended, and uprof ran out of memory). The libc is a private copy (its own
// inode) that uprof and the workload load through LD_LIBRARY_PATH: every other
// process on the machine (a compiler, another test) calls the system's malloc, which
// this probe does not see, so the count does not depend on what else runs. Bounded,
// so a regression fails fast: a watchdog reads uprof's resident size every 50 ms and
// kills it above 2 GiB or after 60 s (not `ulimit -v`, which the sanitized build's
// shadow-memory reservation cannot live under).
TEST_P(Record, SystemWideOnAFunctionUprofCallsTooEnds) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  std::filesystem::create_directory(dir.file("lib"));
  std::filesystem::copy_file("/lib/x86_64-linux-gnu/libc.so.6", dir.file("lib/libc.so.6"));
  const std::string cmd = "LD_LIBRARY_PATH=" + dir.file("lib") + " " + uprof_binary() + " record --attach " + test::attach_of(GetParam()) + " --engine " +
                          test::engine_of(GetParam()) + " -a --entry-only -o " + dir.file("m.data") + " -e " + dir.file("lib/libc.so.6") +
                          ":malloc -- /bin/sh -c 'ls / >/dev/null; ls /usr >/dev/null'";
  // setsid: uprof and the workload are a process group of their own, killed whole.
  auto r = test::run_shell("setsid env " + cmd +
                           " & p=$!; peak=0; end=$(($(date +%s) + 60))\n"
                           "while :; do\n"
                           "  st=$(awk '/^State/ {print $2}' /proc/$p/status 2>/dev/null); [ \"${st:-Z}\" = Z ] && break\n"
                           "  kb=$(awk '/^VmRSS/ {print $2}' /proc/$p/status 2>/dev/null); kb=${kb:-0}\n"
                           "  [ \"$kb\" -gt \"$peak\" ] && peak=$kb\n"
                           "  [ \"$kb\" -gt 2097152 ] && { echo \"uprof grew to $kb kB: killed\" >&2; kill -9 -$p; }\n"
                           "  [ $(date +%s) -ge $end ] && { echo 'uprof ran 60 s: killed' >&2; kill -9 -$p; }\n"
                           "  sleep 0.05\n"
                           "done\n"
                           "wait $p; rc=$?; echo \"uprof $p peak $peak kB\"; exit $rc");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto rec = load(dir.file("m.data"));
  ASSERT_TRUE(rec.trailer);
  EXPECT_GT(rec.samples.size(), 0u);
  EXPECT_EQ(rec.trailer->lost, 0u);
  // uprof's own mallocs are not among them.
  const uint32_t self = static_cast<uint32_t>(std::stoul(r.out.substr(r.out.find("uprof ") + 6)));
  for (const Event& e : rec.samples) ASSERT_NE(e.pid, self);
}

// -p of a process in another mount namespace, where a bind mount hides a different
// copy of the program at the same path: uprof must probe the copy the process runs,
// not the file that path names in uprof's namespace (which never runs: no hit).
TEST_P(Record, AttachInAnotherMountNamespaceProbesTheFileItRuns) {
  UPROF_REQUIRE_UPROBES();
  if (test::run_shell("command -v unshare").exit_code != 0) GTEST_SKIP() << "no unshare(1) (util-linux)";
  test::TempDir dir;
  std::filesystem::create_directory(dir.file("app"));
  const std::string prog = dir.file("app/prog"), hidden_by = dir.file("other");
  std::filesystem::copy_file(fixture("x86_64", "workload"), prog);       // what the path names here
  std::filesystem::copy_file(fixture("x86_64", "workload"), hidden_by);  // what it names in there
  const std::string pidfile = dir.file("pid");
  pid_t child = fork();
  if (child == 0) {
    const std::string script = "mount --bind " + hidden_by + " " + prog + " && exec " + prog + " loop " + pidfile;
    execl("/usr/bin/unshare", "unshare", "-m", "--propagation", "private", "sh", "-c", script.c_str(), (char*)nullptr);
    _exit(127);
  }
  for (int i = 0; i < 200 && !std::filesystem::exists(pidfile); i++) usleep(10000);
  ASSERT_TRUE(std::filesystem::exists(pidfile));
  std::string pid;
  std::ifstream(pidfile) >> pid;
  // By the program's own name, and by the path as the process knows it.
  for (const std::string& spec : {std::string("add"), prog + ":add"}) {
    auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("u.data"), "-e", spec, "-p", pid,
                  "--duration", "0.5"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("has a mount namespace or root of its own"), std::string::npos) << r.err;
    auto rec = load(dir.file("u.data"));
    auto [en, re] = entries_returns(rec);
    EXPECT_GT(en, 50u) << spec;  // a call every 100 us for half a second
    ASSERT_FALSE(rec.probes.empty());
    EXPECT_EQ(rec.probes[0].path, "/proc/" + pid + "/root" + prog) << spec;
  }
  kill(child, SIGTERM);
  waitpid(child, nullptr, 0);
}

// Without CAP_SYS_ADMIN no uprobe can go on: record says so in one line, before it
// chooses an engine, measures probe costs or starts the workload.
TEST(RecordPrivilege, WithoutRootOneLineAndNothingRuns) {
  UPROF_REQUIRE_ROOT();  // to become someone else
  const std::string out = "/tmp/uprof-nobody-" + std::to_string(getpid()) + ".data";
  auto r = test::run_shell("setpriv --reuid=65534 --regid=65534 --clear-groups env XDG_CACHE_HOME=/tmp/uprof-nobody-cache " +
                           uprof_binary() + " record -o " + out + " -e add -- " + fixture("x86_64", "workload") +
                           " calls 3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");  // the workload never ran
  EXPECT_EQ(r.err, "uprof: record: uprobes need root (CAP_SYS_ADMIN), which this process does not have: run "
                   "'sudo uprof record ...'\n");
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A bad -o is refused before anything else happens.
TEST(RecordOutput, ABadOutputPathIsRefusedFirst) {
  auto missing = run({uprof_binary(), "record", "-o", "/nonexistent-dir/u.data", "-e", "add", "--",
                      fixture("x86_64", "workload"), "calls", "3"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(missing.err, "uprof: store: /nonexistent-dir/u.data: the directory /nonexistent-dir does not exist\n");
  test::TempDir dir;
  auto directory = run({uprof_binary(), "record", "-o", dir.path(), "-e", "add", "--", fixture("x86_64", "workload"),
                        "calls", "3"});
  EXPECT_EQ(directory.exit_code, 1);
  EXPECT_EQ(directory.err, "uprof: store: " + dir.path() + ": is a directory\n");
}

// Starts `uprof record -e add -o OUT -- workload MODE PIDFILE` in the background
// (quiet) and returns once the workload has written its pid file (or 60 s passed).
pid_t start_background_record(const std::string& engine, const std::string& out, const std::string& mode,
                              const std::string& pidfile) {
  pid_t rec_pid = fork();
  if (rec_pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(uprof_binary().c_str(), "uprof", "record", "--engine", test::engine_of(engine).c_str(), "--attach", test::attach_of(engine).c_str(), "-o", out.c_str(), "-e", "add", "--",
          fixture("x86_64", "workload").c_str(), mode.c_str(), pidfile.c_str(), (char*)nullptr);
    _exit(127);
  }
  // A sanitized uprof on a busy machine can take seconds to resolve, load and attach.
  test::wait_for_file(pidfile, 60);
  return rec_pid;
}

TEST_P(Record, SigintLeavesAReadableFile) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  std::string out = dir.file("u.data");
  std::string pidfile = dir.file("pid");
  pid_t rec_pid = start_background_record(GetParam(), out, "loop", pidfile);
  ASSERT_TRUE(std::filesystem::exists(pidfile)) << "the workload did not start within 60 s";
  usleep(300 * 1000);
  kill(rec_pid, SIGINT);  // sent to uprof alone: it passes it on to the workload
  int st = 0;
  waitpid(rec_pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);  // the loop fixture exits 0 on SIGINT
  auto rec = load(out);
  auto [en, re] = entries_returns(rec);
  EXPECT_GT(en, 100u);
  EXPECT_EQ(en, re);
  ASSERT_TRUE(rec.trailer);
  EXPECT_TRUE(rec.problems.empty());
}

TEST_P(Record, SecondSigintStopsNowAndTheFileIsStillReadable) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  std::string out = dir.file("u.data");
  std::string pidfile = dir.file("pid");
  // This workload ignores SIGINT: the first Ctrl-C cannot end it.
  pid_t rec_pid = start_background_record(GetParam(), out, "stubborn", pidfile);
  ASSERT_TRUE(std::filesystem::exists(pidfile)) << "the workload did not start within 60 s";
  usleep(200 * 1000);
  kill(rec_pid, SIGINT);
  usleep(300 * 1000);
  int st = 0;
  EXPECT_EQ(waitpid(rec_pid, &st, WNOHANG), 0) << "uprof should still wait for the workload";
  kill(rec_pid, SIGINT);
  for (int i = 0; i < 500 && waitpid(rec_pid, &st, WNOHANG) == 0; i++) usleep(10000);
  ASSERT_TRUE(WIFEXITED(st)) << "uprof did not stop within 5 s of the second SIGINT";
  EXPECT_EQ(WEXITSTATUS(st), 128 + SIGKILL);  // the workload's status: killed
  auto rec = load(out);
  auto [en, re] = entries_returns(rec);
  EXPECT_GT(en, 10u);
  ASSERT_TRUE(rec.trailer);
  // Entries and returns pair up but for the call it was killed in, and for
  // samples the kernel dropped (a slow drain, e.g. under the sanitizers).
  const uint64_t lost = rec.trailer->lost;
  EXPECT_LE(en, re + 1 + lost) << lost << " lost";
  EXPECT_LE(re, en + lost) << lost << " lost";
  EXPECT_TRUE(rec.problems.empty());
}

}  // namespace
}  // namespace uprof
