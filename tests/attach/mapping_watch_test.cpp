// The kernel's records of a workload's file mappings (record -g's fallback for a process
// that ended before uprof read /proc/PID/maps), on a real exec: the program's own file
// and libc, each as a /proc/PID/maps line of the workload's pid, read after it exited.
#include "uprof/attach/mapping_watch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "uprof/attach/workload.h"
#include "uprof/util/proc_maps.h"

namespace uprof {
namespace {

std::map<uint32_t, std::vector<std::string>> drained(MappingWatch& w) {
  std::map<uint32_t, std::vector<std::string>> lines;
  auto s = w.drain([&](uint32_t pid, const std::string& line) { lines[pid].push_back(line); });
  EXPECT_TRUE(s) << s.error().message;
  return lines;
}

TEST(MappingWatch, AnExitedWorkloadsFilesAsMapsLines) {
  UPROF_REQUIRE_ROOT();
  const std::string program = std::filesystem::canonical(test::fixture("x86_64", "why_slow")).string();
  auto workload = Workload::spawn({program, "1", "0"});
  ASSERT_TRUE(workload) << workload.error().message;
  auto watch = MappingWatch::open({.pid = workload->pid(), .on_exec = true});
  ASSERT_TRUE(watch) << watch.error().message;
  ASSERT_TRUE(workload->start());
  auto status = workload->wait();
  ASSERT_TRUE(status) << status.error().message;
  ASSERT_EQ(*status, 0);
  const auto lines = drained(*watch);
  ASSERT_TRUE(lines.count(static_cast<uint32_t>(workload->pid()))) << "no mapping of pid " << workload->pid();
  const auto maps = parse_maps([&] {
    std::string text;
    for (const std::string& l : lines.at(static_cast<uint32_t>(workload->pid()))) text += l + "\n";
    return text;
  }());
  bool code = false, header = false, libc = false;
  for (const MapsEntry& m : maps) {
    EXPECT_LT(m.start, m.end);
    if (m.path == program && m.offset == 0) header = true;  // its ELF header's segment (mmap_data)
    if (m.path == program && m.executable()) code = true;
    if (m.path.find("libc.so") != std::string::npos && m.executable()) libc = true;
  }
  EXPECT_TRUE(header) << "the first segment of " << program;
  EXPECT_TRUE(code) << "the code of " << program;
  EXPECT_TRUE(libc) << "libc's code";
  // Read once: a second drain has nothing new.
  EXPECT_TRUE(drained(*watch).empty());
}

// Before enable() (a -p recording: no exec to start at), nothing is recorded.
TEST(MappingWatch, NothingBeforeItIsEnabled) {
  UPROF_REQUIRE_ROOT();
  auto workload = Workload::spawn({test::fixture("x86_64", "why_slow"), "1", "0"});
  ASSERT_TRUE(workload) << workload.error().message;
  auto watch = MappingWatch::open({.pid = workload->pid(), .on_exec = false});
  ASSERT_TRUE(watch) << watch.error().message;
  ASSERT_TRUE(workload->start());
  ASSERT_TRUE(workload->wait());
  EXPECT_TRUE(drained(*watch).empty());
}

}  // namespace
}  // namespace uprof
