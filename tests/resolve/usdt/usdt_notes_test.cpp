// USDT notes: the decoder on hand-built note bytes (every way a note can be
// malformed, prelink's moved base), then on real files against `readelf -n`'s view of
// them (python3.11, libstdc++ and the usdt fixtures), and the file offsets a uprobe
// gets checked against the bytes there: the probe's nop, the semaphore's u16.
#include "uprof/resolve/usdt/usdt_notes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "support/test_support.h"
#include "uprof/resolve/usdt/usdt_args.h"
#include "uprof/util/hex.h"

namespace uprof {
namespace {

using test::fixture;

// ---- hand-built notes ----

struct NoteBytes {
  std::vector<std::byte> b;
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void raw(const void* p, std::size_t n) {
    auto* c = static_cast<const std::byte*>(p);
    b.insert(b.end(), c, c + n);
  }
  void pad() {
    while (b.size() % 4) b.push_back(std::byte{0});
  }
  // One note: owner and type as given, the desc as three addresses and strings.
  void note(const std::string& owner, uint32_t type, uint64_t pc, uint64_t base, uint64_t sem,
            const std::string& strings /* "prov\0name\0args\0" */) {
    u32(static_cast<uint32_t>(owner.size() + 1));
    u32(static_cast<uint32_t>(24 + strings.size()));
    u32(type);
    raw(owner.c_str(), owner.size() + 1);
    pad();
    u64(pc);
    u64(base);
    u64(sem);
    raw(strings.data(), strings.size());
    pad();
  }
  std::span<const std::byte> span() const { return b; }
};

using namespace std::string_literals;

TEST(UsdtNotes, DecodesStapsdtNotesAndSkipsOthers) {
  NoteBytes n;
  n.note("stapsdt", 3, 0x43423c, 0x8cc5a0, 0xa8426c, "python\0line\0" "8@%r14 8@%rax -4@%ebp\0"s);
  n.note("GNU", 3, 1, 2, 3, "a\0b\0c\0"s);          // another owner
  n.note("stapsdt", 1, 1, 2, 3, "a\0b\0c\0"s);      // SDT v1: another type
  n.note("stapsdt", 3, 0x1000, 0x2000, 0, "p\0plain\0\0"s);
  auto notes = parse_stapsdt_notes(n.span(), 0x683278, "prog");
  ASSERT_TRUE(notes) << notes.error().message;
  ASSERT_EQ(notes->size(), 2u);
  const auto& a = (*notes)[0];
  EXPECT_EQ(a.provider, "python");
  EXPECT_EQ(a.name, "line");
  EXPECT_EQ(a.pc, 0x43423cu);
  EXPECT_EQ(a.base, 0x8cc5a0u);
  EXPECT_EQ(a.semaphore, 0xa8426cu);
  EXPECT_EQ(a.args, "8@%r14 8@%rax -4@%ebp");
  EXPECT_EQ(a.note_offset, 0x683278u);
  const auto& b = (*notes)[1];
  EXPECT_EQ(b.name, "plain");
  EXPECT_EQ(b.semaphore, 0u);
  EXPECT_EQ(b.args, "");
  EXPECT_EQ(b.note_offset, 0x683278u + n.b.size() - (12 + 8 + 24 + 12));
}

TEST(UsdtNotes, MalformedNotesNameTheFileAndTheNotesOffset) {
  auto error_of = [](const NoteBytes& n) {
    auto r = parse_stapsdt_notes(n.span(), 0x1000, "./prog");
    EXPECT_FALSE(r);
    return r ? std::string() : r.error().message;
  };
  NoteBytes good;
  good.note("stapsdt", 3, 1, 2, 3, "p\0n\0\0"s);
  std::size_t second = good.b.size();

  NoteBytes truncated = good;
  truncated.u32(8);
  truncated.u32(40);
  EXPECT_EQ(error_of(truncated),
            "usdt: ./prog: note at file offset " + hex(0x1000 + second) + ": truncated note header (0 bytes left)");

  NoteBytes long_desc;
  long_desc.u32(8);
  long_desc.u32(400);
  long_desc.u32(3);
  long_desc.raw("stapsdt", 8);
  long_desc.u64(1);
  EXPECT_EQ(error_of(long_desc), "usdt: ./prog: note at file offset 0x1000: desc of 400 bytes runs past the section's end");

  NoteBytes long_name;
  long_name.u32(0xffffffff);
  long_name.u32(0);
  long_name.u32(3);
  EXPECT_EQ(error_of(long_name),
            "usdt: ./prog: note at file offset 0x1000: name of 4294967295 bytes runs past the section's end");

  NoteBytes short_desc;
  short_desc.u32(8);
  short_desc.u32(20);
  short_desc.u32(3);
  short_desc.raw("stapsdt", 8);
  short_desc.u64(1);
  short_desc.u64(2);
  short_desc.u32(0);
  EXPECT_EQ(error_of(short_desc),
            "usdt: ./prog: note at file offset 0x1000: desc of 20 bytes is too short for 3 addresses");

  NoteBytes no_nul;
  no_nul.note("stapsdt", 3, 1, 2, 3, "prov\0name\0args"s);  // the arguments run into the padding
  no_nul.b.resize(no_nul.b.size() - (4 - (24 + 14) % 4) % 4);  // ... and the padding is cut off
  EXPECT_EQ(error_of(no_nul),
            "usdt: ./prog: note at file offset 0x1000: the arguments string at desc byte 34 has no NUL before the "
            "desc's end");

  NoteBytes empty_name;
  empty_name.note("stapsdt", 3, 1, 2, 3, "prov\0\0\0"s);
  EXPECT_EQ(error_of(empty_name), "usdt: ./prog: note at file offset 0x1000: empty provider or probe name");

  // An empty section has no notes, and no error.
  auto none = parse_stapsdt_notes({}, 0, "./prog");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

// python3.11's PT_LOADs: text at 0x41f000, data at 0x945dc8 (file 0x544dc8), .bss after 0xa84278.
const std::vector<LoadSegment> kLoads{
    {.vaddr = 0x400000, .memsz = 0x1e3e8, .offset = 0x0, .filesz = 0x1e3e8, .executable = false},
    {.vaddr = 0x41f000, .memsz = 0x2b2289, .offset = 0x1f000, .filesz = 0x2b2289, .executable = true},
    {.vaddr = 0x945dc8, .memsz = 0x1832f0, .offset = 0x544dc8, .filesz = 0x13e4b0, .executable = false},
};

UsdtNote note(uint64_t pc, uint64_t base, uint64_t sem) {
  return UsdtNote{.provider = "python", .name = "line", .pc = pc, .base = base, .semaphore = sem, .args = "",
                  .note_offset = 0x683278};
}

TEST(UsdtNotes, FileOffsetsComeFromThePtLoads) {
  auto p = locate_usdt_probes({note(0x43423c, 0x8cc5a0, 0xa8426c)}, 0x8cc5a0, kLoads, "python3.11");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ((*p)[0].vaddr, 0x43423cu);
  EXPECT_EQ((*p)[0].file_offset, 0x3423cu);
  EXPECT_EQ((*p)[0].semaphore_vaddr, 0xa8426cu);
  EXPECT_EQ((*p)[0].semaphore_offset, std::optional<uint64_t>(0x68326c));
  // No semaphore: none located.
  auto q = locate_usdt_probes({note(0x43423c, 0x8cc5a0, 0)}, 0x8cc5a0, kLoads, "python3.11");
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ((*q)[0].semaphore_vaddr, 0u);
  EXPECT_FALSE((*q)[0].semaphore_offset);
}

TEST(UsdtNotes, APrelinkedFileMovesPcAndSemaphoreByTheBasesMove) {
  // The notes say base 0x8cc5a0; the section is now at 0x8cd5a0: everything moved up by
  // 0x1000, the PT_LOADs too (kLoads are the moved ones), the notes' pc and semaphore not.
  auto up = locate_usdt_probes({note(0x43323c, 0x8cc5a0, 0xa8326c)}, 0x8cd5a0, kLoads, "p");
  ASSERT_TRUE(up) << up.error().message;
  EXPECT_EQ((*up)[0].vaddr, 0x43423cu);
  EXPECT_EQ((*up)[0].file_offset, 0x3423cu);
  EXPECT_EQ((*up)[0].semaphore_vaddr, 0xa8426cu);
  EXPECT_EQ((*up)[0].semaphore_offset, std::optional<uint64_t>(0x68326c));
  // ... and down.
  auto down = locate_usdt_probes({note(0x43523c, 0x8cc5a0, 0xa8526c)}, 0x8cb5a0, kLoads, "p");
  ASSERT_TRUE(down) << down.error().message;
  EXPECT_EQ((*down)[0].vaddr, 0x43423cu);
  EXPECT_EQ((*down)[0].semaphore_vaddr, 0xa8426cu);
  // No .stapsdt.base section: the note's addresses as they are.
  auto none = locate_usdt_probes({note(0x43423c, 0x1, 0)}, std::nullopt, kLoads, "p");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ((*none)[0].vaddr, 0x43423cu);
}

TEST(UsdtNotes, AddressesNoSegmentMapsAreErrorsNamingTheNote) {
  auto pc = locate_usdt_probes({note(0x10, 0x8cc5a0, 0)}, 0x8cc5a0, kLoads, "python3.11");
  ASSERT_FALSE(pc);
  EXPECT_EQ(pc.error().message,
            "usdt: python3.11: note at file offset 0x683278 (python:line): probe address 0x10 is in no loadable "
            "segment of the file");
  // A semaphore in .bss (beyond the data segment's file contents) has no file offset.
  auto bss = locate_usdt_probes({note(0x43423c, 0x8cc5a0, 0xa90000)}, 0x8cc5a0, kLoads, "python3.11");
  ASSERT_FALSE(bss);
  EXPECT_EQ(bss.error().message,
            "usdt: python3.11: note at file offset 0x683278 (python:line): semaphore address 0xa90000 is in no "
            "loadable segment of the file");
}

// ---- real files, against readelf ----

struct ReadelfNote {
  std::string provider{}, name{}, args{};
  uint64_t pc = 0, base = 0, semaphore = 0;
};

bool have_readelf() { return test::run_shell("command -v readelf").exit_code == 0; }

// `readelf -n FILE`'s stapsdt notes:
//     Provider: python
//     Name: line
//     Location: 0x000000000043423c, Base: 0x00000000008cc5a0, Semaphore: 0x0000000000a8426c
//     Arguments: 8@%r14 8@%rax -4@%ebp
std::vector<ReadelfNote> readelf_notes(const std::string& path) {
  auto r = test::run({"readelf", "-n", "-W", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<ReadelfNote> out;
  std::istringstream in(r.out);
  std::string line;
  auto field = [&](const std::string& key) -> std::optional<std::string> {
    auto at = line.find(key);
    if (at == std::string::npos) return std::nullopt;
    return line.substr(at + key.size());
  };
  while (std::getline(in, line)) {
    if (auto v = field("Provider: ")) out.push_back({.provider = *v});
    else if (out.empty()) continue;
    else if (auto n = field("Name: ")) out.back().name = *n;
    else if (auto a = field("Arguments: ")) out.back().args = *a;
    else if (line.find("Location: ") != std::string::npos) {
      EXPECT_EQ(std::sscanf(line.c_str(), " Location: %lx, Base: %lx, Semaphore: %lx", &out.back().pc,
                            &out.back().base, &out.back().semaphore),
                3)
          << line;
    }
  }
  // readelf prints "Arguments: " with nothing after it for a probe without arguments.
  for (auto& n : out)
    while (!n.args.empty() && n.args.back() == ' ') n.args.pop_back();
  return out;
}

struct SectionHeader {
  uint64_t addr = 0, offset = 0, size = 0;
};
// `readelf -SW FILE`'s line for `name`: "[27] .probes PROGBITS 0000000000a84260 683260 000018 ...".
std::optional<SectionHeader> readelf_section(const std::string& path, const std::string& name) {
  auto r = test::run({"readelf", "-SW", path});
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    auto at = line.find("] " + name + " ");
    if (at == std::string::npos) continue;
    std::istringstream f(line.substr(at + 2));
    std::string n, type;
    SectionHeader s;
    f >> n >> type >> std::hex >> s.addr >> s.offset >> s.size;
    return s;
  }
  return std::nullopt;
}

std::vector<UsdtProbe> probes_of(const std::string& path) {
  auto elf = ElfFile::open(path);
  EXPECT_TRUE(elf) << elf.error().message;
  if (!elf) return {};
  auto p = read_usdt_probes(*elf);
  EXPECT_TRUE(p) << p.error().message;
  return p ? *p : std::vector<UsdtProbe>{};
}

// Every probe matches readelf's note, its file offset holds a nop, its semaphore (if
// any) lies in .probes at the offset the section headers give, and its arguments parse.
void check_against_readelf(const std::string& path, Arch arch) {
  auto ours = probes_of(path);
  auto theirs = readelf_notes(path);
  ASSERT_EQ(ours.size(), theirs.size());
  auto elf = ElfFile::open(path);
  ASSERT_TRUE(elf);
  auto probes_section = readelf_section(path, ".probes");
  for (std::size_t i = 0; i < ours.size(); i++) {
    const auto& o = ours[i];
    const auto& t = theirs[i];
    SCOPED_TRACE(path + " " + t.provider + ":" + t.name);
    EXPECT_EQ(o.note.provider, t.provider);
    EXPECT_EQ(o.note.name, t.name);
    EXPECT_EQ(o.note.pc, t.pc);
    EXPECT_EQ(o.note.base, t.base);
    EXPECT_EQ(o.note.semaphore, t.semaphore);
    EXPECT_EQ(o.note.args, t.args);
    EXPECT_EQ(o.vaddr, t.pc);  // not prelinked
    if (arch == Arch::X86_64) {
      auto b = elf->read_bytes(o.file_offset, 1);
      ASSERT_TRUE(b);
      EXPECT_EQ((*b)[0], 0x90) << "no nop at file offset 0x" << std::hex << o.file_offset;
    } else {
      auto b = elf->read_bytes(o.file_offset, 4);
      ASSERT_TRUE(b);
      uint32_t insn = 0;
      std::memcpy(&insn, b->data(), 4);
      EXPECT_EQ(insn, 0xd503201fu) << "no nop at file offset 0x" << std::hex << o.file_offset;
    }
    if (t.semaphore == 0) {
      EXPECT_FALSE(o.semaphore_offset);
    } else {
      ASSERT_TRUE(probes_section) << "a semaphore but no .probes section";
      ASSERT_TRUE(o.semaphore_offset);
      EXPECT_GE(t.semaphore, probes_section->addr);
      EXPECT_LE(t.semaphore + 2, probes_section->addr + probes_section->size);
      EXPECT_EQ(*o.semaphore_offset, probes_section->offset + (t.semaphore - probes_section->addr));
    }
    auto args = parse_usdt_args(arch, o.note.args);
    EXPECT_TRUE(args) << args.error().message;
  }
}

TEST(UsdtNotes, Python311MatchesReadelf) {
  const std::string py = "/usr/bin/python3.11";
  if (access(py.c_str(), R_OK) != 0) GTEST_SKIP() << py << " is not installed";
  if (!have_readelf()) GTEST_SKIP() << "readelf (binutils) is not installed";
  check_against_readelf(py, Arch::X86_64);
  auto probes = probes_of(py);
  std::vector<std::string> names;
  for (const auto& p : probes) {
    EXPECT_EQ(p.note.provider, "python");
    EXPECT_TRUE(p.semaphore_offset) << p.note.name << " has no semaphore";
    names.push_back(p.note.name);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"audit", "function__entry", "function__return", "gc__done",
                                             "gc__start", "import__find__load__done", "import__find__load__start",
                                             "line"}));
}

TEST(UsdtNotes, LibstdcxxMatchesReadelf) {
  const std::string lib = "/lib/x86_64-linux-gnu/libstdc++.so.6";
  if (access(lib.c_str(), R_OK) != 0) GTEST_SKIP() << lib << " is not installed";
  if (!have_readelf()) GTEST_SKIP() << "readelf (binutils) is not installed";
  check_against_readelf(lib, Arch::X86_64);
  std::vector<std::string> names;
  for (const auto& p : probes_of(lib)) {
    EXPECT_EQ(p.note.provider, "libstdcxx");
    names.push_back(p.note.name);
  }
  for (const char* n : {"throw", "catch", "rethrow"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
}

class UsdtFixture : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(UsdtFixture, NotesMatchReadelfAndTheOffsetsHoldTheNopAndTheSemaphore) {
  auto [arch_name, opt] = GetParam();
  Arch arch = *arch_from_name(arch_name);
  std::string path = fixture(arch_name, "usdt_" + opt);
  if (!have_readelf()) GTEST_SKIP() << "readelf (binutils) is not installed";
  check_against_readelf(path, arch);

  auto probes = probes_of(path);
  ASSERT_EQ(probes.size(), 6u);  // tick, konst, work__start, work__done, plain, pair
  auto find = [&](const std::string& name) -> const UsdtProbe* {
    for (const auto& p : probes)
      if (p.note.provider == "uprof_fx" && p.note.name == name) return &p;
    return nullptr;
  };
  const UsdtProbe* tick = find("tick");
  const UsdtProbe* konst = find("konst");
  const UsdtProbe* plain = find("plain");
  const UsdtProbe* pair = find("pair");
  ASSERT_TRUE(tick && konst && plain && pair);

  // The semaphores are the fixture's own variables: their symbols' addresses.
  auto elf = ElfFile::open(path);
  ASSERT_TRUE(elf);
  for (const auto& s : elf->symbols()) {
    if (s.name == "uprof_fx_tick_semaphore") {
      EXPECT_EQ(tick->semaphore_vaddr, s.value);
    }
    if (s.name == "uprof_fx_konst_semaphore") {
      EXPECT_EQ(konst->semaphore_vaddr, s.value);
    }
  }
  ASSERT_TRUE(tick->semaphore_offset);
  auto sem = elf->read_bytes(*tick->semaphore_offset, 2);
  ASSERT_TRUE(sem);
  EXPECT_EQ((*sem)[0] | (*sem)[1], 0) << "the semaphore starts at 0 in the file";
  EXPECT_FALSE(plain->semaphore_offset);
  EXPECT_FALSE(pair->semaphore_offset);

  // tick(int8_t, uint16_t, int32_t, int64_t, uint64_t): sizes and signs from the types.
  auto args = parse_usdt_args(arch, tick->note.args);
  ASSERT_TRUE(args) << args.error().message;
  ASSERT_EQ(args->size(), 5u);
  std::vector<std::pair<int, bool>> shape;
  for (const auto& a : *args) shape.emplace_back(a.size, a.is_signed);
  EXPECT_EQ(shape, (std::vector<std::pair<int, bool>>{{1, true}, {2, false}, {4, true}, {8, true}, {8, false}}));
  // -O0 keeps them in the frame, -O2 in registers.
  for (const auto& a : *args) {
    if (opt == "O0") {
      EXPECT_TRUE(std::holds_alternative<UsdtMemory>(a.location)) << a.text;
    } else {
      EXPECT_TRUE(std::holds_alternative<UsdtRegister>(a.location)) << a.text;
    }
  }
  auto k = parse_usdt_args(arch, konst->note.args);
  ASSERT_TRUE(k) << k.error().message;
  ASSERT_EQ(k->size(), 1u);
  ASSERT_TRUE(std::holds_alternative<UsdtConstant>((*k)[0].location));
  EXPECT_EQ(std::get<UsdtConstant>((*k)[0].location).value, -1);
  EXPECT_EQ(plain->note.args, "");
  auto pr = parse_usdt_args(arch, pair->note.args);
  ASSERT_TRUE(pr) << pr.error().message;
  EXPECT_EQ(pr->size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Builds, UsdtFixture,
                         ::testing::Combine(::testing::Values("x86_64", "arm64"), ::testing::Values("O0", "O2")),
                         [](const auto& p) {
                           return std::get<0>(p.param) + "_" + std::get<1>(p.param);
                         });

TEST(UsdtNotes, AFileWithoutNotesHasNoProbes) {
  auto probes = probes_of(fixture("x86_64", "funcs_O2_pie"));
  EXPECT_TRUE(probes.empty());
}

}  // namespace
}  // namespace uprof
