#include "uprof/record/process_view.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace uprof {
namespace {

// Each file once, with its first mapping's range and its device and inode; anonymous
// mappings, [heap]-like names and deleted files are left out.
TEST(ProcessView, MapsLinesGiveEachMappedFileOnce) {
  const std::string maps =
      "55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 1835012                    /usr/bin/app\n"
      "55d0c0a01000-55d0c0a02000 r-xp 00001000 fd:01 1835012                    /usr/bin/app\n"
      "55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
      "7f1c2a000000-7f1c2a028000 r--p 00000000 103:02 2097      /lib/x86_64-linux-gnu/libc.so.6\n"
      "7f1c2b000000-7f1c2b001000 r--p 00000000 fd:01 99         /tmp/gone.so (deleted)\n"
      "7f1c2c000000-7f1c2c001000 rw-p 00000000 00:00 0 \n";
  const auto files = parse_mapped_files(maps);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "/usr/bin/app");
  EXPECT_EQ(files[0].range, "55d0c0a00000-55d0c0a01000");
  EXPECT_EQ(files[0].device, (uint64_t{0xfd} << 32) | 1);
  EXPECT_EQ(files[0].inode, 1835012u);
  EXPECT_EQ(files[1].path, "/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(files[1].device, (uint64_t{0x103} << 32) | 2);
}

// uprof's own view needs no /proc/PID/root: paths stay as they are.
TEST(ProcessView, OwnNamespaceKeepsPaths) {
  const ProcessView v = ProcessView::of(getpid());
  EXPECT_FALSE(v.foreign());
  EXPECT_EQ(v.path("/usr/bin/env"), "/usr/bin/env");
  const auto mapped = v.mapped_paths();
  ASSERT_FALSE(mapped.empty());
  EXPECT_EQ(mapped.front().front(), '/');
  EXPECT_EQ(mapped.front().find("/proc/"), std::string::npos);
}

}  // namespace
}  // namespace uprof
