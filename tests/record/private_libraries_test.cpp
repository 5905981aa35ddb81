// Which of uprof's own libraries a recording's specs name, and the command that runs
// uprof again on private copies of them (record/private_libraries.h). The maps are this
// test process's own: it maps libc and libstdc++ as uprof does.
#include "uprof/record/private_libraries.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace uprof {
namespace {

bool names(const std::vector<MapsEntry>& files, std::string_view file_name_prefix) {
  for (const auto& f : files)
    if (std::filesystem::path(f.path).filename().string().rfind(file_name_prefix, 0) == 0) return true;
  return false;
}

TEST(PrivateLibraries, SpecsNameOwnLibrariesBySonameOrPath) {
  const auto own = read_maps(0);
  ASSERT_FALSE(own.empty());
  auto libc = own_files_named({"libc"}, own);
  ASSERT_EQ(libc.size(), 1u);
  EXPECT_TRUE(names(libc, "libc.so.6"));
  EXPECT_TRUE(names(own_files_named({"libstdc++.so.6"}, own), "libstdc++.so.6"));
  // A path names the file by its inode, whatever the path (a symlink here).
  EXPECT_TRUE(names(own_files_named({"/lib/x86_64-linux-gnu/libc.so.6"}, own), "libc.so.6"));
  // The program's own functions, and libraries uprof does not map, name nothing.
  EXPECT_TRUE(own_files_named({"", "libnotmapped", "/bin/true"}, own).empty());
  // Two specs on one library: one copy.
  EXPECT_EQ(own_files_named({"libc", "c", "libc.so.6"}, own).size(), 1u);
}

TEST(PrivateLibraries, RunsUprofAgainThroughTheLoaderWithTheCopiesFirst) {
  const std::vector<PrivateCopy> copies{{.source = "/usr/lib/x86_64-linux-gnu/libc.so.6", .name = "libc.so.6"}};
  EXPECT_EQ(private_libraries_argv("/lib64/ld-linux-x86-64.so.2", "/tmp/uprof-libs-x", copies, "/usr/bin/uprof",
                                   {"record", "-e", "libc:malloc", "--", "./app"}),
            (std::vector<std::string>{"/lib64/ld-linux-x86-64.so.2", "--library-path", "/tmp/uprof-libs-x", "--argv0",
                                      "uprof", "/usr/bin/uprof", "record", "--private-libs", "/tmp/uprof-libs-x", "-e",
                                      "libc:malloc", "--", "./app"}));
  // The loader probed too: uprof runs from the loader's copy.
  const std::vector<PrivateCopy> with_loader{
      {.source = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", .name = "ld-linux-x86-64.so.2", .loader = true}};
  EXPECT_EQ(private_libraries_argv("/lib64/ld-linux-x86-64.so.2", "/d", with_loader, "/u", {"record"}).front(),
            "/d/ld-linux-x86-64.so.2");
}

}  // namespace
}  // namespace uprof
