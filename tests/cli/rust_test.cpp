// Rust programs, as their users run and name them (tests/fixtures/rust/panics.rs, crate
// m, built with rustc's legacy symbols and with v0 ones):
//   - a program that catches panics runs under uprof as it runs alone: the functions a
//     panic can unwind through are measured at their exit instructions (a return probe's
//     trampoline has no unwind information: Rust's unwinder stopped there with "failed to
//     initiate panic, error 5" and the program aborted), the calls a panic left are
//     counted as unwound (record/unwind_risk.h);
//   - functions are named by their path, without the hash or the crate's disambiguator
//     (resolve/elf/rust_name.h), in specs, globs and `uprof probe --list`.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "support/test_support.h"
#include "uprof/analyse/report_model.h"

#ifndef UPROF_HAVE_RUSTC
#define UPROF_HAVE_RUSTC 0
#endif

// The Rust fixtures exist when the build found rustc (tests/CMakeLists.txt).
#define UPROF_REQUIRE_RUST()                                                                        \
  do {                                                                                              \
    if (!UPROF_HAVE_RUSTC)                                                                          \
      GTEST_SKIP() << "no Rust toolchain: the build found no rustc, so the Rust fixtures were not built"; \
  } while (0)

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class RustPanics : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, RustPanics, UPROF_ENGINES, test::engine_name);

