#include "uprof/attach/cpu_list.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_support.h"

namespace uprof {
namespace {

TEST(EventSetCpuList, Forms) {
  EXPECT_EQ(*parse_cpu_list("0"), (std::vector<int>{0}));
  EXPECT_EQ(*parse_cpu_list("0-1\n"), (std::vector<int>{0, 1}));
  EXPECT_EQ(*parse_cpu_list("0,2-3,8"), (std::vector<int>{0, 2, 3, 8}));
  EXPECT_EQ(*parse_cpu_list("3,1-2,2"), (std::vector<int>{1, 2, 3}));
}

TEST(EventSetCpuList, Rejects) {
  for (const char* bad : {"", "\n", "a", "1-", "-1", "3-1", "0,,1", "0-1,", "99999"})
    EXPECT_FALSE(parse_cpu_list(bad).ok()) << "accepted '" << bad << "'";
}

TEST(EventSetCpuList, ReadsAFile) {
  test::TempDir dir;
  std::ofstream(dir.file("online")) << "0-3\n";
  auto cpus = read_online_cpus(dir.file("online"));
  ASSERT_TRUE(cpus.ok()) << cpus.error().message;
  EXPECT_EQ(cpus->size(), 4u);
  auto missing = read_online_cpus(dir.file("nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(dir.file("nope")), std::string::npos);
}

TEST(EventSetCpuList, ThisMachine) {
  auto cpus = read_online_cpus();
  ASSERT_TRUE(cpus.ok()) << cpus.error().message;
  EXPECT_FALSE(cpus->empty());
  EXPECT_EQ(cpus->front(), 0);
}

}  // namespace
}  // namespace uprof
