// `uprof probe` and the top level, run as a user runs them: exit codes, one-line
// errors, and output that matches nm's view of the binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(Cli, VersionAndHelp) {
  auto v = run({uprof_binary(), "--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out.rfind("uprof ", 0), 0u);
  auto h = run({uprof_binary(), "--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("probe"), std::string::npos);
  auto ph = run({uprof_binary(), "probe", "--help"});
  EXPECT_EQ(ph.exit_code, 0);
  EXPECT_NE(ph.out.find("--list"), std::string::npos);
  auto bad = run({uprof_binary(), "frobnicate"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "uprof: unknown command 'frobnicate' (see 'uprof --help')\n");
  auto badopt = run({uprof_binary(), "probe", "--bogus", "x"});
  EXPECT_EQ(badopt.exit_code, 2);
  EXPECT_EQ(lines(badopt.err), 1);
}

TEST(Cli, ProbeListShowsEveryFunctionWithItsOffset) {
  std::string bin = fixture("x86_64", "funcs_O0_nopie");
  auto r = run({uprof_binary(), "probe", "--list", bin, "sql*"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 4);  // header + sql_open, sql_exec, sql_close
  auto nm = test::run_shell("nm " + bin + " | awk '$3 == \"sql_exec\" {print $1}'");
  std::string addr = nm.out.substr(nm.out.find_first_not_of('0'));
  addr.pop_back();
  EXPECT_NE(r.out.find("sql_exec"), std::string::npos);
  EXPECT_NE(r.out.find("0x" + addr), std::string::npos) << r.out;
  // Aliases are shown once, joined.
  auto a = run({uprof_binary(), "probe", "--list", bin, "add*"});
  EXPECT_NE(a.out.find("add = add_alias"), std::string::npos) << a.out;
}

TEST(Cli, ProbeResolvesSpecs) {
  std::string bin = fixture("x86_64", "uselib");
  auto r = run({uprof_binary(), "probe", bin, "main", "libfx:fx_lib_add", "fx_lib_twice%return"});
  // fx_lib_twice is not in uselib itself, which imports it from libfx: the whole
  // command fails on that spec, saying which spec would name it.
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "uprof: elf: " + bin + ": 'fx_lib_twice' is imported, not defined there: it is libfx.so.1's (" +
                       fixture("x86_64", "libfx.so.1") + "): probe libfx:fx_lib_twice\n");
  auto none = run({uprof_binary(), "probe", bin, "fx_lib_nosuch"});
  EXPECT_EQ(none.err, "uprof: elf: " + bin + ": no symbol 'fx_lib_nosuch'\n");
  auto ok = run({uprof_binary(), "probe", bin, "main", "libfx:fx_lib_add", "libfx:fx_lib_twice%return"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(lines(ok.out), 4);
  EXPECT_NE(ok.out.find("fx_lib_twice%return"), std::string::npos);
  EXPECT_NE(ok.out.find("libfx.so.1"), std::string::npos);
}

// No program: specs that name a library are found through ld.so.cache.
TEST(Cli, ProbeLibrarySpecsWithoutAProgram) {
  auto r = run({uprof_binary(), "probe", "libc:malloc", "libz:crc32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 3) << r.out;
  EXPECT_NE(r.out.find("libc.so.6"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libz.so.1"), std::string::npos) << r.out;
  auto nm = test::run_shell("nm -D /lib/x86_64-linux-gnu/libc.so.6 | awk '$3 ~ /^malloc(@|$)/ {print $1; exit}'");
  ASSERT_EQ(nm.exit_code, 0);
  const std::string addr = nm.out.substr(nm.out.find_first_not_of('0'), nm.out.find('\n') - nm.out.find_first_not_of('0'));
  EXPECT_NE(r.out.find("0x" + addr), std::string::npos) << r.out << " (nm: " << addr << ")";
  auto missing = run({uprof_binary(), "probe", "libnosuch:f"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(lines(missing.err), 1) << missing.err;
  EXPECT_NE(missing.err.find("library 'libnosuch' not found"), std::string::npos) << missing.err;
}

TEST(Cli, ProbeListUsdtShowsEachProbeWithItsOffsetAndSemaphore) {
  for (const char* arch : {"x86_64", "arm64"}) {
    std::string bin = fixture(arch, "usdt_O2");
    auto r = run({uprof_binary(), "probe", "--list-usdt", bin});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_EQ(lines(r.out), 7) << r.out;  // header + tick, konst, work__start, work__done, plain, pair
    EXPECT_EQ(r.out.rfind("PROVIDER  NAME         OFFSET  ADDRESS  SEMAPHORE  ARGS\n", 0), 0u) << r.out;
    // tick's line: its file offset and address are readelf's Location (in a PIE the
    // text is mapped at offset 0: the same number), and it has a semaphore.
    auto loc = test::run_shell("readelf -n " + bin + " | awk '/Name: tick/ {getline; print $2}'");
    ASSERT_EQ(loc.exit_code, 0);
    auto pc = std::stoull(loc.out, nullptr, 16);  // "0x00000000000011b5,"
    std::vector<std::string> fields;
    auto at = r.out.find("uprof_fx  tick");
    ASSERT_NE(at, std::string::npos) << r.out;
    std::istringstream line(r.out.substr(at, r.out.find('\n', at) - at));
    for (std::string f; line >> f;) fields.push_back(f);
    ASSERT_GE(fields.size(), 6u);
    EXPECT_EQ(std::stoull(fields[2], nullptr, 16), pc);
    EXPECT_EQ(std::stoull(fields[3], nullptr, 16), pc);
    EXPECT_NE(fields[4], "-");
    EXPECT_EQ(fields.size(), 10u);  // 5 arguments
    // plain: no semaphore, no arguments: the line ends at the semaphore's "-".
    auto plain = r.out.find("uprof_fx  plain");
    ASSERT_NE(plain, std::string::npos);
    std::string pline = r.out.substr(plain, r.out.find('\n', plain) - plain);
    EXPECT_EQ(pline.substr(pline.size() - 3), "  -") << pline;
  }
}

TEST(Cli, ProbeListUsdtWithoutNotesOrOnANonElfFile) {
  std::string bin = fixture("x86_64", "funcs_O2_pie");
  auto none = run({uprof_binary(), "probe", "--list-usdt", bin});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, bin + ": no USDT probes (no .note.stapsdt notes)\n");
  auto missing = run({uprof_binary(), "probe", "--list-usdt", "/nonexistent/bin"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "uprof: elf: /nonexistent/bin: No such file or directory\n");
  EXPECT_TRUE(missing.out.empty());
  std::string text = std::string(UPROF_SOURCE_DIR) + "/tests/fixtures/usdt.c";
  auto not_elf = run({uprof_binary(), "probe", "--list-usdt", text});
  EXPECT_EQ(not_elf.exit_code, 1);
  EXPECT_EQ(not_elf.err, "uprof: elf: " + text + ": not an ELF file\n");
  auto extra = run({uprof_binary(), "probe", "--list-usdt", bin, "main"});
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_EQ(lines(extra.err), 1) << extra.err;
}

TEST(Cli, ErrorsAreOneLineWithNonZeroExit) {
  for (std::vector<std::string> args : {
           std::vector<std::string>{"probe", "/nonexistent/bin", "add"},
           {"probe", fixture("x86_64", "funcs_O2_pie"), "helper"},
           {"probe", fixture("x86_64", "funcs_O2_pie"), "add+0xZZ"},
           {"probe", fixture("x86_64", "funcs_nolink"), "loop_sum"},
           {"probe", "--list", fixture("x86_64", "funcs_O2_pie"), "zzz*"},
       }) {
    args.insert(args.begin(), uprof_binary());
    auto r = run(args);
    EXPECT_EQ(r.exit_code, 1) << args[2];
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("uprof: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

}  // namespace
}  // namespace uprof
