#include "uprof/resolve/find/library_search.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <sstream>

#include "support/test_support.h"

namespace uprof {
namespace {

namespace fs = std::filesystem;
using test::fixture;

ElfFile open_elf(const std::string& path) {
  auto f = ElfFile::open(path);
  EXPECT_TRUE(f) << f.error().message;
  return std::move(f).value();
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return !a.empty() && !b.empty() && fs::equivalent(a, b, ec);
}

const NeededLibrary* find_needed(const std::vector<NeededLibrary>& libs, const std::string& soname) {
  for (auto& l : libs)
    if (l.soname == soname) return &l;
  return nullptr;
}

struct LddLine {
  std::string soname;
  std::string path;  // "" for "not found"
};

// `ldd` lines of the form "\tlibfx.so.1 => /dir/libfx.so.1 (0x...)" or
// "\tlibdep.so.1 => not found", in the order the loader mapped them.
std::vector<LddLine> ldd(const std::string& bin) {
  auto r = test::run({"ldd", bin});
  std::vector<LddLine> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    auto arrow = line.find(" => ");
    if (arrow == std::string::npos) continue;
    std::size_t start = line.find_first_not_of(" \t");
    std::string rest = line.substr(arrow + 4);
    std::string path = rest.starts_with("not found") ? "" : rest.substr(0, rest.find(" ("));
    out.push_back({line.substr(start, arrow - start), path});
  }
  return out;
}

// Every library ldd resolves (or fails to) is resolved the same way, in the same order.
void expect_agrees_with_ldd(const std::string& bin) {
  auto f = open_elf(bin);
  auto ours = needed_libraries(f);
  auto theirs = ldd(bin);
  ASSERT_FALSE(theirs.empty()) << "ldd printed nothing for " << bin;
  std::vector<std::string> our_order, their_order;
  for (auto& t : theirs) {
    const NeededLibrary* n = find_needed(ours, t.soname);
    ASSERT_NE(n, nullptr) << t.soname << " (ldd) missing from needed_libraries(" << bin << ")";
    if (t.path.empty())
      EXPECT_EQ(n->path, "") << t.soname;
    else
      EXPECT_TRUE(same_file(n->path, t.path)) << t.soname << ": " << n->path << " vs ldd " << t.path;
    their_order.push_back(t.soname);
  }
  for (auto& n : ours)
    for (auto& t : theirs)
      if (t.soname == n.soname) our_order.push_back(n.soname);
  EXPECT_EQ(our_order, their_order);
}

TEST(LibrarySearch, UselibNeedsMatchLdd) {
  std::string bin = fixture("x86_64", "uselib");
  auto f = open_elf(bin);
  auto libs = needed_libraries(f);
  ASSERT_GE(libs.size(), 2u);
  EXPECT_EQ(libs[0].soname, "libfx.so.1");
  EXPECT_TRUE(same_file(libs[0].path, fixture("x86_64", "libfx.so.1"))) << libs[0].path;
  EXPECT_EQ(libs[1].soname, "libc.so.6");
  EXPECT_FALSE(libs[1].path.empty());
  // libc's own need of the loader is met by the program interpreter.
  const NeededLibrary* rtld = find_needed(libs, "ld-linux-x86-64.so.2");
  ASSERT_NE(rtld, nullptr);
  EXPECT_EQ(rtld->path, f.dynamic().interp);
  expect_agrees_with_ldd(bin);
}

TEST(LibrarySearch, OriginIsTheProgramsDirectory) {
  test::TempDir tmp;
  fs::copy_file(fixture("x86_64", "uselib"), tmp.file("uselib"));
  fs::copy_file(fixture("x86_64", "libfx.so.1"), tmp.file("libfx.so.1"));
  auto libs = needed_libraries(open_elf(tmp.file("uselib")));
  ASSERT_FALSE(libs.empty());
  EXPECT_EQ(libs[0].path, tmp.path() + "/libfx.so.1");
  expect_agrees_with_ldd(tmp.file("uselib"));
}

TEST(LibrarySearch, MissingAndForeignLibrariesStayUnresolved) {
  test::TempDir tmp;
  fs::copy_file(fixture("x86_64", "uselib"), tmp.file("uselib"));
  auto f = open_elf(tmp.file("uselib"));
  auto libs = needed_libraries(f);
  ASSERT_NE(find_needed(libs, "libfx.so.1"), nullptr);
  EXPECT_EQ(find_needed(libs, "libfx.so.1")->path, "");
  EXPECT_FALSE(find_needed(libs, "libc.so.6")->path.empty());

  // An aarch64 libfx.so.1 beside an x86-64 program is skipped, as the loader skips it.
  fs::copy_file(fixture("arm64", "libfx.so.1"), tmp.file("libfx.so.1"));
  libs = needed_libraries(f);
  EXPECT_EQ(find_needed(libs, "libfx.so.1")->path, "");
  auto r = find_library(f, "libfx");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("libfx.so.1"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("x86_64"), std::string::npos) << r.error().message;
}

// DT_RPATH is inherited by the libraries a program loads, DT_RUNPATH is not:
// main -> libmid.so -> libdep.so.1, with libdep.so.1 only in $ORIGIN/a.
TEST(LibrarySearch, RpathIsInheritedRunpathIsNot) {
  test::TempDir tmp;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(tmp.file(name)) << text;
  };
  write("dep.c", "int dep(void) { return 1; }\n");
  write("mid.c", "int dep(void);\nint mid(void) { return dep(); }\n");
  write("main.c", "int mid(void);\nint main(void) { return mid(); }\n");
  fs::create_directory(tmp.file("a"));
  std::string rp = " -Wl,-rpath,'$ORIGIN:$ORIGIN/a' -Wl,-rpath-link,a";
  auto built = test::run_shell(
      "cd " + tmp.path() + " && cc -shared -fPIC -o a/libdep.so.1 -Wl,-soname,libdep.so.1 dep.c" +
      " && cc -shared -fPIC -o libmid.so -Wl,-soname,libmid.so mid.c a/libdep.so.1" +
      " && cc -o main_rpath main.c libmid.so -Wl,--disable-new-dtags" + rp +
      " && cc -o main_runpath main.c libmid.so -Wl,--enable-new-dtags" + rp);
  if (built.exit_code != 0) GTEST_SKIP() << "cannot build test programs: " << built.err;

