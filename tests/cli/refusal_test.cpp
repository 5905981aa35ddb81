// Sites the kernel refuses, live, on both engines and the BPF engine's two attach paths
// (tests/fixtures/refused.c): a glob
// records every function but the refused ones, each skipped with one line; a spec
// naming a refused function fails with that line before the workload runs (never
// 0 calls and exit status 0); a refused first instruction that can be stepped past is
// probed after it, every call counted. `uprof probe` shows the same.
#include <gtest/gtest.h>

#include <map>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class Refusal : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Refusal, UPROF_ENGINES, test::engine_name);

// Hits per function and kind ("rf_moves entry").
std::map<std::string, int> hits(const test::LoadedRecording& r) {
  std::map<std::string, int> n;
  for (const auto& s : r.samples) {
    const ProbeInfo& p = r.probes[s.probe];
    n[p.function + (p.kind == ProbeKind::Return ? " return" : " entry")]++;
  }
  return n;
}

int count_lines_with(const std::string& text, const std::string& word) {
  int n = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) n++;
  return n;
}

TEST_P(Refusal, AGlobRecordsAllButTheRefusedFunctions) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "refused");
  auto plain = run({program, "1000"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                test::attach_of(GetParam()), "--no-args", "-o", dir.file("rf.data"), "-e", "rf_*", "--", program, "1000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  // One line for each function skipped, naming it, its offset, its instruction and why.
  EXPECT_EQ(count_lines_with(r.err, "uprof: skipped rf_stays (" + program + ", offset 0x"), 1) << r.err;
  EXPECT_NE(r.err.find("the kernel refuses to probe its first instruction, lock incl (%rdi) [f0 ff 07]: lock prefix "
                       "(ENOTSUPP)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(count_lines_with(r.err, "uprof: skipped rf_vex ("), 1) << r.err;
  // rf_moves is probed past its lock incl, and says so.
  EXPECT_NE(r.err.find("probed at +0x3 instead, past lock incl (%rdi)"), std::string::npos) << r.err;

  auto rec = test::load_recording(dir.file("rf.data"));
  ASSERT_TRUE(rec.trailer);
  ASSERT_EQ(rec.trailer->lost, 0u);
  EXPECT_EQ(hits(rec), (std::map<std::string, int>{{"rf_moves entry", 1000},
                                                    {"rf_moves return", 1000},
                                                    {"rf_plain entry", 1000},
                                                    {"rf_plain return", 1000}}));
}

TEST_P(Refusal, ASpecNamingARefusedFunctionFailsBeforeTheWorkloadRuns) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "refused");
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                test::attach_of(GetParam()), "-o", dir.file("rf.data"), "-e", "rf_stays", "--", program, "10"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");  // the workload never ran
  EXPECT_EQ(r.err.rfind("uprof: record: rf_stays (" + program + ", offset 0x", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("lock incl (%rdi) [f0 ff 07]: lock prefix (ENOTSUPP)\n"), std::string::npos) << r.err;
  EXPECT_EQ(count_lines_with(r.err, "\n"), 1) << r.err;
  // Held at its symbol by --exact-site, rf_moves is refused the same way.
  auto exact = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                    test::attach_of(GetParam()), "--exact-site", "-o", dir.file("rf2.data"), "-e", "rf_moves", "--",
                    program, "10"});
  EXPECT_NE(exact.exit_code, 0);
  EXPECT_NE(exact.err.find("uprof: record: rf_moves ("), std::string::npos) << exact.err;
}

TEST(RefusalProbe, ProbeShowsTheRefusalAndTheMove) {
  const std::string program = fixture("x86_64", "refused");
  auto r = run({uprof_binary(), "probe", program, "rf_stays", "rf_moves", "rf_plain"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nrf_stays (" + program + ", offset 0x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the kernel refuses to probe its first instruction, lock incl (%rdi) [f0 ff 07]: lock prefix "
                       "(ENOTSUPP)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("probed at +0x3 instead, past lock incl (%rdi)"), std::string::npos) << r.out;
  EXPECT_EQ(count_lines_with(r.out, "rf_plain ("), 0) << r.out;
}

}  // namespace
}  // namespace uprof
