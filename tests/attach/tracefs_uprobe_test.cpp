#include "uprof/attach/tracefs_uprobe.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_support.h"

namespace uprof {
namespace {

TEST(EventSetTracefsDefinition, EntryReturnAndSemaphore) {
  TracefsUprobeSpec s{.group = "uprof_4242", .name = "e0", .path = "/work/build/mytest",
                      .offset = 0x1130};
  EXPECT_EQ(*format_uprobe_definition(s), "p:uprof_4242/e0 /work/build/mytest:0x1130");
  s.is_return = true;
  s.name = "e1";
  EXPECT_EQ(*format_uprobe_definition(s), "r:uprof_4242/e1 /work/build/mytest:0x1130");
  s.is_return = false;
  s.path = "/usr/bin/python3";
  s.offset = 0x2f1a0;
  s.ref_ctr_offset = 0x4c5d8;
  EXPECT_EQ(*format_uprobe_definition(s), "p:uprof_4242/e1 /usr/bin/python3:0x2f1a0(0x4c5d8)");
}

TEST(EventSetTracefsDefinition, RefusesPathsTracefsCannotParse) {
  TracefsUprobeSpec s{.group = "g", .name = "e", .path = "/tmp/my program", .offset = 1};
  auto d = format_uprobe_definition(s);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("white space"), std::string::npos);
  s.path = "";
  EXPECT_FALSE(format_uprobe_definition(s).ok());
}

TEST(EventSetTracefsDefinition, Names) {
  EXPECT_EQ(tracefs_group_for_this_process(), "uprof_" + std::to_string(::getpid()));
  std::string a = next_tracefs_event_name(), b = next_tracefs_event_name();
  EXPECT_NE(a, b);
  EXPECT_EQ(a[0], 'e');
}

bool listed(const std::string& tracefs, const std::string& needle) {
  std::ifstream in(tracefs + "/uprobe_events");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str().find(needle) != std::string::npos;
}

TEST(EventSetTracefsLive, CreateAndRemove) {
  auto dir = find_tracefs();
  if (!dir.ok()) GTEST_SKIP() << dir.error().message;
  UPROF_REQUIRE_ROOT();
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  TracefsUprobeSpec spec{.group = tracefs_group_for_this_process(),
                         .name = next_tracefs_event_name(), .path = self, .offset = 0};
  std::string needle = spec.group + "/" + spec.name + " ";
  {
    auto probe = TracefsUprobe::create(*dir, spec);
    ASSERT_TRUE(probe.ok()) << probe.error().message;
    EXPECT_GT(probe->tracepoint_id(), 0u);
    EXPECT_TRUE(listed(*dir, needle));
    TracefsUprobe moved = std::move(probe.value());
    EXPECT_TRUE(listed(*dir, needle));
  }
  EXPECT_FALSE(listed(*dir, needle)) << "the destructor did not remove " << needle;
}

TEST(EventSetTracefsLive, BadPathNamesTheErrorLog) {
  auto dir = find_tracefs();
  if (!dir.ok()) GTEST_SKIP() << dir.error().message;
  UPROF_REQUIRE_ROOT();
  auto probe = TracefsUprobe::create(
      *dir, {.group = tracefs_group_for_this_process(), .name = next_tracefs_event_name(),
             .path = "/nonexistent/uprof", .offset = 0x10});
  ASSERT_FALSE(probe.ok());
  EXPECT_NE(probe.error().message.find("/nonexistent/uprof"), std::string::npos)
      << probe.error().message;
  EXPECT_NE(probe.error().message.find("error_log"), std::string::npos);
}

}  // namespace
}  // namespace uprof
