// The resolver on real files built by the test build, for both architectures.
// Every offset is checked by an independent route: the bytes the resolver's file
// offset points at must equal the function's bytes read through the section
// headers (libelf section data), and its address must equal what nm prints.
#include "uprof/resolve/resolver.h"

#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;

// The function's bytes as the section headers see them: .text's data at vaddr - sh_addr.
std::vector<uint8_t> bytes_via_sections(const std::string& path, uint64_t vaddr, std::size_t n) {
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY);
  Elf* e = elf_begin(fd, ELF_C_READ, nullptr);
  std::vector<uint8_t> out;
  for (Elf_Scn* s = elf_nextscn(e, nullptr); s; s = elf_nextscn(e, s)) {
    GElf_Shdr sh;
    gelf_getshdr(s, &sh);
    if (sh.sh_type != SHT_PROGBITS || vaddr < sh.sh_addr || vaddr + n > sh.sh_addr + sh.sh_size) continue;
    Elf_Data* d = elf_getdata(s, nullptr);
    auto* p = static_cast<const uint8_t*>(d->d_buf) + (vaddr - sh.sh_addr);
    out.assign(p, p + n);
  }
  elf_end(e);
  close(fd);
  return out;
}

// nm's address of `sym`, or 0.
uint64_t nm_address(const std::string& path, const std::string& sym) {
  auto r = test::run_shell("nm " + path);
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string addr, type, name;
    if (ls >> addr >> type >> name && name == sym) return std::stoull(addr, nullptr, 16);
  }
  return 0;
}

ResolvedProbe resolve_one(Resolver& r, const std::string& spec, const std::string& target) {
  auto s = parse_probe_spec(spec);
  EXPECT_TRUE(s) << s.error().message;
  auto p = r.resolve(*s, target);
  EXPECT_TRUE(p) << p.error().message;
  if (!p || p->size() != 1) {
    ADD_FAILURE() << spec << " did not resolve to exactly one probe";
    return {};
  }
  return p->front();
}

std::string resolve_error(Resolver& r, const std::string& spec, const std::string& target) {
  auto s = parse_probe_spec(spec);
  if (!s) return s.error().message;
  auto p = r.resolve(*s, target);
  if (p) return "(resolved to " + std::to_string(p->size()) + " probes)";
  return p.error().message;
}

struct FixtureCase {
  std::string arch;
  std::string name;
};

class ResolverOnFixture : public ::testing::TestWithParam<FixtureCase> {};

// gcc split inner's throw path into inner.cold: a fragment jumped to, never called.
// "inner" means the function; the fragment is probed only when named.
TEST(Resolver, ColdFragmentsAreNoEntryPoints) {
  const std::string bin = fixture("x86_64", "throw_split");
  Resolver r;
  auto one = r.resolve(*parse_probe_spec("inner"), bin);
  ASSERT_TRUE(one) << one.error().message;
  ASSERT_EQ(one->size(), 1u);
  auto nm = test::run_shell("nm " + bin + " | awk '$3 == \"_Z5inneri\" {print $1}'");
  EXPECT_EQ(one->front().vaddr, std::stoull(nm.out, nullptr, 16));
  auto glob = r.resolve(*parse_probe_spec("*inner*"), bin);
  ASSERT_TRUE(glob) << glob.error().message;
  EXPECT_EQ(glob->size(), 1u);
  auto named = r.resolve(*parse_probe_spec("_Z5inneri.cold"), bin);
  ASSERT_TRUE(named) << named.error().message;
  ASSERT_EQ(named->size(), 1u);
  EXPECT_NE(named->front().vaddr, one->front().vaddr);
}

