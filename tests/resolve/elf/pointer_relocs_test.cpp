// pointer_relocs against readelf -rW on the same files: libc (40 IRELATIVE slots in
// Debian 12's, strlen's among them) and both architectures' libpick.so.
#include "uprof/resolve/elf/pointer_relocs.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "support/test_support.h"

namespace uprof {
namespace {

using Kind = PointerReloc::Kind;

// readelf's lines, by kind:
//   00000000001d3080  0000000000000025 R_X86_64_IRELATIVE                        9f1c0
//   0000000000003fd0  0000000500000006 R_X86_64_GLOB_DAT      0000000000001100 pick_b + 0
struct ReadelfRelocs {
  std::map<Kind, int> count;
  std::set<std::pair<uint64_t, int64_t>> irelative;  // (slot, resolver)
  std::set<std::pair<uint64_t, std::string>> named;   // (slot, symbol) of GLOB_DAT and JUMP_SLOT
};
ReadelfRelocs readelf(const std::string& path) {
  static const std::map<std::string, Kind> kinds{
      {"R_X86_64_IRELATIVE", Kind::Irelative}, {"R_X86_64_GLOB_DAT", Kind::GlobDat},
      {"R_X86_64_JUMP_SLOT", Kind::JumpSlot},  {"R_X86_64_64", Kind::Abs64},
      {"R_AARCH64_IRELATIVE", Kind::Irelative}, {"R_AARCH64_GLOB_DAT", Kind::GlobDat},
      {"R_AARCH64_JUMP_SLOT", Kind::JumpSlot},  {"R_AARCH64_ABS64", Kind::Abs64}};
  ReadelfRelocs out;
  std::istringstream in(test::run_shell("readelf -rW " + path).out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string slot, info, type, value, symbol;
    if (!(ls >> slot >> info >> type)) continue;
    auto k = kinds.find(type);
    if (k == kinds.end()) continue;
    out.count[k->second]++;
    ls >> value >> symbol;
    if (k->second == Kind::Irelative)
      out.irelative.emplace(std::stoull(slot, nullptr, 16), std::stoll(value, nullptr, 16));
    else if (k->second != Kind::Abs64)
      out.named.emplace(std::stoull(slot, nullptr, 16), symbol.substr(0, symbol.find('@')));
  }
  return out;
}

void expect_same_as_readelf(const std::string& path) {
  auto elf = ElfFile::open(path);
  ASSERT_TRUE(elf) << elf.error().message;
  const ReadelfRelocs want = readelf(path);
  ASSERT_FALSE(want.count.empty()) << path;
  ReadelfRelocs got;
  for (const PointerReloc& r : pointer_relocs(*elf)) {
    got.count[r.kind]++;
    if (r.kind == Kind::Irelative) got.irelative.emplace(r.slot, r.addend);
    else if (r.kind != Kind::Abs64) got.named.emplace(r.slot, r.symbol);
  }
  EXPECT_EQ(got.count, want.count) << path;
  EXPECT_EQ(got.irelative, want.irelative) << path;
  EXPECT_EQ(got.named, want.named) << path;
}

TEST(PointerRelocs, LibcAsReadelfListsThem) {
  expect_same_as_readelf("/usr/lib/x86_64-linux-gnu/libc.so.6");
}

TEST(PointerRelocs, FixtureOnBothArchitectures) {
  expect_same_as_readelf(test::fixture("x86_64", "libpick.so"));
  expect_same_as_readelf(test::fixture("arm64", "libpick.so"));
  expect_same_as_readelf(test::fixture("x86_64", "pick_exe"));
}

}  // namespace
}  // namespace uprof