  auto with_rpath = needed_libraries(open_elf(tmp.file("main_rpath")));
  ASSERT_NE(find_needed(with_rpath, "libdep.so.1"), nullptr);
  EXPECT_EQ(find_needed(with_rpath, "libdep.so.1")->path, tmp.path() + "/a/libdep.so.1");
  EXPECT_EQ(find_needed(with_rpath, "libmid.so")->path, tmp.path() + "/libmid.so");
  expect_agrees_with_ldd(tmp.file("main_rpath"));

  auto with_runpath = needed_libraries(open_elf(tmp.file("main_runpath")));
  ASSERT_NE(find_needed(with_runpath, "libdep.so.1"), nullptr);
  EXPECT_EQ(find_needed(with_runpath, "libdep.so.1")->path, "");
  EXPECT_EQ(find_needed(with_runpath, "libmid.so")->path, tmp.path() + "/libmid.so");
  expect_agrees_with_ldd(tmp.file("main_runpath"));
}

TEST(LibrarySearch, FindsUselibLibrariesByShortName) {
  std::string bin = fixture("x86_64", "uselib");
  auto f = open_elf(bin);
  for (const char* name : {"libfx", "fx", "libfx.so.1", "libfx.so"}) {
    auto r = find_library(f, name);
    ASSERT_TRUE(r) << name << ": " << r.error().message;
    EXPECT_TRUE(same_file(*r, fixture("x86_64", "libfx.so.1"))) << name << " -> " << *r;
  }
  std::string ldd_libc;
  for (auto& l : ldd(bin))
    if (l.soname == "libc.so.6") ldd_libc = l.path;
  ASSERT_FALSE(ldd_libc.empty());
  for (const char* name : {"libc", "c", "libc.so.6", "libc.so"}) {
    auto r = find_library(f, name);
    ASSERT_TRUE(r) << name << ": " << r.error().message;
    EXPECT_TRUE(same_file(*r, ldd_libc)) << name << " -> " << *r;
  }
}

TEST(LibrarySearch, FallsBackToLdSoCache) {
  // uselib does not need libelf, but ldconfig knows it (uprof links it):
  // libelf.so.1 and its dev symlink libelf.so are one file, so not ambiguous.
  auto p = test::run_shell("PATH=\"$PATH:/sbin:/usr/sbin\" ldconfig -p | grep -F 'libelf.so.1 (libc6,x86-64)'");
  if (p.exit_code != 0) GTEST_SKIP() << "no x86-64 libelf.so.1 in ld.so.cache";
  std::string expected = p.out.substr(p.out.find(" => ") + 4);
  expected.erase(expected.find_last_not_of("\n ") + 1);
  auto r = find_library(open_elf(fixture("x86_64", "uselib")), "libelf");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(same_file(*r, expected)) << *r << " vs " << expected;
}