TEST_P(ResolverOnFixture, OffsetsMatchSectionBytesAndNm) {
  const auto& c = GetParam();
  std::string path = fixture(c.arch, c.name);
  // --force: +0x8 is offset arithmetic here, whichever instruction it falls in (the
  // boundary check has its own tests, tests/resolve/insn/probe_placement_test.cpp).
  Resolver r(ResolveOptions{.debug = {}, .libraries = {}, .force_offset = true});
  for (std::string fn : {"add", "mul3", "weak_fn", "sql_open", "loop_sum", "main"}) {
    auto p = resolve_one(r, fn, path);
    EXPECT_EQ(p.arch, c.arch == "arm64" ? Arch::Arm64 : Arch::X86_64);
    EXPECT_EQ(p.vaddr, nm_address(path, fn)) << fn;
    ASSERT_GT(p.function_size, 0u) << fn;
    auto img = r.image(path);
    ASSERT_TRUE(img);
    auto via_offset = (*img)->elf.read_bytes(p.file_offset, p.function_size);
    ASSERT_TRUE(via_offset);
    EXPECT_EQ(*via_offset, bytes_via_sections(path, p.vaddr, p.function_size)) << fn << " in " << path;
    EXPECT_EQ(p.path, std::filesystem::canonical(path).string());
    EXPECT_FALSE(p.build_id.empty());
  }
  // An alias is the same function.
  EXPECT_EQ(resolve_one(r, "add_alias", path).file_offset, resolve_one(r, "add", path).file_offset);
  // An instruction inside a function: +OFF from the same base.
  auto inside = resolve_one(r, "loop_sum+0x8", path);
  EXPECT_EQ(inside.file_offset, resolve_one(r, "loop_sum", path).file_offset + 8);
  EXPECT_EQ(inside.offset_in_function, 8u);
  EXPECT_EQ(inside.label(), "loop_sum+0x8");
  // A raw offset lands on the function it is in.
  auto raw = resolve_one(r, "0x" + [&] { std::ostringstream o; o << std::hex << inside.file_offset; return o.str(); }(), path);
  EXPECT_EQ(raw.function, "loop_sum");
  EXPECT_EQ(raw.offset_in_function, 8u);
}

TEST_P(ResolverOnFixture, GlobsAmbiguityAndErrors) {
  const auto& c = GetParam();
  std::string path = fixture(c.arch, c.name);
  Resolver r;
  auto s = parse_probe_spec("sql*");
  auto globbed = r.resolve(*s, path);
  ASSERT_TRUE(globbed) << globbed.error().message;
  std::set<std::string> names;
  for (auto& p : *globbed) names.insert(p.function);
  EXPECT_EQ(names, (std::set<std::string>{"sql_open", "sql_exec", "sql_close"}));

  auto amb = resolve_error(r, "helper", path);
  EXPECT_NE(amb.find("spec: 'helper' is ambiguous in " + path + ": helper at 0x"), std::string::npos) << amb;
  EXPECT_NE(amb.find("(local, file offset 0x"), std::string::npos) << amb;

  EXPECT_EQ(resolve_error(r, "ad", path), "elf: " + path + ": no symbol 'ad' (did you mean 'add'?)");
  EXPECT_EQ(resolve_error(r, "sqx*", path), "elf: " + path + ": no function matches 'sqx*'");
  auto outside = resolve_error(r, "add+0x4000", path);
  EXPECT_NE(outside.find("spec: 'add+0x4000': offset 0x4000 is outside add (size 0x"), std::string::npos) << outside;
  auto beyond = resolve_error(r, "0x7fffffff", path);
  EXPECT_NE(beyond.find("spec: '0x7fffffff': offset 0x7fffffff is beyond the end of " + path), std::string::npos);
  if (c.arch == "arm64") {
    EXPECT_NE(resolve_error(r, "loop_sum+0x2", path).find("is not 4-byte aligned, as every arm64 instruction is"),
              std::string::npos);
  }
}

std::vector<FixtureCase> fixture_cases() {
  std::vector<FixtureCase> v;
  for (std::string a : {"x86_64", "arm64"})
    for (std::string n : {"funcs_O0_pie", "funcs_O2_pie", "funcs_O0_nopie", "funcs_O2_nopie", "funcs_static",
                          "funcs_ttext"})
      v.push_back({a, n});
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, ResolverOnFixture, ::testing::ValuesIn(fixture_cases()),
                         [](auto& p) { return p.param.arch + "_" + p.param.name; });

