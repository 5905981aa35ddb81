// Probe placement, live: the same workload recorded with placement (the default) and
// with --exact-site gives the same calls, arguments and return values per function,
// and the program prints what it prints without uprof; the sites that must not move
// (a loop back to the instruction after endbr64) stay; a mid-instruction offset is
// refused before the workload starts.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "support/test_support.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class Placement : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Placement, UPROF_ENGINES, test::engine_name);

constexpr const char* kCalls = "3000";

// Per probed function and probe kind, the values of every hit in order.
using Hits = std::map<std::pair<std::string, ProbeKind>, std::vector<std::vector<uint64_t>>>;

// A pointer is compared as null or not: the two runs' addresses differ (ASLR).
Hits hits_of(const test::LoadedRecording& r) {
  Hits h;
  for (const auto& s : r.samples) {
    const ProbeInfo& p = r.probes[s.probe];
    std::vector<uint64_t> v(s.values.begin(), s.values.begin() + s.nvalues);
    for (std::size_t i = 0; i < v.size() && i < p.values.size(); i++)
      if (p.values[i].kind == ValueKind::Pointer) v[i] = v[i] != 0;
    h[{p.function, p.kind}].push_back(std::move(v));
  }
  return h;
}

std::vector<std::string> record_args(const std::string& engine, const std::string& out, const std::string& program,
                                     bool exact) {
  // A ring that holds the whole run (36,000 samples, under 4 MB), so a drain starved by
  // a loaded machine cannot drop one and the comparison stays exact.
  std::vector<std::string> a{uprof_binary(), "record", "--engine", test::engine_of(engine), "--attach", test::attach_of(engine), "-m", "2048", "-o", out};
  if (exact) a.push_back("--exact-site");
  for (const char* e : {"check", "mix3", "tail", "switchy", "loop_back %di %si $retval", "no_loop %di %si $retval"}) {
    a.push_back("-e");
    a.push_back(e);
  }
  a.insert(a.end(), {"--", program, kCalls});
  return a;
}

void expect_same_as_exact_site(const std::string& engine, const std::string& name) {
  test::TempDir dir;
  const std::string program = fixture("x86_64", name);
  auto plain = run({program, kCalls});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;

  auto moved = run(record_args(engine, dir.file("moved.data"), program, false));
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  auto exact = run(record_args(engine, dir.file("exact.data"), program, true));
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  // The program computes the same with either, and as without uprof.
  EXPECT_EQ(moved.out, plain.out);
  EXPECT_EQ(exact.out, plain.out);

  auto m = test::load_recording(dir.file("moved.data"));
  auto x = test::load_recording(dir.file("exact.data"));
  ASSERT_TRUE(m.problems.empty() && x.problems.empty());
  ASSERT_TRUE(m.trailer && x.trailer);
  ASSERT_EQ(m.trailer->lost, 0u) << moved.err;
  ASSERT_EQ(x.trailer->lost, 0u) << exact.err;
  Hits hm = hits_of(m), hx = hits_of(x);
  ASSERT_EQ(hm.size(), 12u) << moved.err;  // six functions, entry and return
  for (const auto& [key, values] : hx) {
    SCOPED_TRACE(key.first + (key.second == ProbeKind::Entry ? " entry" : " return"));
    EXPECT_EQ(values.size(), 3000u);
    ASSERT_TRUE(hm.count(key));
    EXPECT_EQ(hm[key].size(), values.size());
    // every hit's values, in order; the first difference says where
    for (std::size_t i = 0; i < values.size() && i < hm[key].size(); i++) {
      if (hm[key][i] != values[i]) {
        ADD_FAILURE() << "hit " << i << " differs: " << ::testing::PrintToString(hm[key][i]) << " moved, "
                      << ::testing::PrintToString(values[i]) << " at the symbol\n" << moved.err << exact.err;
        break;
      }
    }
  }
}