// No program: a short name means what ldconfig -p lists for the architecture.
TEST(LibrarySearch, WithoutAProgramLdSoCacheDecides) {
  for (const char* name : {"libc", "libz", "libelf"}) {
    SCOPED_TRACE(name);
    auto p = test::run_shell(std::string("PATH=\"$PATH:/sbin:/usr/sbin\" ldconfig -p | grep -E '^\\s+") + name +
                             "\\.so\\.[0-9]+ \\(libc6,x86-64\\)' | head -n 1");
    if (p.out.empty()) GTEST_SKIP() << name << " is not in ld.so.cache";
    std::string expected = p.out.substr(p.out.find(" => ") + 4);
    expected.erase(expected.find_last_not_of("\n ") + 1);
    auto r = find_system_library(name, Arch::X86_64);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(same_file(*r, expected)) << *r << " vs " << expected;
  }
  // An exact soname not in the cache is looked for in the default directories.
  LibrarySearchOptions no_cache{.ld_so_cache = "/nonexistent/ld.so.cache", .default_dirs = {}};
  auto c = find_system_library("libc.so.6", Arch::X86_64, no_cache);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(same_file(*c, "/lib/x86_64-linux-gnu/libc.so.6"));
  auto none = find_system_library("libnosuch", Arch::X86_64);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message.rfind("spec: library 'libnosuch' not found for x86_64 (looked in /etc/ld.so.cache and "
                                       "/lib/x86_64-linux-gnu, ",
                                       0),
            0u)
      << none.error().message;
}

TEST(LibrarySearch, PathsAreTakenAsGiven) {
  auto f = open_elf(fixture("x86_64", "uselib"));
  std::string lib = fixture("x86_64", "libfx.so.1");
  auto r = find_library(f, lib);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, lib);
  auto bad = find_library(f, "/nonexistent/libfx.so.1");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("/nonexistent/libfx.so.1"), std::string::npos);
}

TEST(LibrarySearch, UnknownNameSaysWhereItLooked) {
  std::string bin = fixture("x86_64", "uselib");
  auto r = find_library(open_elf(bin), "libnosuchlib");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "spec: library 'libnosuchlib' not found for " + bin +
                                   " (looked in its DT_NEEDED libraries and /etc/ld.so.cache)");
}

// A cache file written by the test: two versions of one library, an i386
// entry, and an entry whose file is gone.
void write_cache(const std::string& path,
                 const std::vector<std::tuple<int32_t, std::string, std::string>>& entries) {
  std::string strings;
  std::vector<std::pair<uint32_t, uint32_t>> offs;
  uint32_t table = static_cast<uint32_t>(48 + 24 * entries.size());
  for (auto& [flags, soname, file] : entries) {
    uint32_t k = table + static_cast<uint32_t>(strings.size());
    strings += soname + '\0';
    uint32_t v = table + static_cast<uint32_t>(strings.size());
    strings += file + '\0';
    offs.emplace_back(k, v);
  }
  std::string b(table, '\0');
  std::memcpy(b.data(), "glibc-ld.so.cache1.1", 20);
  uint32_t n = static_cast<uint32_t>(entries.size()), len = static_cast<uint32_t>(strings.size());
  std::memcpy(b.data() + 20, &n, 4);
  std::memcpy(b.data() + 24, &len, 4);
  for (std::size_t i = 0; i < entries.size(); i++) {
    std::memcpy(b.data() + 48 + 24 * i, &std::get<0>(entries[i]), 4);
    std::memcpy(b.data() + 48 + 24 * i + 4, &offs[i].first, 4);
    std::memcpy(b.data() + 48 + 24 * i + 8, &offs[i].second, 4);
  }
  std::ofstream(path, std::ios::binary) << b << strings;
}