class ResolverBothArches : public ::testing::TestWithParam<std::string> {};

TEST_P(ResolverBothArches, CxxNames) {
  std::string path = fixture(GetParam(), "cpp_O2");
  Resolver r;
  auto amb = resolve_error(r, "ns::Klass::method", path);
  EXPECT_NE(amb.find("is ambiguous"), std::string::npos) << amb;
  EXPECT_NE(amb.find("ns::Klass::method(int)"), std::string::npos) << amb;
  EXPECT_NE(amb.find("ns::Klass::method(double)"), std::string::npos) << amb;
  auto by_int = resolve_one(r, "ns::Klass::method(int)", path);
  EXPECT_EQ(by_int.function, "ns::Klass::method(int)");
  EXPECT_EQ(by_int.symbol, "_ZN2ns5Klass6methodEi");
  EXPECT_EQ(by_int.vaddr, nm_address(path, "_ZN2ns5Klass6methodEi"));
  EXPECT_EQ(resolve_one(r, "ns::Klass::method( double )", path).symbol, "_ZN2ns5Klass6methodEd");
  EXPECT_EQ(resolve_one(r, "_ZN2ns5Klass7smethodEi", path).function, "ns::Klass::smethod(int)");
  EXPECT_EQ(resolve_one(r, "ns::Klass::smethod", path).symbol, "_ZN2ns5Klass7smethodEi");
  EXPECT_EQ(resolve_one(r, "ns::twice<int>", path).symbol, "_ZN2ns5twiceIiEET_S1_");
  auto s = parse_probe_spec("ns::Klass::*");
  auto all = r.resolve(*s, path);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 3u);
}

