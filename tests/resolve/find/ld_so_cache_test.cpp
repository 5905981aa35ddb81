#include "uprof/resolve/find/ld_so_cache.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <utility>

#include "support/test_support.h"

namespace uprof {
namespace {

using Bytes = std::vector<std::byte>;

template <class T>
void put(Bytes& b, std::size_t off, T v) {
  if (b.size() < off + sizeof v) b.resize(off + sizeof v);
  std::memcpy(b.data() + off, &v, sizeof v);
}

void put_str(Bytes& b, std::size_t off, std::string_view s) {
  if (b.size() < off + s.size()) b.resize(off + s.size());
  std::memcpy(b.data() + off, s.data(), s.size());
}

// Writes caches the way ldconfig lays them out (see ld_so_cache.cpp), so each
// test can then break exactly one thing.
struct CacheBuilder {
  struct Entry {
    int32_t flags;
    std::string soname, path;
    uint64_t hwcap = 0;
  };
  std::vector<Entry> entries;
  uint8_t header_flags = 2;  // little endian

  // The string area: "soname\0path\0" per entry; offsets relative to its start.
  std::string strings(std::vector<std::pair<uint32_t, uint32_t>>& offs) const {
    std::string s;
    for (auto& e : entries) {
      uint32_t k = static_cast<uint32_t>(s.size());
      s += e.soname + '\0';
      uint32_t v = static_cast<uint32_t>(s.size());
      s += e.path + '\0';
      offs.emplace_back(k, v);
    }
    return s;
  }

  Bytes new_format() const {
    Bytes b;
    std::vector<std::pair<uint32_t, uint32_t>> offs;
    std::string str = strings(offs);
    uint32_t table = static_cast<uint32_t>(48 + 24 * entries.size());
    put_str(b, 0, "glibc-ld.so.cache1.1");
    put<uint32_t>(b, 20, static_cast<uint32_t>(entries.size()));
    put<uint32_t>(b, 24, static_cast<uint32_t>(str.size()));
    put<uint8_t>(b, 28, header_flags);
    put<uint32_t>(b, 44, 0);
    for (std::size_t i = 0; i < entries.size(); i++) {
      std::size_t at = 48 + 24 * i;
      put<int32_t>(b, at, entries[i].flags);
      put<uint32_t>(b, at + 4, table + offs[i].first);
      put<uint32_t>(b, at + 8, table + offs[i].second);
      put<uint32_t>(b, at + 12, 0);
      put<uint64_t>(b, at + 16, entries[i].hwcap);
    }
    put_str(b, table, str);
    return b;
  }

  // glibc 2.2..2.31 default: old table first, new one hidden in its strings.
  Bytes with_old_prefix() const {
    Bytes b;
    put_str(b, 0, "ld.so-1.7.0");
    put<uint32_t>(b, 12, static_cast<uint32_t>(entries.size()));
    std::size_t old_strings = 16 + 12 * entries.size();
    std::size_t base = (old_strings + 7) & ~std::size_t{7};
    Bytes nf = new_format();
    for (std::size_t i = 0; i < entries.size(); i++) {
      std::size_t at = 16 + 12 * i;
      // Old offsets point at the same strings, counted from old_strings.
      uint32_t k, v;
      std::memcpy(&k, nf.data() + 48 + 24 * i + 4, 4);
      std::memcpy(&v, nf.data() + 48 + 24 * i + 8, 4);
      put<int32_t>(b, at, entries[i].flags);
      put<uint32_t>(b, at + 4, static_cast<uint32_t>(base - old_strings + k));
      put<uint32_t>(b, at + 8, static_cast<uint32_t>(base - old_strings + v));
    }
    b.resize(base);
    b.insert(b.end(), nf.begin(), nf.end());
    return b;
  }

