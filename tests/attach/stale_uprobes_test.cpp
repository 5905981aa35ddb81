#include "uprof/attach/stale_uprobes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/test_support.h"

namespace uprof {
namespace {

TEST(StaleUprobes, ParsesEventNames) {
  auto names = parse_uprobe_event_names(
      "p:uprof_4242/e0 /work/build/mytest:0x0000000000001130\n"
      "r:uprof_4242/e1 /work/build/mytest:0x0000000000001130\n"
      "p:uprobes/p_bash_0x4245c0 /bin/bash:0x00000000000f1c60 arg1=%di\n"
      "garbage line\n"
      "p:nogroup /bin/x:0x10\n"
      "\n"
      "p:uprof_7/e3 /usr/bin/python3:0x2f1a0(0x4c5d8)");
  std::vector<TracefsEventName> want{{"uprof_4242", "e0"},
                                     {"uprof_4242", "e1"},
                                     {"uprobes", "p_bash_0x4245c0"},
                                     {"uprof_7", "e3"}};
  EXPECT_EQ(names, want);
  EXPECT_TRUE(parse_uprobe_event_names("").empty());
}

TEST(StaleUprobes, GroupPid) {
  EXPECT_EQ(uprof_group_pid("uprof_4242"), 4242);
  EXPECT_EQ(uprof_group_pid("uprof_1"), 1);
  EXPECT_FALSE(uprof_group_pid("uprof_"));
  EXPECT_FALSE(uprof_group_pid("uprof_0"));
  EXPECT_FALSE(uprof_group_pid("uprof_12x"));
  EXPECT_FALSE(uprof_group_pid("uprobes"));
  EXPECT_FALSE(uprof_group_pid("myuprof_12"));
}

TEST(StaleUprobes, ThisProcessExists) {
  EXPECT_TRUE(process_exists(::getpid()));
  EXPECT_TRUE(process_exists(1));
}

// A directory standing in for tracefs: uprobe_events is a plain file there, so the
// removal commands uprof writes are appended to it and can be read back.
TEST(StaleUprobes, RemovesOnlyTheGroupsOfDeadUprofs) {
  test::TempDir dir;
  std::string events = dir.file("uprobe_events");
  const std::string defined =
      "p:uprof_100/e0 /bin/x:0x10\n"
      "r:uprof_100/e1 /bin/x:0x10\n"
      "p:uprof_200/e0 /bin/x:0x10\n"
      "p:uprobes/mine /bin/x:0x10\n"
      "p:uprof_300/e7 /bin/y:0x20\n";
  std::ofstream(events) << defined;
  std::vector<pid_t> asked;
  auto alive = [&](pid_t pid) {
    asked.push_back(pid);
    return pid == 200;
  };
  auto c = remove_stale_uprof_probes(dir.path(), alive);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->removed_events, 3u);
  EXPECT_EQ(c->removed_groups, (std::vector<std::string>{"uprof_100", "uprof_300"}));
  EXPECT_TRUE(c->busy_events.empty());
  EXPECT_EQ(asked, (std::vector<pid_t>{100, 200, 300}));  // each pid once
  std::ifstream in(events);
  std::ostringstream now;
  now << in.rdbuf();
  EXPECT_EQ(now.str(), defined + "-:uprof_100/e0\n-:uprof_100/e1\n-:uprof_300/e7\n");
}

TEST(StaleUprobes, NoTracefsIsAnError) {
  auto c = remove_stale_uprof_probes("/nonexistent");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message, "attach: cannot read /nonexistent/uprobe_events: No such file or directory");
}

TEST(StaleUprobes, Messages) {
  StaleCleanup c{.removed_groups = {"uprof_100"}, .removed_events = 2, .busy_events = {"uprof_300/e7"}};
  auto lines = describe_cleanup(c, "/sys/kernel/tracing");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "removed the tracefs probes of uprof_100, left by a uprof that is gone (killed?)");
  EXPECT_EQ(lines[1],
            "the stale tracefs probe uprof_300/e7 is still in use (EBUSY): left in place; once its user has closed it, "
            "remove it with: echo '-:uprof_300/e7' >> /sys/kernel/tracing/uprobe_events");
}

}  // namespace
}  // namespace uprof