// gcc's clones (tests/fixtures/clones.cpp): a name, with or without its parameter list,
// picks every entry point of its source function, each under the source's name; a
// clone named as such is that clone alone. Addresses checked against nm.
TEST_P(ResolverBothArches, ClonesAreEntryPointsOfTheirFunction) {
  const std::string o2 = fixture(GetParam(), "clones_O2"), wp = fixture(GetParam(), "clones_wp");
  Resolver r;
  auto entry_points = [&](const std::string& spec, const std::string& bin) {
    std::map<std::string, uint64_t> by_symbol;
    auto p = r.resolve(*parse_probe_spec(spec), bin);
    EXPECT_TRUE(p) << spec << ": " << p.error().message;
    if (!p) return by_symbol;
    for (const auto& one : *p) {
      by_symbol[one.symbol] = one.vaddr;
      EXPECT_EQ(one.vaddr, nm_address(bin, one.symbol)) << spec << " " << one.symbol;
    }
    return by_symbol;
  };
  auto functions = [&](const std::string& spec, const std::string& bin) {
    std::set<std::string> names;
    auto p = r.resolve(*parse_probe_spec(spec), bin);
    if (p)
      for (const auto& one : *p) names.insert(one.function);
    return names;
  };
  using Symbols = std::set<std::string>;
  auto symbols = [](const std::map<std::string, uint64_t>& m) {
    Symbols out;
    for (const auto& [s, a] : m) out.insert(s);
    return out;
  };
  // The function and its .constprop copy for k == 3.
  const Symbols scale{"_ZN2ns5Klass5scaleEii", "_ZN2ns5Klass5scaleEii.constprop.0"};
  EXPECT_EQ(symbols(entry_points("ns::Klass::scale(int, int)", o2)), scale);
  EXPECT_EQ(symbols(entry_points("ns::Klass::scale", o2)), scale);
  EXPECT_EQ(symbols(entry_points("_ZN2ns5Klass5scaleEii", o2)), scale);
  EXPECT_EQ(functions("ns::Klass::scale", o2), (std::set<std::string>{"ns::Klass::scale(int, int)"}));
  EXPECT_EQ(symbols(entry_points("ns::Klass::method(int, const ns::Big&, int)", o2)),
            (Symbols{"_ZN2ns5Klass6methodEiRKNS_3BigEi", "_ZN2ns5Klass6methodEiRKNS_3BigEi.constprop.0.isra.0"}));
  // Partial inlining: check and the part after its early return.
  EXPECT_EQ(symbols(entry_points("check", o2)), (Symbols{"_Z5checki", "_Z5checki.part.0"}));
  // -fwhole-program: the overloads exist only as clones; the parameter list picks one.
  EXPECT_EQ(symbols(entry_points("ns::Klass::method(double)", wp)), Symbols{"_ZN2ns5Klass6methodEd.isra.0"});
  EXPECT_EQ(functions("ns::Klass::method(double)", wp), (std::set<std::string>{"ns::Klass::method(double)"}));
  EXPECT_EQ(symbols(entry_points("ns::Klass::method(int, ns::Big const&, int)", wp)),
            Symbols{"_ZN2ns5Klass6methodEiRKNS_3BigEi.constprop.0.isra.0"});
  auto amb = resolve_error(r, "ns::Klass::method", wp);
  EXPECT_NE(amb.find("is ambiguous"), std::string::npos) << amb;
  EXPECT_NE(amb.find("ns::Klass::method(double) [clone .isra.0] at 0x"), std::string::npos) << amb;
  // A clone named as such.
  EXPECT_EQ(functions("ns::Klass::scale(int, int) [clone .constprop.0]", o2),
            (std::set<std::string>{"ns::Klass::scale(int, int) [clone .constprop.0]"}));
  EXPECT_EQ(symbols(entry_points("_ZN2ns5Klass5scaleEii.constprop.0", o2)), Symbols{"_ZN2ns5Klass5scaleEii.constprop.0"});
  // A glob takes every entry point too.
  EXPECT_EQ(symbols(entry_points("ns::Klass::sc*", o2)), scale);
  // A template's members as they are written, not as the demangler prints them
  // ("std::vector<int, std::allocator<int> >::push_back(int const&)").
  EXPECT_EQ(symbols(entry_points("std::vector<int>::push_back(int const&)", o2)),
            Symbols{"_ZNSt6vectorIiSaIiEE9push_backERKi"});
  EXPECT_EQ(symbols(entry_points("std::vector<int>::push_back(const int&)", o2)),
            Symbols{"_ZNSt6vectorIiSaIiEE9push_backERKi"});
  EXPECT_EQ(symbols(entry_points("std::vector<int>::push_back(int&&)", o2)), Symbols{"_ZNSt6vectorIiSaIiEE9push_backEOi"});
}

// C++ names with spaces and operators, in Debian's libstdc++ (its exported symbols;
// addresses checked against nm -D).
TEST(Resolver, CxxOperatorsInLibstdcxx) {
  Resolver r;
  const std::string lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
  auto dyn = [&](const std::string& sym) {
    auto out = test::run_shell("nm -D " + lib + " | awk '{sub(/@.*/, \"\", $3)} $3 == \"" + sym + "\" {print $1}'");
    return out.out.empty() ? 0 : std::stoull(out.out, nullptr, 16);
  };
  auto nw = resolve_one(r, "libstdc++:operator new(unsigned long)", "");
  EXPECT_EQ(nw.symbol, "_Znwm");
  EXPECT_EQ(nw.vaddr, dyn("_Znwm"));
  EXPECT_EQ(resolve_one(r, "libstdc++:\"operator new[](unsigned long)\"", "").symbol, "_Znam");
  // "operator delete*" is a glob: every operator delete, and nothing else.
  auto del = r.resolve(*parse_probe_spec("libstdc++:operator delete*"), "");
  ASSERT_TRUE(del) << del.error().message;
  auto nm_count = test::run_shell("nm -DC " + lib + " | grep -c ' T operator delete'");
  EXPECT_EQ(del->size(), std::stoul(nm_count.out));
  for (const auto& p : *del) EXPECT_EQ(p.function.rfind("operator delete", 0), 0u) << p.function;
  // "operator*": no function is named so, so it is a glob over every operator.
  auto ops = r.resolve(*parse_probe_spec("libstdc++:operator*"), "");
  ASSERT_TRUE(ops) << ops.error().message;
  EXPECT_GT(ops->size(), del->size());
  for (const auto& p : *ops) EXPECT_EQ(p.function.rfind("operator", 0), 0u) << p.function;
  // The ABI tag tells the C++11 ABI's std::locale::name from the old one's.
  EXPECT_EQ(resolve_one(r, "libstdc++:std::locale::name[abi:cxx11]() const", "").symbol, "_ZNKSt6locale4nameB5cxx11Ev");
  EXPECT_EQ(resolve_one(r, "libstdc++:std::locale::name() const", "").symbol, "_ZNKSt6locale4nameEv");
  // std::string as people write it: the old ABI's is "std::string" to the demangler,
  // the C++11 ABI's "std::__cxx11::string".
  EXPECT_EQ(resolve_one(r, "libstdc++:std::string::compare(const char*) const", "").symbol, "_ZNKSs7compareEPKc");
  EXPECT_EQ(resolve_one(r, "libstdc++:std::__cxx11::string::compare(const char*) const", "").symbol,
            "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7compareEPKc");
}