void expect_runs_as_alone(const std::string& engine, const std::string& name) {
  test::TempDir dir;
  const std::string program = fixture("x86_64", name);
  auto plain = run({program, "100"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(plain.out, "sum 13555 caught 10\nids 7\n");

  // As the user wrote it: globs on the functions' names.
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(engine), "--attach", test::attach_of(engine),
                "-o", dir.file("r.data"), "-e", "*outer*", "-e", "*mid*", "-e", "m::work", "-e", "m::inner::helper",
                "--", program, "100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(r.err.find("failed to initiate panic"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("SIGABRT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("returns of 3 Rust functions that call others ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("are measured at their exit instructions, not by return probes: a panic unwinding through a "
                       "return probe aborts the program"),
            std::string::npos)
      << r.err;

  auto rec = test::load_recording(dir.file("r.data"));
  std::map<std::pair<std::string, ProbeKind>, int> hits;
  for (const auto& s : rec.samples) hits[{rec.probes[s.probe].function, rec.probes[s.probe].kind}]++;
  using K = ProbeKind;
  EXPECT_EQ((hits[{"m::outer", K::Entry}]), 100);
  EXPECT_EQ((hits[{"m::outer", K::Exit}]), 100);
  EXPECT_EQ((hits[{"m::mid", K::Entry}]), 100);
  EXPECT_EQ((hits[{"m::mid", K::Exit}]), 90);  // 10 left by a panic
  EXPECT_EQ((hits[{"m::mid", K::Return}]), 0);  // no trampoline
  EXPECT_EQ((hits[{"m::work", K::Entry}]), 90);
  EXPECT_EQ((hits[{"m::inner::helper", K::Entry}]), 90);
  EXPECT_EQ((hits[{"m::inner::helper", K::Return}]), 90);  // a leaf: nothing unwinds through it

  auto m = build_report(dir.file("r.data"), AggregateOptions{});
  ASSERT_TRUE(m.ok()) << m.error().message;
  std::map<std::string, const GroupStats*> by_name;
  for (const auto& g : m->groups) by_name[m->functions.functions[g.function].name] = &g;
  const std::map<std::string, std::pair<uint64_t, uint64_t>> expected{
      {"m::outer", {100, 0}}, {"m::mid", {90, 10}}, {"m::work", {90, 0}}, {"m::inner::helper", {90, 0}}};
  for (const auto& [fn, want] : expected) {
    SCOPED_TRACE(fn);
    ASSERT_TRUE(by_name.count(fn));
    const GroupStats& g = *by_name[fn];
    EXPECT_EQ(g.calls, want.first);
    EXPECT_EQ(g.latency.count(), want.first);
    EXPECT_GT(g.latency.min(), 0u);
    EXPECT_EQ(g.unmatched[static_cast<std::size_t>(UnmatchedReason::Unwound)], want.second);
  }
  EXPECT_EQ(by_name.size(), 4u);
  EXPECT_TRUE(m->pairing.balanced());
}

TEST_P(RustPanics, AProgramThatCatchesPanicsRunsAsAlone) {
  UPROF_REQUIRE_RUST();
  UPROF_REQUIRE_UPROBES();
  expect_runs_as_alone(GetParam(), "rust_panics_legacy");
}

TEST_P(RustPanics, TheSameWithV0Symbols) {
  UPROF_REQUIRE_RUST();
  UPROF_REQUIRE_UPROBES();
  expect_runs_as_alone(GetParam(), "rust_panics_v0");
}

// Without root: `uprof probe` says how each function's returns are measured.
TEST(RustNames, ProbeSaysHowReturnsAreMeasured) {
  UPROF_REQUIRE_RUST();
  auto r = run({uprof_binary(), "probe", fixture("x86_64", "rust_panics_legacy"), "m::mid", "m::inner::helper"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("m::mid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("at 1 exit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("return probe"), std::string::npos) << r.out;
}

// Paths as the author writes them, in both manglings: by name, by glob, in the listing.
TEST(RustNames, PathsResolveAndListInLegacyAndV0Builds) {
  UPROF_REQUIRE_RUST();
  for (const char* name : {"rust_panics_legacy", "rust_panics_v0"}) {
    SCOPED_TRACE(name);
    const std::string bin = fixture("x86_64", name);
    auto list = run({uprof_binary(), "probe", "--list", bin, "m::*"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    for (const char* fn : {"m::work ", "m::inner::helper ", "m::mid ", "m::outer ", "m::main "})
      EXPECT_NE(list.out.find(fn), std::string::npos) << fn << " in\n" << list.out;
    EXPECT_FALSE(std::regex_search(list.out, std::regex("::h[0-9a-f]{16}"))) << list.out;  // no hash
    EXPECT_EQ(list.out.find("_R"), std::string::npos) << list.out;   // no raw v0 symbol
    EXPECT_EQ(list.out.find("_ZN"), std::string::npos) << list.out;

    auto probe = run({uprof_binary(), "probe", bin, "m::work", "m::inner::helper"});
    ASSERT_EQ(probe.exit_code, 0) << probe.err;
    EXPECT_NE(probe.out.find("m::work"), std::string::npos) << probe.out;
    EXPECT_NE(probe.out.find("m::inner::helper"), std::string::npos) << probe.out;

    // A generic function's instances share a path in legacy symbols (not in v0's
    // m::id::<u32>): the path is ambiguous, and the symbols tell them apart.
    auto id = run({uprof_binary(), "probe", bin, "m::id"});
    EXPECT_EQ(id.exit_code, 1);
    EXPECT_NE(id.err.find("spec: 'm::id' is ambiguous in "), std::string::npos) << id.err;
    EXPECT_NE(id.err.find(std::string(name) == "rust_panics_v0" ? "m::id::<u32> (_RINv" : "m::id (_ZN1m2id17h"),
              std::string::npos)
        << id.err;
    EXPECT_NE(id.err.find("name one by file offset (BIN:0xOFF) or by its symbol"), std::string::npos) << id.err;
    auto u64 = run({uprof_binary(), "probe", bin, "m::id::<u64>"});
    EXPECT_EQ(u64.exit_code, std::string(name) == "rust_panics_v0" ? 0 : 1) << u64.err;

    // A path that names nothing says so, and offers the close one.
    auto bad = run({uprof_binary(), "probe", bin, "m::wrok"});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.err.find("no symbol 'm::wrok'"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("m::work"), std::string::npos) << bad.err;
  }
}

}  // namespace
}  // namespace uprof
