#include "uprof/attach/workload.h"

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
