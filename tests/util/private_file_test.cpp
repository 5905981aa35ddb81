// PrivateFile: a new file beside its name, 0600, renamed onto the name; what is at the
// name is never followed nor written on.
#include "uprof/util/private_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "support/test_support.h"

namespace uprof {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(PrivateFile, WrittenBesideThenPlacedOverARegularFile) {
  test::TempDir dir;
  const std::string path = dir.file("out.txt");
  std::ofstream(path) << "old";
  auto f = PrivateFile::create(path);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(std::filesystem::path(f->temp_path()).parent_path(), dir.path());
  EXPECT_TRUE(std::filesystem::path(f->temp_path()).filename().string().starts_with(".out.txt."));
  ASSERT_EQ(::write(f->fd(), "new", 3), 3);
  EXPECT_EQ(slurp(path), "old");  // not yet placed
  ASSERT_TRUE(f->place());
  EXPECT_EQ(slurp(path), "new");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"out.txt"});
}

TEST(PrivateFile, NeverPlacedIsRemoved) {
  test::TempDir dir;
  { auto f = PrivateFile::create(dir.file("gone")); ASSERT_TRUE(f); }
  EXPECT_TRUE(names_in(dir.path()).empty());
}

TEST(PrivateFile, RefusesLinksAndOtherTypesByName) {
  test::TempDir dir;
  const std::string target = dir.file("target"), link = dir.file("link"), fifo = dir.file("fifo");
  std::ofstream(target) << "keep";
  std::filesystem::create_symlink(target, link);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto l = PrivateFile::create(link);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().message, link + " is a symbolic link (to " + target +
                                   "): uprof neither writes through a link nor replaces it; remove it or name another "
                                   "file");
  EXPECT_EQ(slurp(target), "keep");
  auto p = PrivateFile::check(fifo);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, fifo + " is a FIFO (named pipe), not a regular file: uprof writes only regular files; "
                                      "name another file");
  EXPECT_EQ(PrivateFile::check(dir.path()).error().message, dir.path() + ": is a directory");
  EXPECT_EQ(PrivateFile::check(dir.file("no/x")).error().message,
            dir.file("no/x") + ": the directory " + dir.file("no") + " does not exist");
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"fifo", "link", "target"}));
}

// A link that appears at the name after the check is replaced, never followed.
TEST(PrivateFile, ALinkPlantedAfterTheCheckIsReplacedNotFollowed) {
  test::TempDir dir;
  const std::string target = dir.file("target"), path = dir.file("out");
  std::ofstream(target) << "keep";
  auto f = PrivateFile::create(path);
  ASSERT_TRUE(f);
  std::filesystem::create_symlink(target, path);
  ASSERT_EQ(::write(f->fd(), "mine", 4), 4);
  ASSERT_TRUE(f->place());
  EXPECT_EQ(slurp(target), "keep");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_EQ(slurp(path), "mine");
}

TEST(PrivateFile, OwnedByTheUserWhoRanSudo) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root: chown to another user";
  test::TempDir dir;
  // This test's own values, and the caller's back after it (a test run under sudo).
  std::vector<std::pair<const char*, std::optional<std::string>>> saved;
  for (const char* name : {"SUDO_UID", "SUDO_GID"}) {
    const char* v = std::getenv(name);
    saved.push_back({name, v ? std::optional<std::string>(v) : std::nullopt});
  }
  ::setenv("SUDO_UID", "65534", 1);
  ::setenv("SUDO_GID", "65533", 1);
  auto f = PrivateFile::create(dir.file("mine"));
  for (const auto& [name, v] : saved) {
    if (v) ::setenv(name, v->c_str(), 1);
    else ::unsetenv(name);
  }
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->place());
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65533u);
}

}  // namespace
}  // namespace uprof
