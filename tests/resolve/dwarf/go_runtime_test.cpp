// Where runtime.g keeps the goroutine id, from the DWARF of the Go fixture as Go's own
// toolchain builds it (both architectures: the same 64-bit layout); a C program has no
// Go runtime. That it is the id and not another field of g is checked live
// (Go.GoroutinesThatGrowTheirStacks...: the workers' ids are consecutive).
#include "uprof/resolve/dwarf/go_runtime.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.h"
#include "uprof/resolve/elf/elf_file.h"

namespace uprof {
namespace {

TEST(GoRuntime, TheGoroutineIdsOffsetIsReadFromTheProgramsDwarf) {
  std::optional<uint32_t> first;
  for (const char* arch : {"x86_64", "arm64"}) {
    SCOPED_TRACE(arch);
    const std::string path = test::fixture(arch, "go_gw");
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no Go toolchain when the tests were built (" << path
                                                     << " missing): scripts/setup.sh installs golang-go";
    auto elf = ElfFile::open(path);
    ASSERT_TRUE(elf.ok()) << elf.error().message;
    auto off = go_goid_offset(elf->elf());
    ASSERT_TRUE(off);
    EXPECT_EQ(*off % 8, 0u);  // an int64
    EXPECT_GT(*off, 0u);      // g starts with its stack bounds
    if (first) {
      EXPECT_EQ(*off, *first);
    }
    first = off;
  }
  auto c = ElfFile::open(test::fixture("x86_64", "alone_argv"));
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(go_goid_offset(c->elf()));
}

}  // namespace
}  // namespace uprof
