// System errors: each ends uprof with one clear line and a non-zero exit status
// (or, for the workload's own failures, the status a shell would give).
#include <sys/mount.h>

#include <regex>

#include "robust_support.h"

namespace uprof::robust {
namespace {

using test::fixture;
using test::uprof_binary;

// The one line uprof printed (notes about other uprofs' leftovers aside).
std::string the_error_line(const Finished& r) {
  auto lines = error_lines(r.err);
  EXPECT_EQ(lines.size(), 1u) << r.err;
  return lines.empty() ? "" : lines.front();
}

// The perf engine opens one event per probe per CPU (the BPF engine one per probe,
// which 40 files hold).
TEST(SystemErrors, TooManyOpenFilesSaysHowManyAreNeeded) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  Child::Options low{.in_child = [] {
    rlimit rl{.rlim_cur = 40, .rlim_max = 40};
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }};
  auto r = run_child({uprof_binary(), "record", "--engine", "perf", "-o", dir.file("u.data"), "-e", "add", "-e",
                      "slow_add", "--", fixture("x86_64", "workload"), "calls", "10"},
                     low);
  EXPECT_EQ(r.exit_code, 1);
  std::string line = the_error_line(r);
  // 4 probes (2 entries, 2 returns) and the task records' event, x the online CPUs.
  std::size_t cpus = std::thread::hardware_concurrency();
  EXPECT_NE(line.find("uprof: attach: " + std::to_string(5 * cpus) + " perf events (one per probe per CPU, and one per CPU for task records) need about "),
            std::string::npos) << line;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(R"(need about (\d+) open files, but RLIMIT_NOFILE's hard limit is 40: raise it with ulimit -n (\d+) )")))
      << line;
  EXPECT_EQ(m[1], m[2]);
  EXPECT_GT(std::stoi(m[1]), 40);
  EXPECT_TRUE(r.out.empty()) << "the workload ran: " << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("u.data")));
}

// A small tmpfs, mounted for one test and unmounted after it; `ok` false (and the
// test skipped) where mounting is not allowed.
struct SmallTmpfs {
  test::TempDir dir;
  std::string path = dir.file("small");
  bool ok = false;
  explicit SmallTmpfs(const char* size) {
    std::filesystem::create_directory(path);
    ok = ::mount("uprof-test", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, size) == 0;
  }
  ~SmallTmpfs() {
    if (ok) ::umount2(path.c_str(), MNT_DETACH);
  }
};

// A tmpfs of 256 KiB fills up while recording: the recording stops there (probes off),
// the file keeps every whole section written before, and the workload is none of it:
// a shell whose child writes its output outside the tmpfs runs to its end, and uprof
// exits with its status (3) and one line about the disk, on both engines. (An event
// block is up to 64 KiB: the tmpfs holds a few, however the drain passes cut them.)
// (-o /dev/full is refused before anything runs: hostile_files_test.cpp.)
TEST(SystemErrors, DiskFullStopsTheRecordingNotTheWorkload) {
  UPROF_REQUIRE_UPROBES();
  for (const std::string engine : {"bpf", "perf"}) {
    SmallTmpfs fs("size=256k");
    if (!fs.ok) GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    const std::string out = fs.path + "/u.data", own = fs.dir.file("own-output.txt");
    const std::string workload = fixture("x86_64", "workload");
    // 200,000 calls with two values: about 2.5 MB of events, in the shell's child.
    auto r = run_child({uprof_binary(), "record", "--engine", engine, "-o", out, "-e", workload + ":add %di %si", "--",
                        "/bin/sh", "-c",
                        workload + " calls 200000 > " + own + "; echo 'ran to its end' >> " + own + "; exit 3"});
    EXPECT_EQ(r.exit_code, 3) << engine << ": " << r.err;
    // One line about the disk (notes on the probes aside), and none about a kill.
    std::string line;
    for (const std::string& l : error_lines(r.err)) {
      if (!l.starts_with("uprof: store: ")) continue;
      EXPECT_TRUE(line.empty()) << r.err;
      line = l;
    }
    EXPECT_EQ(r.err.find("killed"), std::string::npos) << r.err;
    EXPECT_TRUE(std::regex_match(line, std::regex("uprof: store: " + out + ": No space left on device after [0-9,]+ "
                                                  "bytes: the recording stopped there \\(probes removed\\), the "
                                                  "workload ran on to its end; what was written is readable: uprof "
                                                  "report " + out)))
        << engine << ": " << line;
    EXPECT_EQ(slurp_file(own), "calls 200000\nran to its end\n") << engine;
    auto rep = test::run({uprof_binary(), "report", out, "--hist", "none"});
    EXPECT_EQ(rep.exit_code, 0) << rep.err;
    EXPECT_NE(rep.err.find("cut short at byte"), std::string::npos) << rep.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(rep.out, m, std::regex(R"(\nadd +([0-9,]+) )"))) << rep.out;
    EXPECT_GT(std::stoi(std::regex_replace(m[1].str(), std::regex(","), "")), 1000) << engine;
    // Whole sections only: the reader finds no partial one.
    EXPECT_EQ(rep.err.find("incomplete"), std::string::npos) << rep.err;
    EXPECT_TRUE(tracefs_lines_of(r.pid).empty());
    // The bytes named are the file's: a section cut by the full disk was taken off again.
    std::smatch bytes;
    ASSERT_TRUE(std::regex_search(line, bytes, std::regex("after ([0-9,]+) bytes")));
    EXPECT_EQ(std::to_string(std::filesystem::file_size(out)), std::regex_replace(bytes[1].str(), std::regex(","), ""));
  }
}