TEST_P(ResolverBothArches, LibraryByShortName) {
  std::string prog = fixture(GetParam(), "uselib");
  Resolver r;
  auto p = resolve_one(r, "libfx:fx_lib_add", prog);
  EXPECT_EQ(p.path, std::filesystem::canonical(fixture(GetParam(), "libfx.so.1")).string());
  EXPECT_EQ(p.vaddr, nm_address(fixture(GetParam(), "libfx.so.1"), "fx_lib_add"));
  EXPECT_EQ(resolve_one(r, "libfx.so.1:fx_lib_twice", prog).function, "fx_lib_twice");
  EXPECT_EQ(resolve_one(r, fixture(GetParam(), "libfx.so.1") + ":fx_lib_add", "").file_offset, p.file_offset);
}

TEST_P(ResolverBothArches, StrippedBinaryUsesItsDebugFile) {
  std::string stripped = fixture(GetParam(), "funcs_stripped");
  std::string full = fixture(GetParam(), "funcs_O2_pie");
  Resolver r;
  auto viaLink = resolve_one(r, "helper2_call", stripped);
  EXPECT_EQ(viaLink.file_offset, resolve_one(r, "helper2_call", full).file_offset);
  EXPECT_EQ(viaLink.build_id, resolve_one(r, "add", full).build_id);
  auto img = r.image(stripped);
  ASSERT_TRUE(img);
  EXPECT_TRUE((*img)->stripped());
  ASSERT_TRUE((*img)->debug_lookup.path);
  EXPECT_EQ(*(*img)->debug_lookup.path, std::filesystem::absolute(stripped).parent_path().string() +
                                            "/funcs_stripped.debug");

  // No debuglink: found only by build-id under a debug directory.
  std::string nolink = fixture(GetParam(), "funcs_nolink");
  Resolver none(ResolveOptions{.debug = {.debug_dirs = {"/nonexistent-debug"}}, .libraries = {}});
  auto e = resolve_error(none, "helper2_call", nolink);
  std::string id = viaLink.build_id;
  EXPECT_EQ(e, "elf: " + nolink + ": no symbol 'helper2_call': the file is stripped and no debug file was found "
               "(looked in /nonexistent-debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug)");
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() + "/.build-id/" + id.substr(0, 2));
  std::filesystem::copy_file(fixture(GetParam(), "funcs_stripped.debug"),
                             dir.path() + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug");
  Resolver byid(ResolveOptions{.debug = {.debug_dirs = {dir.path()}}, .libraries = {}});
  EXPECT_EQ(resolve_one(byid, "helper2_call", nolink).file_offset, viaLink.file_offset);
}

INSTANTIATE_TEST_SUITE_P(BothArches, ResolverBothArches, ::testing::Values("x86_64", "arm64"),
                         [](auto& p) { return p.param; });

