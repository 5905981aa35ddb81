#include "uprof/util/proc_maps.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>

namespace uprof {
namespace {

TEST(ProcMaps, ParsesEveryField) {
  const auto maps = parse_maps(
      "7f1c2a228000-7f1c2a3bd000 r-xp 00028000 fd:01 1316                       /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f00aa000000-7f00aa021000 rw-p 00000000 00:00 0 \n"
      "7ffd1c5fe000-7ffd1c600000 r-xp 00000000 00:00 0                          [vdso]\n"
      "garbage line\n"
      "7f00cc000000-7f00cc001000 r-xp 00001000 103:0a 99 /opt/a dir/with spaces.so (deleted)");
  ASSERT_EQ(maps.size(), 4u);
  EXPECT_EQ(maps[0].start, 0x7f1c2a228000u);
  EXPECT_EQ(maps[0].end, 0x7f1c2a3bd000u);
  EXPECT_EQ(maps[0].perms, "r-xp");
  EXPECT_TRUE(maps[0].executable());
  EXPECT_EQ(maps[0].offset, 0x28000u);
  EXPECT_EQ(maps[0].dev_major, 0xfdu);
  EXPECT_EQ(maps[0].dev_minor, 1u);
  EXPECT_EQ(maps[0].inode, 1316u);
  EXPECT_EQ(maps[0].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_TRUE(maps[0].file_backed());
  EXPECT_FALSE(maps[1].file_backed());
  EXPECT_FALSE(maps[1].executable());
  EXPECT_EQ(maps[2].path, "[vdso]");
  EXPECT_FALSE(maps[2].file_backed());
  EXPECT_EQ(maps[3].dev_major, 0x103u);
  EXPECT_EQ(maps[3].dev_minor, 0xau);
  EXPECT_EQ(maps[3].path, "/opt/a dir/with spaces.so (deleted)");
}

// This test's own code is in a mapping of its own executable, with its inode and device.
TEST(ProcMaps, ThisProcessMapsItsOwnCode) {
  const auto here = reinterpret_cast<uint64_t>(&parse_maps);
  const auto exe = std::filesystem::read_symlink("/proc/self/exe").string();
  struct stat st {};
  ASSERT_EQ(stat(exe.c_str(), &st), 0);
  int found = 0;
  for (const MapsEntry& m : read_maps(0)) {
    if (here < m.start || here >= m.end) continue;
    found++;
    EXPECT_EQ(m.path, exe);
    EXPECT_TRUE(m.executable());
    EXPECT_EQ(m.inode, st.st_ino);
    EXPECT_EQ(m.dev_major, major(st.st_dev));
    EXPECT_EQ(m.dev_minor, minor(st.st_dev));
  }
  EXPECT_EQ(found, 1);
}

}  // namespace
}  // namespace uprof
