// `uprof probe` and the top level, run as a user runs them: exit codes, one-line
// errors, and output that matches nm's view of the binary.
#include <gtest/gtest.h>

#include <algorithm>

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
  // fx_lib_twice is not in uselib itself: the whole command fails on that spec.
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "uprof: elf: " + bin + ": no symbol 'fx_lib_twice'\n");
  auto ok = run({uprof_binary(), "probe", bin, "main", "libfx:fx_lib_add", "libfx:fx_lib_twice%return"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(lines(ok.out), 4);
  EXPECT_NE(ok.out.find("fx_lib_twice%return"), std::string::npos);
  EXPECT_NE(ok.out.find("libfx.so.1"), std::string::npos);
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