TEST(Resolver, SystemLibcVersionsAndIfunc) {
  std::string prog = fixture("x86_64", "uselib");
  Resolver r;
  auto malloc_p = resolve_one(r, "libc:malloc", prog);
  EXPECT_EQ(malloc_p.function, "malloc");
  EXPECT_NE(malloc_p.path.find("libc.so.6"), std::string::npos);
  // memcpy@@GLIBC_2.14 is an IFUNC, probed at the implementation the loader selects
  // here (tests/resolve/ifunc_choice_test.cpp checks which); the old
  // memcpy@GLIBC_2.2.5 is a plain function.
  auto ifunc = resolve_one(r, "libc:memcpy", prog);
  EXPECT_EQ(ifunc.function, "memcpy");
  EXPECT_EQ(ifunc.symbol.rfind("__memcpy_", 0), 0u) << ifunc.symbol;
  EXPECT_EQ(ifunc.as<FunctionPoint>()->ifunc_choice, "IFUNC, selected for this CPU");
  auto old = resolve_one(r, "libc:memcpy@GLIBC_2.2.5", prog);
  EXPECT_EQ(old.function, "memcpy");
  // realpath has two versions at two addresses; the default one wins without a version.
  auto rp = resolve_one(r, "libc:realpath", prog);
  auto rp_new = resolve_one(r, "libc:realpath@@GLIBC_2.3", prog);
  auto rp_old = resolve_one(r, "libc:realpath@GLIBC_2.2.5", prog);
  EXPECT_EQ(rp.file_offset, rp_new.file_offset);
  EXPECT_NE(rp.file_offset, rp_old.file_offset);
}

// Hand-made ELF headers for files uprof must refuse.
std::string write_header(const std::string& path, unsigned char cls, uint16_t machine) {
  std::vector<unsigned char> h(64, 0);
  h[0] = 0x7f; h[1] = 'E'; h[2] = 'L'; h[3] = 'F';
  h[4] = cls; h[5] = 1; h[6] = 1;
  h[16] = 2;                                           // ET_EXEC
  h[18] = static_cast<unsigned char>(machine & 0xff);
  h[19] = static_cast<unsigned char>(machine >> 8);
  h[20] = 1;                                           // e_version
  if (cls == 1) { h[40] = 52; h[46] = 40; } else { h[52] = 64; h[58] = 64; }  // ehsize, shentsize
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<char*>(h.data()), static_cast<long>(h.size()));
  return path;
}

TEST(Resolver, FileErrors) {
  test::TempDir dir;
  Resolver r;
  EXPECT_EQ(resolve_error(r, "add", dir.file("missing")), "elf: " + dir.file("missing") + ": No such file or directory");
  EXPECT_EQ(resolve_error(r, "add", dir.path()), "elf: " + dir.path() + ": is a directory");
  std::ofstream(dir.file("text")) << "hello\n";
  EXPECT_EQ(resolve_error(r, "add", dir.file("text")), "elf: " + dir.file("text") + ": not an ELF file");
  auto f32 = write_header(dir.file("elf32"), 1, 3);
  EXPECT_EQ(resolve_error(r, "add", f32),
            "elf: " + f32 + ": 32-bit ELF files are not supported (uprof probes 64-bit x86_64 and arm64)");
  auto rv = write_header(dir.file("riscv"), 2, 243);
  EXPECT_EQ(resolve_error(r, "add", rv),
            "elf: " + rv + ": architecture riscv is not supported (uprof knows x86_64 and arm64)");
  EXPECT_EQ(resolve_error(r, "add", ""), "spec: no program to resolve the function in: name it as BIN:FUNC");
}

TEST(Resolver, NonExecutableOffsetRefused) {
  // On x86-64 the ELF header at offset 0x40 sits in the read-only first segment.
  std::string path = fixture("x86_64", "funcs_O2_pie");
  Resolver r;
  EXPECT_EQ(resolve_error(r, "0x40", path), "spec: '0x40': offset 0x40 of " + path + " is not in an executable segment");
}

}  // namespace
}  // namespace uprof
