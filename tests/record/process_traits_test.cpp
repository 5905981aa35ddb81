// What a process's files say about it: the C++ runtime, stack switching.
#include "uprof/record/process_traits.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.h"

namespace uprof {
namespace {

ElfSymbol sym(const std::string& name, bool defined) {
  ElfSymbol s;
  s.name = name;
  s.shndx = static_cast<uint16_t>(defined ? 12 : SHN_UNDEF);
  return s;
}

TEST(ProcessTraits, TheCxxPersonalityMarksTheRuntime) {
  auto t = file_traits("./app", {sym("printf", false), sym("__gxx_personality_v0", false)}, true);
  EXPECT_EQ(t.cxx_runtime, "./app names __gxx_personality_v0");
  EXPECT_EQ(t.switches_stacks, "");
  EXPECT_EQ(file_traits("libc.so.6", {sym("qsort", true)}, false).cxx_runtime, "");
}

// Any personality routine but C's: Rust's (std defines it in every Rust program), and
// C++'s by its DW.ref. copy too. glibc's personality(2) and C's own routine are no runtime.
TEST(ProcessTraits, AnyUnwindingPersonalityButCsMarksTheRuntime) {
  auto rust = file_traits("./m", {sym("DW.ref.rust_eh_personality", true), sym("rust_eh_personality", true)}, true);
  EXPECT_EQ(rust.cxx_runtime, "./m names rust_eh_personality");
  EXPECT_EQ(rust.runtime_language, "Rust");
  auto cxx = file_traits("./app", {sym("DW.ref.__gxx_personality_v0", true)}, true);
  EXPECT_EQ(cxx.cxx_runtime, "./app names __gxx_personality_v0");
  EXPECT_EQ(cxx.runtime_language, "C++");
  EXPECT_EQ(personality_language("__gnat_personality_v0"), "Ada");
  EXPECT_EQ(personality_language("__gcc_personality_v0"), "");
  EXPECT_EQ(personality_language("personality"), "");
  auto c = file_traits("libc.so.6", {sym("personality", true), sym("__gcc_personality_v0", true)}, false);
  EXPECT_EQ(c.cxx_runtime, "");
  EXPECT_EQ(c.runtime_language, "");
}

// libc defines swapcontext and switches nothing; a program that imports it does, and a
// static program that defines it linked it in to call it.
TEST(ProcessTraits, StackSwitchingIsAnImportOrAProgramsOwnCopy) {
  EXPECT_EQ(file_traits("./co", {sym("swapcontext", false)}, true).switches_stacks, "./co imports swapcontext");
  EXPECT_EQ(file_traits("libx.so", {sym("jump_fcontext", false)}, false).switches_stacks,
            "libx.so imports jump_fcontext");
  // A handler of fatal signals on its own stack is no coroutine (python3 imports it).
  EXPECT_EQ(file_traits("./python3", {sym("sigaltstack", false)}, true).switches_stacks, "");
  EXPECT_EQ(file_traits("libc.so.6", {sym("swapcontext", true)}, false).switches_stacks, "");
  EXPECT_EQ(file_traits("./static", {sym("makecontext", true)}, true).switches_stacks, "./static defines makecontext");
}

// The fixtures, from their files and the libraries they need.
TEST(ProcessTraits, FromTheFixtures) {
  auto c = process_traits({test::fixture("x86_64", "alone_swapcontext"), "/lib/x86_64-linux-gnu/libc.so.6"},
                          false);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->cxx_runtime, "");
  EXPECT_NE(c->switches_stacks.find("alone_swapcontext imports "), std::string::npos) << c->switches_stacks;
  auto cxx = process_traits({test::fixture("x86_64", "qsort_throw")}, false);
  ASSERT_TRUE(cxx.ok());
  EXPECT_NE(cxx->cxx_runtime.find("qsort_throw names __gxx_personality_v0"), std::string::npos);
  auto a = process_traits({"", "/lib/x86_64-linux-gnu/libc.so.6"}, true);
  ASSERT_TRUE(a.ok());
  EXPECT_NE(a->cxx_runtime.find("-a"), std::string::npos);  // assumed: the processes are not known
  EXPECT_EQ(a->switches_stacks, "");
}

// A command's program and the libraries it needs; with no program and no process (-a,
// `uprof probe libc:qsort`) the C++ runtime is assumed.
TEST(ProcessTraits, OfARun) {
  auto c = run_traits(test::fixture("x86_64", "alone_argv"), {}, {}, false);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->cxx_runtime, "");
  EXPECT_EQ(c->switches_stacks, "");
  auto none = run_traits("", {}, {}, false);
  ASSERT_TRUE(none.ok());
  EXPECT_NE(none->cxx_runtime, "");
  // -p: the files the process maps stand for the libraries it needs.
  auto p = run_traits(test::fixture("x86_64", "alone_argv"), {test::fixture("x86_64", "qsort_throw")}, {}, false);
  ASSERT_TRUE(p.ok());
  EXPECT_NE(p->cxx_runtime.find("qsort_throw"), std::string::npos) << p->cxx_runtime;
}

// A Go program is told by the .go.buildinfo section Go's linker writes (a stripped one
// keeps it); C and C++ programs have none.
TEST(ProcessTraits, AGoFileIsToldByItsBuildInfo) {
  const std::string gw = test::fixture("x86_64", "go_gw");
  if (!std::filesystem::exists(gw)) GTEST_SKIP() << "no Go toolchain when the tests were built (" << gw
                                                 << " missing): scripts/setup.sh installs golang-go";
  for (const char* arch : {"x86_64", "arm64"}) {
    auto go = ElfFile::open(test::fixture(arch, "go_gw"));
    ASSERT_TRUE(go.ok()) << go.error().message;
    EXPECT_EQ(go_file(*go), test::fixture(arch, "go_gw") + " has a .go.buildinfo section");
  }
  for (const char* c : {"alone_argv", "qsort_throw"}) {
    auto elf = ElfFile::open(test::fixture("x86_64", c));
    ASSERT_TRUE(elf.ok());
    EXPECT_EQ(go_file(*elf), "") << c;
  }
}

}  // namespace
}  // namespace uprof