// RLIMIT_FSIZE (inherited by the workload, whose output is small): the write past it
// fails with EFBIG instead of SIGXFSZ ending uprof, and it ends as a full disk does.
TEST(SystemErrors, FileSizeLimitStopsTheRecordingNotTheWorkload) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string out = dir.file("u.data"), own = dir.file("own-output.txt");
  const std::string workload = fixture("x86_64", "workload");
  Child::Options limited{.in_child = [] {
    rlimit rl{.rlim_cur = 256 << 10, .rlim_max = 256 << 10};
    ::setrlimit(RLIMIT_FSIZE, &rl);
  }};
  auto r = run_child({uprof_binary(), "record", "-o", out, "-e", workload + ":add %di %si", "--", "/bin/sh", "-c",
                      workload + " calls 200000 > " + own + "; exit 3"},
                     limited);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("\nuprof: store: " + out + ": File too large after [0-9,]+ bytes: "
                                                  "the recording stopped there \\(probes removed\\), the workload ran "
                                                  "on to its end; ")))
      << r.err;
  EXPECT_EQ(slurp_file(own), "calls 200000\n");
  auto rep = test::run({uprof_binary(), "report", out, "--hist", "none"});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.err.find("cut short at byte"), std::string::npos) << rep.err;
}

// A disk already full when the recording starts: refused before the workload runs, and
// a data file already at the name keeps its bytes (the new one never reached it).
TEST(SystemErrors, DiskAlreadyFullRefusesBeforeTheWorkloadRuns) {
  UPROF_REQUIRE_UPROBES();
  SmallTmpfs fs("size=64k");
  if (!fs.ok) GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  const std::string out = fs.path + "/u.data";
  std::ofstream(out) << "an old recording";
  {
    std::ofstream fill(fs.path + "/fill");
    const std::string block(4096, 'x');
    while (fill << block && fill.flush()) {
    }
  }
  auto r = run_child({uprof_binary(), "record", "-o", out, "-e", "add", "--", fixture("x86_64", "workload"), "calls",
                      "10"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(the_error_line(r).rfind("uprof: store: " + out + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "the workload ran: " << r.out;
  EXPECT_EQ(slurp_file(out), "an old recording");
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(fs.path)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"fill", "u.data"}));  // no temporary file left
}

// As user nobody, both backends say that root is needed.
TEST(SystemErrors, NotRootSaysRootIsNeeded) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  for (std::string backend : {"tracefs", "pmu"}) {
    auto r = run_child({"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", uprof_binary(),
                        "record", "--backend", backend, "-o", dir.file("u.data"), "-e", "add", "--",
                        fixture("x86_64", "workload"), "calls", "10"});
    EXPECT_EQ(r.exit_code, 1) << backend;
    std::string line = the_error_line(r);
    EXPECT_NE(line.find("CAP_SYS_ADMIN"), std::string::npos) << backend << ": " << line;
    EXPECT_NE(line.find("root"), std::string::npos) << backend << ": " << line;
    EXPECT_TRUE(r.out.empty()) << "the workload ran: " << r.out;
  }
}

