// Strings and members in pages the process has not touched yet, on every engine
// (tests/fixtures/fresh_pages.c): each value lives alone in a page of a file mapped just
// before the call, so the probe at the function's entry is the first to read it. A BPF
// program that cannot take a page fault reads nothing there; the BPF engine's sleepable
// programs and the perf engine read the bytes the program reads.
#include <gtest/gtest.h>

#include <iostream>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class FreshPages : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, FreshPages, UPROF_ENGINES, test::engine_name);

TEST_P(FreshPages, TheFirstReadOfAPageIsTheProgramsBytes) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "fresh_pages");
  auto plain = run({program, dir.file("plain.bin"), "4"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                test::attach_of(GetParam()), "-o", dir.file("f.data"), "-e", "lookup", "-e", "visit it->name it->id",
                "--", program, dir.file("pages.bin"), "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(r.err.find("unavailable"), std::string::npos) << r.err;
  auto s = run({uprof_binary(), "script", dir.file("f.data")});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out.find("<unreadable>"), std::string::npos) << s.out;
  for (int i = 0; i < 4; i++) {
    const std::string n = std::to_string(i);
    EXPECT_NE(s.out.find("lookup(key=\"fresh-" + n + "\")"), std::string::npos) << s.out;
    EXPECT_NE(s.out.find("visit(it->name=\"item-" + n + "\", it->id=" + std::to_string(100 + i) + ")"),
              std::string::npos)
        << s.out;
  }
}

// A probe that reads only registers keeps the non-sleepable program; in the same
// recording as one that faults pages in, both count every call.
TEST_P(FreshPages, PlainAndFaultingProbesTogetherCountEveryCall) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "fresh_pages");
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                test::attach_of(GetParam()), "-o", dir.file("f.data"), "-e", "lookup %di", "-e", "visit it->id",
                "--", program, dir.file("pages.bin"), "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = run({uprof_binary(), "script", dir.file("f.data")});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  int visits = 0, lookups = 0;
  for (std::size_t at = 0; (at = s.out.find("visit(it->id=", at)) != std::string::npos; at++) visits++;
  for (std::size_t at = 0; (at = s.out.find("lookup(%di=", at)) != std::string::npos; at++) lookups++;
  EXPECT_EQ(visits, 64) << s.out;
  EXPECT_EQ(lookups, 64) << s.out;
  EXPECT_NE(s.out.find("visit(it->id=163)"), std::string::npos) << s.out;
}

// On a one-page ring, probes on both programs (a register; strings and a member, which
// take the BPF engine's sleepable program) lose records, and every hit is still
// accounted for: per probe, the kernel's count is the program's calls and the file holds
// what was recorded; every record dropped is in a Lost event.
TEST_P(FreshPages, ATinyRingAccountsForEveryHitOfBothPrograms) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  constexpr uint64_t kCalls = 20'000;
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                test::attach_of(GetParam()), "-m", "1", "--entry-only", "-o", dir.file("t.data"), "-e",
                "lookup n=%si", "-e", "visit it->name it->label it->id", "--", fixture("x86_64", "strings_O0"),
                std::to_string(kCalls)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = test::load_recording(dir.file("t.data"));
  ASSERT_TRUE(rec.trailer);
  std::vector<uint64_t> in_file(rec.probes.size(), 0);
  for (const Event& e : rec.samples) in_file[e.probe]++;
  for (std::size_t i = 0; i < rec.probes.size(); i++) {
    SCOPED_TRACE(rec.probes[i].function);
    const ProbeCount& c = rec.trailer->counts[i];
    EXPECT_EQ(c.kernel, rec.probes[i].function == "lookup" ? kCalls + 1 : kCalls);
    EXPECT_EQ(c.recorded, in_file[i]);
  }
  uint64_t recorded = 0, kernel = 0, in_markers = 0;
  for (const ProbeCount& c : rec.trailer->counts) {
    recorded += c.recorded;
    kernel += c.kernel;
  }
  for (const Event& e : rec.losses) in_markers += e.lost;
  EXPECT_EQ(recorded + rec.trailer->lost, kernel);
  if (GetParam() != "perf") {
    EXPECT_EQ(in_markers, rec.trailer->lost);
  }
  std::cout << "[ measured ] " << GetParam() << ": " << kernel << " hits, " << rec.trailer->lost << " lost\n";
}

}  // namespace
}  // namespace uprof
