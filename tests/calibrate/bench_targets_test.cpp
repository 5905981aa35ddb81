// The bench targets are found by file offset, from /proc/self/maps, so that `uprof bench`
// (and record's calibration) work on a stripped uprof.
#include "uprof/calibrate/bench_targets.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "uprof/resolve/elf/elf_file.h"
#include "uprof/resolve/elf/offset.h"

namespace uprof {
namespace {

TEST(BenchTargets, LocateCodeReadsTheMappingThatHoldsIt) {
  const std::string maps =
      "55d0a1200000-55d0a1245000 r--p 00000000 fe:01 1311 /usr/bin/uprof\n"
      "55d0a1245000-55d0a1400000 r-xp 00045000 fe:01 1311 /usr/bin/uprof\n"
      "7f00aa000000-7f00aa021000 rw-p 00000000 00:00 0 \n"
      "7f00bb000000-7f00bb100000 r-xp 00028000 fe:01 77   /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7ffd1c5fe000-7ffd1c600000 r-xp 00000000 00:00 0                          [vdso]\n"
      "garbage line\n"
      "7f00cc000000-7f00cc001000 r-xp 00001000 fe:01 99 /opt/a dir/with spaces.so";
  auto in_exe = locate_code(maps, 0x55d0a1245000 + 0x1230);
  ASSERT_TRUE(in_exe);
  EXPECT_EQ(in_exe->path, "/usr/bin/uprof");
  EXPECT_EQ(in_exe->file_offset, 0x45000u + 0x1230u);
  auto in_libc = locate_code(maps, 0x7f00bb000010);
  ASSERT_TRUE(in_libc);
  EXPECT_EQ(in_libc->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(in_libc->file_offset, 0x28010u);
  auto spaced = locate_code(maps, 0x7f00cc000004);
  ASSERT_TRUE(spaced);
  EXPECT_EQ(spaced->path, "/opt/a dir/with spaces.so");
  EXPECT_FALSE(locate_code(maps, 0x7f00aa000100));  // anonymous
  EXPECT_FALSE(locate_code(maps, 0x7ffd1c5fe100));  // [vdso]
  EXPECT_FALSE(locate_code(maps, 0x55d0a1400000));  // one past the end
  EXPECT_FALSE(locate_code("", 0x1000));
}

// In this very process: each target's offset in the test binary is where its symbol is.
TEST(BenchTargets, OwnCodeOffsetsMatchTheSymbols) {
  for (const BenchTarget& t : bench_targets()) {
    auto loc = locate_own_code(reinterpret_cast<const void*>(t.fn));
    ASSERT_TRUE(loc.ok()) << loc.error().message;
    EXPECT_EQ(std::filesystem::canonical(loc->path), std::filesystem::canonical("/proc/self/exe"));
    auto elf = ElfFile::open(loc->path);
    ASSERT_TRUE(elf.ok()) << elf.error().message;
    bool found = false;
    for (const auto& s : elf->symbols())
      if (s.name == t.symbol) {
        auto off = vaddr_to_offset(elf->loads(), s.value);
        ASSERT_TRUE(off) << t.symbol;
        EXPECT_EQ(*off, loc->file_offset) << t.symbol;
        found = true;
      }
    EXPECT_TRUE(found) << t.symbol;
  }
}

}  // namespace
}  // namespace uprof
