// What `record -a` and `-p` tell the user: the moment the probes are live, and the names
// of processes that were running before the recording started (no fork or exec of theirs
// is seen: the names come from /proc), in every split of the report.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class Names : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Names, UPROF_ENGINES, test::engine_name);

// A private copy of the workload fixture named `namedwork` (its own inode: other tests'
// runs of the fixture stay out of a system-wide recording), calling add every 100 us.
class Looper {
 public:
  explicit Looper(const test::TempDir& dir) : bin_(dir.file("namedwork")) {
    std::filesystem::copy_file(fixture("x86_64", "workload"), bin_);
    const std::string pidfile = dir.file("pid");
    pid_ = fork();
    if (pid_ == 0) {
      execl(bin_.c_str(), "namedwork", "loop", pidfile.c_str(), (char*)nullptr);
      _exit(127);
    }
    ready_ = test::wait_for_file(pidfile, 10);
  }
  ~Looper() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  bool ready() const { return ready_; }
  pid_t pid() const { return pid_; }
  const std::string& bin() const { return bin_; }

 private:
  std::string bin_;
  pid_t pid_ = -1;
  bool ready_ = false;
};

std::vector<std::string> record_args(const std::string& engine, const std::string& out) {
  return {uprof_binary(), "record", "--engine", test::engine_of(engine), "--attach", test::attach_of(engine),
          "--no-args", "-o", out, "--duration", "0.5"};
}

TEST_P(Names, SystemWideSaysWhenItIsLiveAndNamesAProcessStartedBefore) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  Looper looper(dir);
  ASSERT_TRUE(looper.ready());
  auto args = record_args(GetParam(), dir.file("a.data"));
  for (const std::string& a : std::vector<std::string>{"-a", "-e", looper.bin() + ":add"}) args.push_back(a);
  auto r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("uprof: recording: 2 probes live in every process that maps their files; calls from now on "
                       "are recorded, for 0.5 s or until Ctrl-C\n"),
            std::string::npos)
      << r.err;
  const std::string pid = std::to_string(looper.pid());
  auto by_process = run({uprof_binary(), "report", "-i", dir.file("a.data"), "--by-process"});
  ASSERT_EQ(by_process.exit_code, 0) << by_process.err;
  EXPECT_NE(by_process.out.find("add [pid " + pid + " namedwork]"), std::string::npos) << by_process.out;
  auto by_thread = run({uprof_binary(), "report", "-i", dir.file("a.data"), "--by-thread"});
  EXPECT_NE(by_thread.out.find("add [" + pid + "/" + pid + " namedwork]"), std::string::npos) << by_thread.out;
  auto json = run({uprof_binary(), "report", "-i", dir.file("a.data"), "--by-process", "--format", "json"});
  EXPECT_NE(json.out.find("\"comm\":\"namedwork\""), std::string::npos) << json.out;
  auto script = run({uprof_binary(), "script", "-i", dir.file("a.data")});
  EXPECT_NE(script.out.find("namedwork " + pid + "/" + pid + "  add()"), std::string::npos) << script.out.substr(0, 400);
}

TEST_P(Names, DashPSaysWhichProcessIsLive) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  Looper looper(dir);
  ASSERT_TRUE(looper.ready());
  auto args = record_args(GetParam(), dir.file("p.data"));
  for (const std::string& a : std::vector<std::string>{"-p", std::to_string(looper.pid()), "-e", "add"}) args.push_back(a);
  auto r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("uprof: recording: 2 probes live in process " + std::to_string(looper.pid()) +
                       " (namedwork); calls from now on are recorded, for 0.5 s or until it exits or Ctrl-C\n"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace uprof
