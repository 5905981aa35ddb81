#include "uprof/attach/workload.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_support.h"

namespace uprof {
namespace {

TEST(Workload, RunsOnlyAfterStartAndReportsExitStatus) {
  test::TempDir dir;
  std::string marker = dir.file("ran");
  auto w = Workload::spawn({"/bin/sh", "-c", "touch " + marker + "; exit 7"});
  ASSERT_TRUE(w) << w.error().message;
  usleep(100 * 1000);
  EXPECT_FALSE(std::ifstream(marker).good()) << "the child ran before start()";
  ASSERT_TRUE(w->start());
  auto st = w->wait();
  ASSERT_TRUE(st);
  EXPECT_EQ(*st, 7);
  EXPECT_TRUE(std::ifstream(marker).good());
}

TEST(Workload, KilledBySignalGives128PlusSignal) {
  auto w = Workload::spawn({"/bin/sh", "-c", "kill -TERM $$"});
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->start());
  EXPECT_EQ(*w->wait(), 128 + 15);
}

TEST(Workload, ExecFailureIsAnError) {
  test::TempDir dir;
  std::ofstream(dir.file("notexec")) << "#!/bin/sh\n";
  auto w = Workload::spawn({dir.file("notexec")});
  ASSERT_TRUE(w);
  auto s = w->start();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "workload: " + dir.file("notexec") + ": Permission denied");
  EXPECT_EQ(s.error().exit_status, 126);  // as a shell: found, but cannot be executed
}

TEST(Workload, StatusOfAnExecFailureIsTheShells) {
  EXPECT_EQ(exec_failure_status(ENOENT), 127);
  EXPECT_EQ(exec_failure_status(ENOTDIR), 127);
  EXPECT_EQ(exec_failure_status(EACCES), 126);
  EXPECT_EQ(exec_failure_status(ENOEXEC), 126);
  EXPECT_EQ(find_program("no-such-command-uprof").error().exit_status, 127);
  EXPECT_EQ(find_program("/nonexistent/x").error().exit_status, 127);
  EXPECT_EQ(find_program("/tmp").error().exit_status, 126);
}

TEST(Workload, KilledBySignalNamesTheSignal) {
  auto w = Workload::spawn({"/bin/sh", "-c", "kill -SEGV $$"});
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->start());
  EXPECT_EQ(*w->wait(), 128 + SIGSEGV);
  EXPECT_EQ(w->term_signal(), SIGSEGV);
  auto ok = Workload::spawn({"/bin/sh", "-c", "exit 139"});
  ASSERT_TRUE(ok->start());
  EXPECT_EQ(*ok->wait(), 139);
  EXPECT_EQ(ok->term_signal(), 0);  // exit(139) is not a signal
}

// uprof dies (SIGKILL: no destructor runs) after spawning the workload but before
// starting it: the workload must not go on to run the command unrecorded.
TEST(Workload, NeverRunsWhenUprofDiesBeforeStarting) {
  test::TempDir dir;
  std::string marker = dir.file("ran");
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);  // the orphaned workload comes back to us
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  pid_t uprof_like = ::fork();
  if (uprof_like == 0) {
    auto w = Workload::spawn({"/bin/sh", "-c", "touch " + marker});
    pid_t pid = w ? w->pid() : -1;
    ssize_t n = ::write(p[1], &pid, sizeof pid);
    (void)n;
    ::raise(SIGKILL);
  }
  pid_t workload = -1;
  ASSERT_EQ(::read(p[0], &workload, sizeof workload), static_cast<ssize_t>(sizeof workload));
  ::close(p[0]);
  ::close(p[1]);
  ::waitpid(uprof_like, nullptr, 0);
  ASSERT_GT(workload, 0);
  int st = 0;
  EXPECT_EQ(::waitpid(workload, &st, 0), workload);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 127) << st;
  EXPECT_FALSE(std::ifstream(marker).good()) << "the command ran although uprof never started it";
}

TEST(Workload, FindProgram) {
  EXPECT_NE(find_program("sh")->find("/sh"), std::string::npos);
  EXPECT_EQ(find_program("no-such-command-uprof").error().message,
            "workload: no-such-command-uprof: command not found in PATH");
  EXPECT_EQ(find_program("/nonexistent/x").error().message, "workload: /nonexistent/x: No such file or directory");
  EXPECT_EQ(find_program("/tmp").error().message, "workload: /tmp: is a directory");
}

TEST(Workload, NeverStartedChildIsReaped) {
  pid_t pid;
  {
    auto w = Workload::spawn({"/bin/true"});
    ASSERT_TRUE(w);
    pid = w->pid();
  }
  EXPECT_NE(::kill(pid, 0), 0);  // gone: killed and reaped
}

}  // namespace
}  // namespace uprof