  Bytes old_only() const {
    Bytes b;
    std::vector<std::pair<uint32_t, uint32_t>> offs;
    std::string str = strings(offs);
    put_str(b, 0, "ld.so-1.7.0");
    put<uint32_t>(b, 12, static_cast<uint32_t>(entries.size()));
    for (std::size_t i = 0; i < entries.size(); i++) {
      std::size_t at = 16 + 12 * i;
      put<int32_t>(b, at, entries[i].flags);
      put<uint32_t>(b, at + 4, offs[i].first);
      put<uint32_t>(b, at + 8, offs[i].second);
    }
    put_str(b, 16 + 12 * entries.size(), str);
    return b;
  }
};

CacheBuilder sample() {
  CacheBuilder c;
  c.entries = {{0x0303, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"},
               {0x0003, "libc.so.6", "/lib32/libc.so.6"},
               {0x0a03, "libm.so.6", "/usr/aarch64-linux-gnu/lib/libm.so.6"}};
  return c;
}

void expect_sample(const Result<std::vector<LdCacheEntry>>& r) {
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].soname, "libc.so.6");
  EXPECT_EQ((*r)[0].path, "/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ((*r)[0].flags, 0x0303u);
  EXPECT_EQ((*r)[1].path, "/lib32/libc.so.6");
  EXPECT_EQ((*r)[2].soname, "libm.so.6");
  EXPECT_EQ((*r)[2].flags, 0x0a03u);
}

TEST(LdSoCache, ParsesNewFormat) { expect_sample(parse_ld_so_cache(sample().new_format())); }

TEST(LdSoCache, ParsesOldPrefixFollowedByNewFormat) {
  expect_sample(parse_ld_so_cache(sample().with_old_prefix()));
  // An odd entry count puts the new header at a padded (8-aligned) offset.
  CacheBuilder c = sample();
  c.entries.pop_back();
  c.entries.pop_back();
  auto r = parse_ld_so_cache(c.with_old_prefix());
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].path, "/lib/x86_64-linux-gnu/libc.so.6");
}

TEST(LdSoCache, ParsesOldFormatAlone) { expect_sample(parse_ld_so_cache(sample().old_only())); }

TEST(LdSoCache, FlagsSelectTheArchitecture) {
  auto r = parse_ld_so_cache(sample().new_format());
  ASSERT_TRUE(r);
  EXPECT_TRUE(ld_cache_entry_matches((*r)[0], Arch::X86_64));
  EXPECT_FALSE(ld_cache_entry_matches((*r)[1], Arch::X86_64));  // i386 libc6
  EXPECT_FALSE(ld_cache_entry_matches((*r)[0], Arch::Arm64));
  EXPECT_TRUE(ld_cache_entry_matches((*r)[2], Arch::Arm64));
}

TEST(LdSoCache, EmptyCacheIsValid) {
  auto r = parse_ld_so_cache(CacheBuilder{}.new_format());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->empty());
}

TEST(LdSoCache, TruncatedFileIsAnErrorAtEveryLength) {
  Bytes full = sample().with_old_prefix();
  for (std::size_t n = 0; n < full.size(); n++) {
    auto r = parse_ld_so_cache(std::span(full).first(n));
    ASSERT_FALSE(r) << "prefix of " << n << " bytes parsed";
    EXPECT_NE(r.error().message.find("byte offset"), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
  auto r = parse_ld_so_cache(std::span(full).first(30));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().message;
}

TEST(LdSoCache, BadMagic) {
  Bytes b = sample().new_format();
  put_str(b, 0, "glibc-ld.so.cache9.9");
  auto r = parse_ld_so_cache(b);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("bad magic at byte offset 0"), std::string::npos)
      << r.error().message;
  EXPECT_FALSE(parse_ld_so_cache(Bytes(100, std::byte{0})));
}

TEST(LdSoCache, StringOffsetOutsideTheFile) {
  Bytes b = sample().new_format();
  put<uint32_t>(b, 48 + 24 * 1 + 8, 0x7fffff00u);  // entry 1's path
  auto r = parse_ld_so_cache(b);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("path offset at byte offset 80"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find(std::to_string(0x7fffff00u)), std::string::npos);
  EXPECT_NE(r.error().message.find("outside the file"), std::string::npos);

  Bytes old = sample().old_only();
  put<uint32_t>(old, 16 + 4, 0xffffffffu);  // entry 0's soname
  auto ro = parse_ld_so_cache(old);
  ASSERT_FALSE(ro);
  EXPECT_NE(ro.error().message.find("soname offset at byte offset 20"), std::string::npos)
      << ro.error().message;
}

TEST(LdSoCache, StringWithoutNulAtTheEnd) {
  Bytes b = sample().new_format();
  b.pop_back();  // the last path loses its NUL; shrink len_strings to match
  uint32_t len;
  std::memcpy(&len, b.data() + 24, 4);
  put<uint32_t>(b, 24, len - 1);
  auto r = parse_ld_so_cache(b);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no terminating NUL"), std::string::npos) << r.error().message;
}

TEST(LdSoCache, HugeCountIsRejectedBeforeAllocating) {
  for (uint32_t n : {0xffffffffu, 0x10000000u, 0x0aaaaaabu}) {
    Bytes b = sample().new_format();
    put<uint32_t>(b, 20, n);
    auto r = parse_ld_so_cache(b);
    ASSERT_FALSE(r) << n;
    EXPECT_NE(r.error().message.find("entry count " + std::to_string(n) + " at byte offset 20"),
              std::string::npos)
        << r.error().message;

    Bytes o = sample().with_old_prefix();
    put<uint32_t>(o, 12, n);
    auto ro = parse_ld_so_cache(o);
    ASSERT_FALSE(ro) << n;
    EXPECT_NE(ro.error().message.find("at byte offset 12"), std::string::npos)
        << ro.error().message;
  }
}

TEST(LdSoCache, StringTableLengthPastTheEnd) {
  Bytes b = sample().new_format();
  put<uint32_t>(b, 24, 0xfffffff0u);
  auto r = parse_ld_so_cache(b);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("string table"), std::string::npos) << r.error().message;
}

