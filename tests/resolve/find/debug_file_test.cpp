// Where a stripped binary's debug file is found, on copies of the test build's
// stripped fixtures laid out as gdb's debug directories are:
//   DIR/.build-id/3f/2a9c....debug      by build-id
//   DIR/<binary's dir>/<debuglink>      the binary's absolute path mirrored under DIR
//   DIR/<debuglink>                     debug files side by side
// and what is refused: another build's file by its build-id, a file of the right name
// with the wrong contents by the debuglink's CRC-32 (funcs_noid has no build-id).
#include "uprof/resolve/find/debug_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.h"
#include "uprof/resolve/resolver.h"

namespace uprof {
namespace {

namespace fs = std::filesystem;
using test::fixture;

// A copy of a stripped fixture alone in DIR/bin (its debug file not beside it), and
// an empty debug directory DIR/debug.
struct Layout {
  test::TempDir dir;
  std::string bin;
  std::string debug;
  explicit Layout(const std::string& name) {
    fs::create_directories(dir.path() + "/bin");
    fs::create_directories(dir.path() + "/debug");
    bin = dir.path() + "/bin/" + name;
    debug = dir.path() + "/debug";
    fs::copy_file(fixture("x86_64", name), bin);
  }
  void put(const std::string& rel, const std::string& from) const {
    fs::path to = debug + "/" + rel;
    fs::create_directories(to.parent_path());
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  }
  DebugFileLookup lookup() const {
    auto elf = ElfFile::open(bin);
    EXPECT_TRUE(elf) << elf.error().message;
    return find_debug_file(*elf, DebugSearch{.debug_dirs = {debug}});
  }
};

TEST(DebugFile, CandidatesInGdbOrder) {
  EXPECT_EQ(debuglink_candidates("/opt/app/bin", "app.debug", {"/usr/lib/debug", "/srv/dbg/"}),
            (std::vector<std::string>{"/opt/app/bin/app.debug", "/opt/app/bin/.debug/app.debug",
                                      "/usr/lib/debug/opt/app/bin/app.debug", "/srv/dbg/opt/app/bin/app.debug",
                                      "/usr/lib/debug/app.debug", "/srv/dbg/app.debug"}));
}

TEST(DebugFile, NothingFoundListsEveryPlace) {
  Layout l("funcs_stripped");
  auto found = l.lookup();
  EXPECT_FALSE(found.path);
  // build-id, then the debuglink's four places; never debuginfod unless asked.
  ASSERT_EQ(found.looked_in.size(), 5u);
  EXPECT_EQ(found.looked_in[3], l.debug + l.dir.path() + "/bin/funcs_stripped.debug");
  EXPECT_EQ(found.looked_in[4], l.debug + "/funcs_stripped.debug");
}

TEST(DebugFile, DebugDirSideBySide) {
  Layout l("funcs_stripped");
  l.put("funcs_stripped.debug", fixture("x86_64", "funcs_stripped.debug"));
  auto found = l.lookup();
  ASSERT_TRUE(found.path);
  EXPECT_EQ(*found.path, l.debug + "/funcs_stripped.debug");
  EXPECT_TRUE(found.rejected.empty());
}

TEST(DebugFile, DebugDirMirrorsTheBinarysPath) {
  Layout l("funcs_stripped");
  l.put(l.dir.path().substr(1) + "/bin/funcs_stripped.debug", fixture("x86_64", "funcs_stripped.debug"));
  auto found = l.lookup();
  ASSERT_TRUE(found.path);
  EXPECT_EQ(*found.path, l.debug + l.dir.path() + "/bin/funcs_stripped.debug");

  // Reached through a symlinked directory, the binary's directory is its real one, as gdb takes it.
  fs::create_directory_symlink(l.dir.path() + "/bin", l.dir.path() + "/via");
  auto elf = ElfFile::open(l.dir.path() + "/via/funcs_stripped");
  ASSERT_TRUE(elf);
  auto via = find_debug_file(*elf, DebugSearch{.debug_dirs = {l.debug}});
  ASSERT_TRUE(via.path);
  EXPECT_EQ(*via.path, *found.path);
}

TEST(DebugFile, AnotherBuildIsRefusedByItsBuildId) {
  Layout l("funcs_stripped");
  l.put("funcs_stripped.debug", fixture("x86_64", "funcs_O0_pie"));
  auto found = l.lookup();
  EXPECT_FALSE(found.path);
  ASSERT_EQ(found.rejected.size(), 1u);
  auto other = ElfFile::open(fixture("x86_64", "funcs_O0_pie"));
  auto mine = ElfFile::open(l.bin);
  ASSERT_TRUE(other && mine);
  EXPECT_EQ(found.rejected[0], l.debug + "/funcs_stripped.debug: build-id " + other->build_id() + " differs from " +
                                   mine->build_id());
}

TEST(DebugFile, NoBuildIdMatchesByCrc) {
  Layout l("funcs_noid_stripped");
  auto elf = ElfFile::open(l.bin);
  ASSERT_TRUE(elf);
  ASSERT_TRUE(elf->build_id().empty());
  ASSERT_TRUE(elf->debuglink());
  EXPECT_EQ(elf->debuglink()->file, "funcs_noid.debug");

  // The right contents, side by side and mirrored: found.
  l.put("funcs_noid.debug", fixture("x86_64", "funcs_noid.debug"));
  auto found = l.lookup();
  ASSERT_TRUE(found.path);
  EXPECT_EQ(*found.path, l.debug + "/funcs_noid.debug");
}

TEST(DebugFile, WrongCrcIsRefusedWithTheReason) {
  Layout l("funcs_noid_stripped");
  // The debug file with one byte more at the end: still an ELF file of the right
  // name, no build-id to tell, but not what the debuglink's CRC-32 describes.
  l.put("funcs_noid.debug", fixture("x86_64", "funcs_noid.debug"));
  { std::ofstream(l.debug + "/funcs_noid.debug", std::ios::app) << '\n'; }
  auto elf = ElfFile::open(l.bin);
  ASSERT_TRUE(elf && elf->debuglink());
  char want[16];
  std::snprintf(want, sizeof want, "0x%08x", elf->debuglink()->crc);

  auto found = l.lookup();
  EXPECT_FALSE(found.path);
  ASSERT_EQ(found.rejected.size(), 1u);
  const std::string& why = found.rejected[0];
  EXPECT_EQ(why.rfind(l.debug + "/funcs_noid.debug: CRC-32 0x", 0), 0u) << why;
  EXPECT_NE(why.find(std::string(" does not match ") + want + " in " + l.bin + "'s .gnu_debuglink"),
            std::string::npos)
      << why;

  // The resolver's error says it too.
  Resolver r(ResolveOptions{.debug = {.debug_dirs = {l.debug}}, .libraries = {}});
  auto spec = parse_probe_spec("helper2_call");
  ASSERT_TRUE(spec);
  auto probes = r.resolve(*spec, l.bin);
  ASSERT_FALSE(probes);
  EXPECT_NE(probes.error().message.find("the file is stripped and no debug file was found"), std::string::npos);
  EXPECT_NE(probes.error().message.find(l.debug + "/funcs_noid.debug (CRC-32 0x"), std::string::npos)
      << probes.error().message;
}

}  // namespace
}  // namespace uprof