TEST_P(Placement, SameCallsAndValuesAsTheSymbolAtO0) {
  UPROF_REQUIRE_UPROBES();
  expect_same_as_exact_site(GetParam(), "placement_O0");
}
TEST_P(Placement, SameCallsAndValuesAsTheSymbolAtO2) {
  UPROF_REQUIRE_UPROBES();
  expect_same_as_exact_site(GetParam(), "placement_O2");
}
TEST_P(Placement, SameCallsAndValuesAsTheSymbolWithEndbr64First) {
  UPROF_REQUIRE_UPROBES();
  expect_same_as_exact_site(GetParam(), "placement_cet");
}

// What moved and what stayed, on the line before the run and in the data file.
TEST(PlacementSites, EndbrMovesALoopBackStaysAndTheFileHasTheSite) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "placement_cet");
  auto r = run({uprof_binary(), "record", "-o", dir.file("m.data"), "-e", "check", "-e", "no_loop %di", "-e",
                "loop_back %di", "--", program, kCalls});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("check endbr64; testq %rdi, %rdi (single-stepped) -> +0x7 emulated (jcc rel8)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("no_loop endbr64 (single-stepped) -> +0x4 emulated (push %rbp)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("loop_back single-stepped (endbr64)"), std::string::npos) << r.err;
  auto x = run({uprof_binary(), "record", "--exact-site", "-o", dir.file("x.data"), "-e", "check", "-e", "no_loop %di",
                "-e", "loop_back %di", "--", program, kCalls});
  ASSERT_EQ(x.exit_code, 0) << x.err;
  auto m = test::load_recording(dir.file("m.data"));
  auto e = test::load_recording(dir.file("x.data"));
  std::map<std::string, uint64_t> at_symbol;
  for (const auto& p : e.probes) at_symbol[p.function] = p.file_offset;
  for (const auto& p : m.probes) {
    uint64_t d = p.file_offset - at_symbol[p.function];
    const uint64_t want = p.function == "check" ? 7 : p.function == "no_loop" ? 4 : 0;
    EXPECT_EQ(d, want) << p.function;
    EXPECT_EQ(p.offset_in_function, 0u) << p.function;  // still the function's entry
  }

  // uprof probe says the same, and why a site stays.
  auto probe = run({uprof_binary(), "probe", program, "loop_back", "no_loop", "main"});
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  EXPECT_NE(probe.out.find("stays: a branch of the file targets an instruction in (+0, +0x4]"), std::string::npos)
      << probe.out;
  EXPECT_NE(probe.out.find("endbr64 (single-stepped) -> +0x4 emulated (push %rbp)"), std::string::npos) << probe.out;
  auto exact = run({uprof_binary(), "probe", "--exact-site", program, "no_loop"});
  EXPECT_EQ(exact.out.find("->"), std::string::npos) << exact.out;
}

TEST(PlacementSites, AMidInstructionOffsetIsRefusedBeforeTheWorkloadStarts) {
  test::TempDir dir;
  const std::string program = fixture("x86_64", "placement_cet");
  auto r = run({uprof_binary(), "record", "-o", dir.file("m.data"), "-e", "no_loop+0x1", "--", program, kCalls});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");  // the workload never ran
  EXPECT_NE(r.err.find("spec: 'no_loop+0x1': no_loop+0x1 is inside the instruction at no_loop+0x0 (endbr64, 4 bytes): "
                       "the nearest boundaries are no_loop+0x0 and no_loop+0x4; --force probes it as given (" +
                       program + ")"),
            std::string::npos)
      << r.err;
  auto ok = run({uprof_binary(), "probe", program, "no_loop+0x4"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto forced = run({uprof_binary(), "probe", "--force", program, "no_loop+0x1"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
}

// arm64 (no arm64 CPU needed: `probe` only reads the file): `bti c; cbz` moves to the
// cbz, the loop whose branch lands on its first simulated instruction stays.
TEST(PlacementSites, Arm64BtiFirst) {
  const std::string program = fixture("arm64", "placement_bti");
  auto r = run({uprof_binary(), "probe", program, "no_loop", "loop_back"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bti c (single-stepped) -> +0x4 emulated (cbz)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stays: a branch of the file targets an instruction in (+0, +0xc]"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace uprof