TEST(LdSoCache, ForeignEndiannessIsRefused) {
  CacheBuilder c = sample();
  c.header_flags = std::endian::native == std::endian::little ? 3 : 2;
  auto r = parse_ld_so_cache(c.new_format());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("endian"), std::string::npos) << r.error().message;
  c.header_flags = 0;  // written by an ldconfig older than the marker: accepted
  EXPECT_TRUE(parse_ld_so_cache(c.new_format()));
}

TEST(LdSoCache, RandomCorruptionNeverCrashes) {
  std::mt19937 rng(1234);
  Bytes base = sample().with_old_prefix();
  for (int round = 0; round < 2000; round++) {
    Bytes b = base;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; i++) b[rng() % b.size()] = static_cast<std::byte>(rng());
    auto r = parse_ld_so_cache(b);
    if (r) {
      EXPECT_LE(r->size(), b.size() / 12);
    }
  }
}

TEST(LdSoCache, MissingFileNamesIt) {
  auto r = read_ld_so_cache("/nonexistent/ld.so.cache");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/nonexistent/ld.so.cache"), std::string::npos);
}

// The real cache, entry by entry, against what `ldconfig -p` prints:
//   	libc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6
TEST(LdSoCache, RealCacheMatchesLdconfig) {
  if (!std::filesystem::exists("/etc/ld.so.cache")) GTEST_SKIP() << "no /etc/ld.so.cache";
  auto p = test::run_shell("PATH=\"$PATH:/sbin:/usr/sbin\" ldconfig -p");
  if (p.exit_code != 0) GTEST_SKIP() << "ldconfig -p failed: " << p.err;

  std::vector<std::pair<std::string, std::string>> printed;
  std::string libc_path;
  std::istringstream in(p.out);
  for (std::string line; std::getline(in, line);) {
    auto arrow = line.rfind(" => ");
    auto paren = line.find(" (");
    if (arrow == std::string::npos || paren == std::string::npos) continue;
    std::size_t start = line.find_first_not_of(" \t");
    std::string soname = line.substr(start, paren - start);
    std::string path = line.substr(arrow + 4);
    printed.emplace_back(soname, path);
    bool host64 = line.find("x86-64)") != std::string::npos || line.find("AArch64)") != std::string::npos;
    if (soname == "libc.so.6" && host64) libc_path = path;
  }
  ASSERT_FALSE(printed.empty()) << p.out;

  auto r = read_ld_so_cache();
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), printed.size());
  for (std::size_t i = 0; i < printed.size(); i++) {
    EXPECT_EQ((*r)[i].soname, printed[i].first) << i;
    EXPECT_EQ((*r)[i].path, printed[i].second) << i;
  }

  ASSERT_FALSE(libc_path.empty()) << "ldconfig -p lists no 64-bit libc.so.6";
  bool found = false;
  for (auto& e : *r)
    if (e.soname == "libc.so.6" && ld_cache_entry_matches(e, host_arch())) {
      EXPECT_EQ(e.path, libc_path);
      found = true;
      break;
    }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace uprof
