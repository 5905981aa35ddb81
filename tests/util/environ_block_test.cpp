#include "uprof/util/environ_block.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

namespace uprof {
namespace {

TEST(EnvironBlock, FindsAValueByExactName) {
  using namespace std::string_literals;
  const std::string block = "HOME=/root\0GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2\0EMPTY=\0HOME=/other\0"s;
  EXPECT_EQ(environ_value(block, "GLIBC_TUNABLES"), "glibc.cpu.hwcaps=-AVX2");
  EXPECT_EQ(environ_value(block, "HOME"), "/root");
  EXPECT_EQ(environ_value(block, "EMPTY"), "");
  EXPECT_EQ(environ_value(block, "HOM"), std::nullopt);
  EXPECT_EQ(environ_value(block, "GLIBC"), std::nullopt);
  EXPECT_EQ(environ_value("", "HOME"), std::nullopt);
  EXPECT_EQ(environ_value("NOEQUALS\0X=1"s, "NOEQUALS"), std::nullopt);
}

// This process's block holds what it started with, as getenv() sees it (PATH, set
// by whoever ran the tests).
TEST(EnvironBlock, ThisProcessAsGetenvSeesIt) {
  auto block = read_environ(::getpid());
  ASSERT_TRUE(block) << block.error().message;
  const char* path = std::getenv("PATH");
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(environ_value(*block, "PATH"), std::string(path));
  auto none = read_environ(999999999);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message.rfind("process 999999999: /proc/999999999/environ: ", 0), 0u) << none.error().message;
}

}  // namespace
}  // namespace uprof