// A kernel without the uprobe PMU, seen through a sysfs root without it.
TEST(SystemErrors, NoUprobePmuNamesTheKernelOption) {
  test::TempDir sysfs;
  auto r = run_child({uprof_binary(), "record", "--backend", "pmu", "-o", sysfs.file("u.data"), "-e", "add", "--",
                      fixture("x86_64", "workload"), "calls", "10"},
                     {.env = {"UPROF_SYSFS_ROOT=" + sysfs.path()}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(the_error_line(r), "uprof: attach: no uprobe PMU at " + sysfs.path() +
                                   "/bus/event_source/devices/uprobe: the kernel needs CONFIG_UPROBES and "
                                   "CONFIG_UPROBE_EVENTS (Linux 4.17 or later)");
  EXPECT_TRUE(r.out.empty()) << "the workload ran: " << r.out;
}

TEST(SystemErrors, NoSuchPid) {
  ASSERT_FALSE(std::filesystem::exists("/proc/999999"));
  auto r = run_child({uprof_binary(), "record", "-e", "add", "-p", "999999"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(the_error_line(r), "uprof: record: -p 999999: no such process");
  auto zero = run_child({uprof_binary(), "record", "-e", "add", "-p", "0"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(the_error_line(zero).find("-p takes a process id greater than 0"), std::string::npos) << zero.err;
}

// As a shell: 127 when the command does not exist, 126 when it cannot be run.
TEST(SystemErrors, WorkloadThatCannotBeExecuted) {
  test::TempDir dir;
  std::ofstream(dir.file("script")) << "#!/bin/sh\necho hi\n";  // mode 0644: not executable
  struct Case {
    std::string cmd;
    int status;
    std::string line;
  };
  for (const Case& c : {Case{"/nonexistent/prog", 127, "uprof: workload: /nonexistent/prog: No such file or directory"},
                        Case{"no-such-command-uprof", 127, "uprof: workload: no-such-command-uprof: command not found in PATH"},
                        Case{dir.file("script"), 126, "uprof: workload: " + dir.file("script") + ": Permission denied"},
                        Case{dir.path(), 126, "uprof: workload: " + dir.path() + ": is a directory"}}) {
    auto r = run_child({uprof_binary(), "record", "-o", dir.file("u.data"), "-e", fixture("x86_64", "workload") + ":add",
                        "--", c.cmd});
    EXPECT_EQ(r.exit_code, c.status) << c.cmd << ": " << r.err;
    EXPECT_EQ(the_error_line(r), c.line);
    EXPECT_TRUE(tracefs_lines_of(r.pid).empty());
  }
}

TEST(SystemErrors, WorkloadKilledBySignal) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  Child::Options no_core{.in_child = [] {
    rlimit rl{.rlim_cur = 0, .rlim_max = 0};
    ::setrlimit(RLIMIT_CORE, &rl);
  }};
  auto r = run_child({uprof_binary(), "record", "-o", dir.file("u.data"), "-e", "add", "--",
                      fixture("x86_64", "workload"), "signal", std::to_string(SIGSEGV)},
                     no_core);
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV);
  EXPECT_NE(r.err.find("uprof: 2 events recorded, 0 lost (kernel counted 2)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\nuprof: the workload was killed by SIGSEGV (exit status 139)\n"), std::string::npos) << r.err;
  // The file is whole and says how the workload ended.
  auto rep = test::run({uprof_binary(), "report", dir.file("u.data"), "--hist", "none"});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.out.find("exit status 139"), std::string::npos) << rep.out;
  EXPECT_TRUE(rep.err.empty()) << rep.err;
}

}  // namespace
}  // namespace uprof::robust
