#include "uprof/util/file_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace uprof {
namespace {

// Symlinks are resolved, except the links into another process's view, which would
// come out as a path of uprof's own namespace.
TEST(FilePath, CanonicalExceptThroughAnotherProcessView) {
  const std::string self = std::to_string(getpid());
  EXPECT_EQ(canonical_path("/proc/self/../self/exe"), std::filesystem::canonical("/proc/self/exe").string());
  EXPECT_EQ(canonical_path("/proc/" + self + "/root/usr/bin/env"), "/proc/" + self + "/root/usr/bin/env");
  EXPECT_EQ(canonical_path("/proc/" + self + "/exe"), "/proc/" + self + "/exe");
  EXPECT_EQ(canonical_path("/proc/" + self + "/map_files/1000-2000"), "/proc/" + self + "/map_files/1000-2000");
  EXPECT_EQ(canonical_path("/no/such/file"), "/no/such/file");
}

}  // namespace
}  // namespace uprof
