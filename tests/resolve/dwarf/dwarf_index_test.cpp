#include "uprof/resolve/dwarf/dwarf_index.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "support/test_support.h"
#include "uprof/resolve/elf/elf_file.h"

namespace uprof {
namespace {

// The ELF file must outlive the index built from it: members are destroyed
// in reverse order, the index first.
struct Indexed {
  ElfFile file;
  DwarfIndex index;
};

Indexed load(const std::string& path) {
  auto file = ElfFile::open(path);
  EXPECT_TRUE(file.ok()) << file.error().message;
  auto index = DwarfIndex::build(file->elf(), path);
  EXPECT_TRUE(index.ok()) << index.error().message;
  return {std::move(file).value(), std::move(index).value()};
}

// name -> addresses of the defined symbols, as `nm` prints them (binutils nm
// reads aarch64 files too).
std::multimap<std::string, uint64_t> nm_symbols(const std::string& path) {
  auto r = test::run_shell("nm '" + path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::multimap<std::string, uint64_t> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string addr, type, name;
    if (fields >> addr >> type >> name) out.emplace(name, std::stoull(addr, nullptr, 16));
  }
  return out;
}

uint64_t nm_address(const std::multimap<std::string, uint64_t>& syms, const std::string& name) {
  EXPECT_EQ(syms.count(name), 1u) << name;
  auto it = syms.find(name);
  return it == syms.end() ? 0 : it->second;
}

const DwarfFunction* only(const DwarfIndex& index, const std::string& name) {
  auto found = index.named(name);
  EXPECT_EQ(found.size(), 1u) << name;
  return found.empty() ? nullptr : found.front();
}

class DwarfIndexTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string fixture(const std::string& name) const { return test::fixture(GetParam(), name); }
};

TEST_P(DwarfIndexTest, CFunctionsHaveTheirSignaturesAtTheirSymbols) {
  for (auto name : {"funcs_O0_pie", "funcs_O2_pie", "funcs_O0_nopie", "funcs_O2_nopie", "funcs_static"}) {
    SCOPED_TRACE(name);
    auto path = fixture(name);
    auto [file, index] = load(path);
    auto syms = nm_symbols(path);

    const std::map<std::string, std::string> expected = {
        {"add", "int add(int a, int b)"},
        {"mul3", "long mul3(long a, long b, long c)"},
        {"loop_sum", "long loop_sum(long n)"},
        {"weak_fn", "int weak_fn(int x)"},
        {"main", "int main(int argc, char** argv)"},
    };
    for (auto& [fn, sig] : expected) {
      auto* f = only(index, fn);
      ASSERT_NE(f, nullptr) << fn;
      EXPECT_EQ(f->signature(), sig);
      EXPECT_EQ(f->entry, nm_address(syms, fn)) << fn;
      EXPECT_EQ(index.at_entry(f->entry), f) << fn;
      EXPECT_TRUE(f->linkage_name.empty()) << "C has no mangled names";
    }

    // Two static helpers, one per source file: both, each at its own symbol.
    auto helpers = index.named("helper");
    ASSERT_EQ(helpers.size(), 2u);
    std::set<uint64_t> dwarf_entries{helpers[0]->entry, helpers[1]->entry}, nm_entries;
    for (auto [it, end] = syms.equal_range("helper"); it != end; ++it) nm_entries.insert(it->second);
    EXPECT_EQ(dwarf_entries.size(), 2u);
    EXPECT_EQ(dwarf_entries, nm_entries);
    for (auto* h : helpers) EXPECT_EQ(h->signature(), "int helper(int x)");

    // Whatever else the file describes (a static binary may bring some of
    // libc) starts where the symbol of the same name does.
    for (auto& f : index.functions()) {
      auto [it, end] = syms.equal_range(f.name);
      bool matched = false;
      for (; it != end; ++it) matched = matched || it->second == f.entry;
      EXPECT_TRUE(matched) << f.signature() << " at 0x" << std::hex << f.entry;
      EXPECT_LE(f.low, f.entry);
      EXPECT_LT(f.entry, f.high);
    }
  }
}

TEST_P(DwarfIndexTest, CppMethodsAreQualifiedAndKeepThis) {
  for (auto name : {"cpp_O0", "cpp_O2"}) {
    SCOPED_TRACE(name);
    auto path = fixture(name);
    auto [file, index] = load(path);
    auto syms = nm_symbols(path);

    auto methods = index.named("ns::Klass::method");
    ASSERT_EQ(methods.size(), 2u);
    std::map<std::string, const DwarfFunction*> by_linkage;
    for (auto* m : methods) by_linkage[m->linkage_name] = m;
    ASSERT_EQ(by_linkage.count("_ZN2ns5Klass6methodEi"), 1u);
    ASSERT_EQ(by_linkage.count("_ZN2ns5Klass6methodEd"), 1u);
    EXPECT_EQ(by_linkage["_ZN2ns5Klass6methodEi"]->signature(), "int ns::Klass::method(ns::Klass* this, int x)");
    EXPECT_EQ(by_linkage["_ZN2ns5Klass6methodEd"]->signature(), "int ns::Klass::method(ns::Klass* this, double x)");
    for (auto& [linkage, m] : by_linkage) {
      EXPECT_EQ(m->entry, nm_address(syms, linkage));
      ASSERT_EQ(m->params.size(), 2u);
      EXPECT_TRUE(m->params[0].artificial);
      EXPECT_EQ(m->params[0].name, "this");
      EXPECT_FALSE(m->params[1].artificial);
    }

    auto* smethod = only(index, "ns::Klass::smethod");
    ASSERT_NE(smethod, nullptr);
    EXPECT_EQ(smethod->signature(), "int ns::Klass::smethod(int x)");
    EXPECT_EQ(smethod->linkage_name, "_ZN2ns5Klass7smethodEi");
    EXPECT_EQ(smethod->entry, nm_address(syms, "_ZN2ns5Klass7smethodEi"));
    for (auto& p : smethod->params) EXPECT_FALSE(p.artificial);

    auto* twice = only(index, "ns::twice<int>");
    ASSERT_NE(twice, nullptr);
    EXPECT_EQ(twice->signature(), "int ns::twice<int>(int v)");
    EXPECT_EQ(twice->entry, nm_address(syms, "_ZN2ns5twiceIiEET_S1_"));

    auto* plain = only(index, "plain_c_like");
    ASSERT_NE(plain, nullptr);
    EXPECT_EQ(plain->signature(), "int plain_c_like(int x)");
    EXPECT_EQ(plain->entry, nm_address(syms, "_Z12plain_c_likei"));

    auto* main_fn = only(index, "main");
    ASSERT_NE(main_fn, nullptr);
    EXPECT_EQ(main_fn->signature(), "int main(int argc, char**)");  // the source leaves argv unnamed
  }
}

TEST_P(DwarfIndexTest, SharedLibraryFunctions) {
  auto path = fixture("libfx.so.1");
  auto [file, index] = load(path);
  auto syms = nm_symbols(path);
  auto* add = only(index, "fx_lib_add");
  auto* twice = only(index, "fx_lib_twice");
  ASSERT_TRUE(add && twice);
  EXPECT_EQ(add->signature(), "int fx_lib_add(int a, int b)");
  EXPECT_EQ(twice->signature(), "int fx_lib_twice(int a)");
  EXPECT_EQ(add->entry, nm_address(syms, "fx_lib_add"));
  EXPECT_EQ(twice->entry, nm_address(syms, "fx_lib_twice"));
}

TEST_P(DwarfIndexTest, SeparateDebugFileGivesTheSameFunctions) {
  auto [bin_file, from_binary] = load(fixture("funcs_O2_pie"));
  auto [dbg_file, from_debug] = load(fixture("funcs_stripped.debug"));
  ASSERT_GT(from_binary.size(), 0u);
  auto listing = [](const DwarfIndex& index) {
    std::vector<std::pair<uint64_t, std::string>> out;
    for (auto& f : index.functions()) out.emplace_back(f.entry, f.signature());
    return out;
  };
  EXPECT_EQ(listing(from_debug), listing(from_binary));
}

TEST_P(DwarfIndexTest, FileWithoutDwarfGivesAnEmptyIndex) {
  for (auto name : {"funcs_stripped", "funcs_nolink"}) {
    SCOPED_TRACE(name);
    auto file = ElfFile::open(fixture(name));
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto index = DwarfIndex::build(file->elf(), fixture(name));
    ASSERT_TRUE(index.ok()) << index.error().message;
    EXPECT_EQ(index->size(), 0u);
    EXPECT_EQ(index->dwarf(), nullptr);
    EXPECT_EQ(index->containing(0x1000), nullptr);
    EXPECT_EQ(index->at_entry(0x1000), nullptr);
  }
}

TEST_P(DwarfIndexTest, ContainingFindsTheFunctionAroundAnAddress) {
  auto [file, index] = load(fixture("funcs_O2_pie"));
  auto* loop_sum = only(index, "loop_sum");
  ASSERT_NE(loop_sum, nullptr);
  ASSERT_GT(loop_sum->high, loop_sum->low + 8);
  EXPECT_EQ(loop_sum->low, loop_sum->entry);
  EXPECT_EQ(index.containing(loop_sum->entry), loop_sum);
  EXPECT_EQ(index.containing((loop_sum->low + loop_sum->high) / 2), loop_sum);
  EXPECT_EQ(index.containing(loop_sum->high - 1), loop_sum);
  EXPECT_NE(index.containing(loop_sum->high), loop_sum);
  EXPECT_EQ(index.at_entry(loop_sum->entry + 4), nullptr);
  EXPECT_EQ(index.containing(0), nullptr);
  EXPECT_EQ(index.containing(~uint64_t{0}), nullptr);
}

TEST_P(DwarfIndexTest, OffsetsLeadBackToTheDies) {
  auto [file, index] = load(fixture("cpp_O0"));
  ASSERT_NE(index.dwarf(), nullptr);
  for (auto* m : index.named("ns::Klass::method")) {
    Dwarf_Die die;
    ASSERT_NE(dwarf_offdie(index.dwarf(), m->die_offset, &die), nullptr);
    EXPECT_EQ(dwarf_tag(&die), DW_TAG_subprogram);
    ASSERT_NE(dwarf_offdie(index.dwarf(), m->cu_offset, &die), nullptr);
    EXPECT_EQ(dwarf_tag(&die), DW_TAG_compile_unit);
    for (auto& p : m->params) {
      ASSERT_NE(dwarf_offdie(index.dwarf(), p.die_offset, &die), nullptr);
      EXPECT_EQ(dwarf_tag(&die), DW_TAG_formal_parameter);
      EXPECT_STREQ(dwarf_diename(&die), p.name.c_str());
      EXPECT_TRUE(dwarf_hasattr(&die, DW_AT_location)) << "the parameter DIE of the code, not of the declaration";
    }
  }
}

TEST_P(DwarfIndexTest, IndexMovesWithItsDwarfHandle) {
  auto file = ElfFile::open(fixture("funcs_O0_pie"));
  ASSERT_TRUE(file.ok());
  auto built = DwarfIndex::build(file->elf(), fixture("funcs_O0_pie"));
  ASSERT_TRUE(built.ok());
  DwarfIndex moved = std::move(built).value();
  Dwarf* handle = moved.dwarf();
  ASSERT_NE(handle, nullptr);
  DwarfIndex assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.dwarf(), handle);
  EXPECT_EQ(moved.dwarf(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_NE(only(assigned, "add"), nullptr);
}

TEST_P(DwarfIndexTest, CorruptDwarfIsAnErrorNamingTheFile) {
  test::TempDir dir;
  std::string junk = dir.file("junk"), bad = dir.file("funcs_bad");
  {
    // A unit length in the range DWARF reserves (0xfffffff0): no reader can go on.
    std::ofstream out(junk, std::ios::binary);
    out.write("\xf0\xff\xff\xff\x05\x00\x01\x08\x00\x00\x00\x00", 12);
  }
  std::string objcopy = GetParam() == "arm64" ? "aarch64-linux-gnu-objcopy" : "objcopy";
  auto r = test::run({objcopy, "--update-section", ".debug_info=" + junk, fixture("funcs_O0_pie"), bad});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto file = ElfFile::open(bad);
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto index = DwarfIndex::build(file->elf(), bad);
  ASSERT_FALSE(index.ok());
  EXPECT_NE(index.error().message.find(bad), std::string::npos) << index.error().message;
  EXPECT_EQ(index.error().message.rfind("dwarf: ", 0), 0u) << index.error().message;
}

TEST(DwarfFunctionSignature, SpellsParametersVariadicsAndVoid) {
  DwarfFunction f;
  f.name = "nothing";
  f.return_type = "void";
  EXPECT_EQ(f.signature(), "void nothing()");
  f.variadic = true;
  EXPECT_EQ(f.signature(), "void nothing(...)");
  f.params = {{.name = "fmt", .type = "const char*"}, {.name = "", .type = "int"}};
  EXPECT_EQ(f.signature(), "void nothing(const char* fmt, int, ...)");
}

INSTANTIATE_TEST_SUITE_P(BothArches, DwarfIndexTest, ::testing::Values("x86_64", "arm64"),
                         [](auto& p) { return p.param; });

}  // namespace
}  // namespace uprof