TEST(LibrarySearch, CacheCandidatesAreFilteredAndAmbiguityIsReported) {
  test::TempDir tmp;
  fs::copy_file(fixture("x86_64", "libfx.so.1"), tmp.file("libamb.so.1"));
  fs::copy_file(fixture("x86_64", "libfx.so.1"), tmp.file("libamb.so.2"));
  write_cache(tmp.file("ld.so.cache"), {{0x0303, "libamb.so.2", tmp.file("libamb.so.2")},
                                        {0x0303, "libamb.so.1", tmp.file("libamb.so.1")},
                                        {0x0003, "libonly32.so.1", tmp.file("libamb.so.1")},
                                        {0x0303, "libgone.so.1", tmp.file("libgone.so.1")}});
  LibrarySearchOptions opts;
  opts.ld_so_cache = tmp.file("ld.so.cache");
  auto f = open_elf(fixture("x86_64", "uselib"));

  auto amb = find_library(f, "libamb", opts);
  ASSERT_FALSE(amb);
  const std::string& m = amb.error().message;
  EXPECT_NE(m.find("ambiguous"), std::string::npos) << m;
  EXPECT_NE(m.find("libamb.so.1 (" + tmp.file("libamb.so.1") + ")"), std::string::npos) << m;
  EXPECT_NE(m.find("libamb.so.2 (" + tmp.file("libamb.so.2") + ")"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);

  auto exact = find_library(f, "libamb.so.2", opts);
  ASSERT_TRUE(exact) << exact.error().message;
  EXPECT_EQ(*exact, tmp.file("libamb.so.2"));

  for (const char* name : {"libonly32", "libgone"}) {
    auto r = find_library(f, name, opts);
    ASSERT_FALSE(r) << name << " -> " << *r;
    EXPECT_NE(r.error().message.find("and " + opts.ld_so_cache + ")"), std::string::npos)
        << r.error().message;
  }
  // The needed libraries still resolve without the system cache (default dirs).
  auto libc = find_library(f, "libc", opts);
  EXPECT_TRUE(libc) << libc.error().message;
}

TEST(LibrarySearch, Arm64UselibKeepsToItsArchitecture) {
  auto f = open_elf(fixture("arm64", "uselib"));
  ASSERT_EQ(f.arch(), Arch::Arm64);
  auto libs = needed_libraries(f);
  ASSERT_NE(find_needed(libs, "libfx.so.1"), nullptr);
  EXPECT_TRUE(same_file(find_needed(libs, "libfx.so.1")->path, fixture("arm64", "libfx.so.1")));

  auto fx = find_library(f, "libfx");
  ASSERT_TRUE(fx) << fx.error().message;
  EXPECT_TRUE(same_file(*fx, fixture("arm64", "libfx.so.1"))) << *fx;

  // By default the host has no aarch64 libc in the cache or default dirs.
  auto libc = find_library(f, "libc");
  if (libc) {
    EXPECT_EQ(open_elf(*libc).arch(), Arch::Arm64) << *libc;
  } else {
    EXPECT_NE(libc.error().message.find("libc.so.6"), std::string::npos) << libc.error().message;
    EXPECT_NE(libc.error().message.find("arm64"), std::string::npos) << libc.error().message;
  }

  const std::string sysroot = "/usr/aarch64-linux-gnu/lib";
  if (!fs::exists(sysroot + "/libc.so.6")) GTEST_SKIP() << "no aarch64 sysroot";
  LibrarySearchOptions opts;
  opts.default_dirs = {sysroot};
  auto cross = find_library(f, "libc", opts);
  ASSERT_TRUE(cross) << cross.error().message;
  EXPECT_EQ(*cross, sysroot + "/libc.so.6");
  EXPECT_EQ(open_elf(*cross).arch(), Arch::Arm64);
}

TEST(LibrarySearch, ShortNameMatching) {
  struct Case {
    const char* soname;
    const char* name;
    bool match;
  };
  for (auto c : std::vector<Case>{{"libc.so.6", "libc", true},
                                  {"libc.so.6", "c", true},
                                  {"libc.so.6", "libc.so.6", true},
                                  {"libc.so.6", "libc.so", true},
                                  {"libstdc++.so.6", "libstdc++", true},
                                  {"libstdc++.so.6", "stdc++", true},
                                  {"libfx.so.1", "fx", true},
                                  {"libcrypt.so.1", "libc", false},
                                  {"libc.so.6", "libc.so.6.1", false},
                                  {"libfx.so.1", "libf", false},
                                  {"libfx.so.1", "", false}}) {
    EXPECT_EQ(library_name_matches(c.soname, c.name), c.match) << c.soname << " / " << c.name;
  }
}

}  // namespace
}  // namespace uprof
