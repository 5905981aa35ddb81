#include "uprof/analyse/probe_functions.h"

#include <gtest/gtest.h>

#include "analyse/event_builders.h"

namespace uprof {
namespace {

using test::probe;
using test::usdt_probe;

TEST(PairingProbeFunctions, EntryAndReturnAtTheSameAddressPair) {
  const auto pf = group_probes(std::vector<ProbeInfo>{
      probe(0, ProbeKind::Entry, "parse", 0x1139, {"%di", "%si"}),
      probe(1, ProbeKind::Entry, "main", 0x1040),
      probe(2, ProbeKind::Return, "parse", 0x1139, {"$retval"}),
  });
  ASSERT_EQ(pf.functions.size(), 2u);
  const FunctionInfo& parse = pf.functions[0];
  EXPECT_EQ(parse.name, "parse");
  EXPECT_TRUE(parse.paired());
  EXPECT_EQ(parse.entry_probe, 0u);
  EXPECT_EQ(parse.return_probe, 2u);
  ASSERT_EQ(parse.values.size(), 3u);
  EXPECT_EQ(parse.values[2].name, "$retval");
  EXPECT_EQ(parse.return_values_at, 2u);
  EXPECT_EQ(pf.first_slot_of_probe[2], 2u);
  EXPECT_EQ(pf.role(0), ProbeRole::Entry);
  EXPECT_EQ(pf.role(2), ProbeRole::Return);
  EXPECT_EQ(pf.role(1), ProbeRole::HitOnly);  // main has no return probe
  EXPECT_EQ(pf.role(7), ProbeRole::Unknown);
  EXPECT_EQ(pf.function_of_probe[2], 0u);
}

TEST(PairingProbeFunctions, MidFunctionAndOtherFilesNeverPair) {
  const auto pf = group_probes(std::vector<ProbeInfo>{
      probe(0, ProbeKind::Entry, "parse", 0x1149, {}, 0x10),            // parse+0x10
      probe(1, ProbeKind::Return, "parse", 0x1139),
      probe(2, ProbeKind::Entry, "parse", 0x1139, {}, 0, "./libother.so"),  // same vaddr, other file
      probe(3, ProbeKind::Entry, "", 0x5000),                            // raw offset, no function
  });
  ASSERT_EQ(pf.functions.size(), 4u);
  EXPECT_EQ(pf.role(0), ProbeRole::HitOnly);
  EXPECT_EQ(pf.role(1), ProbeRole::HitOnly);  // return-only: counts returns
  EXPECT_EQ(pf.role(2), ProbeRole::HitOnly);
  EXPECT_EQ(pf.functions[pf.function_of_probe[0]].name, "parse+0x10");
  EXPECT_EQ(pf.functions[pf.function_of_probe[3]].name, "./app:0x5000");
  EXPECT_NE(pf.function_of_probe[1], pf.function_of_probe[2]);
}

// A stripped binary: BIN:0xOFF and BIN:0xOFF%return name no function, but the return
// probe says the offset is an entry, so the two pair; another raw offset still counts hits.
TEST(PairingProbeFunctions, RawOffsetWithAReturnProbePairs) {
  const auto pf = group_probes(std::vector<ProbeInfo>{
      probe(0, ProbeKind::Entry, "", 0x11c0, {"$arg1"}),
      probe(1, ProbeKind::Return, "", 0x11c0, {"$retval"}),
      probe(2, ProbeKind::Entry, "", 0x5000),
      probe(3, ProbeKind::Return, "", 0x11c0, {}, 0, "./libother.so"),
  });
  ASSERT_EQ(pf.functions.size(), 3u);
  EXPECT_EQ(pf.role(0), ProbeRole::Entry);
  EXPECT_EQ(pf.role(1), ProbeRole::Return);
  EXPECT_EQ(pf.function_of_probe[0], pf.function_of_probe[1]);
  EXPECT_EQ(pf.functions[pf.function_of_probe[0]].name, "./app:0x11c0");
  EXPECT_EQ(pf.role(2), ProbeRole::HitOnly);
  EXPECT_EQ(pf.role(3), ProbeRole::HitOnly);  // its own file: return-only
}

TEST(PairingProbeFunctions, DuplicateProbeIsItsOwnHitCounter) {
  const auto pf = group_probes(std::vector<ProbeInfo>{
      probe(0, ProbeKind::Entry, "f", 0x10),
      probe(1, ProbeKind::Return, "f", 0x10),
      probe(2, ProbeKind::Entry, "f", 0x10),
  });
  ASSERT_EQ(pf.functions.size(), 2u);
  EXPECT_EQ(pf.role(0), ProbeRole::Entry);
  EXPECT_EQ(pf.role(2), ProbeRole::HitOnly);
  EXPECT_EQ(pf.functions[1].name, "f [probe #2]");
}

// USDT probes group by name: two sites of function__entry are one function's opening
// half, function__return its closing half; the key pairs slot 0 and 1 on both sides.
TEST(PairingProbeFunctions, UsdtHalvesOfOneProviderPairByName) {
  const auto pf = group_probes(std::vector<ProbeInfo>{
      usdt_probe(0, "python:function__entry", 0x100, {"$arg1", "$arg2", "$arg3"}, 0b011),
      usdt_probe(1, "python:function__entry", 0x200, {"$arg1", "$arg2", "$arg3"}, 0b011),
      usdt_probe(2, "python:function__return", 0x300, {"$arg1", "$arg2", "$arg3"}, 0b011),
      usdt_probe(3, "python:gc__start", 0x400, {"$arg1"}),  // no gc__done in the table
      usdt_probe(4, "python:line", 0x500),
      usdt_probe(5, "python:line", 0x600),
      usdt_probe(6, "other:function__return", 0x700),       // another provider
  });
  ASSERT_EQ(pf.functions.size(), 4u);
  const FunctionInfo& py = pf.functions[pf.function_of_probe[0]];
  EXPECT_EQ(py.name, "python:function");
  EXPECT_TRUE(py.usdt);
  EXPECT_TRUE(py.paired());
  EXPECT_EQ(pf.function_of_probe[1], pf.function_of_probe[0]);
  EXPECT_EQ(pf.function_of_probe[2], pf.function_of_probe[0]);
  EXPECT_EQ(pf.role(0), ProbeRole::Entry);
  EXPECT_EQ(pf.role(1), ProbeRole::Entry);
  EXPECT_EQ(pf.role(2), ProbeRole::Return);
  EXPECT_EQ(py.values.size(), 6u);  // the entry's three, then the return's
  EXPECT_EQ(py.return_values_at, 3u);
  EXPECT_EQ(py.values[0].name, "$arg1");
  EXPECT_EQ(py.values[5].name, "return:$arg3");  // the closing half's, by its suffix
  EXPECT_EQ(pf.first_slot_of_probe[1], 0u);
  EXPECT_EQ(pf.first_slot_of_probe[2], 3u);
  const std::vector<std::pair<uint16_t, uint16_t>> key{{0, 0}, {1, 1}};
  EXPECT_EQ(py.key, key);
  EXPECT_EQ(pf.functions[pf.function_of_probe[3]].name, "python:gc__start");
  EXPECT_EQ(pf.role(3), ProbeRole::HitOnly);
  EXPECT_EQ(pf.function_of_probe[4], pf.function_of_probe[5]);
  EXPECT_EQ(pf.functions[pf.function_of_probe[4]].name, "python:line");
  EXPECT_EQ(pf.role(6), ProbeRole::HitOnly);
}

TEST(PairingProbeFunctions, UsdtPairHalvesAreNamedBySuffix) {
  EXPECT_EQ(usdt_pair_half("python:gc__start"), (std::pair<std::string, bool>{"python:gc", false}));
  EXPECT_EQ(usdt_pair_half("python:gc__done"), (std::pair<std::string, bool>{"python:gc", true}));
  EXPECT_EQ(usdt_pair_half("p:x__begin"), (std::pair<std::string, bool>{"p:x", false}));
  EXPECT_EQ(usdt_pair_half("p:x__end"), (std::pair<std::string, bool>{"p:x", true}));
  EXPECT_EQ(usdt_pair_half("python:function__return"), (std::pair<std::string, bool>{"python:function", true}));
  EXPECT_FALSE(usdt_pair_half("python:line"));
  EXPECT_FALSE(usdt_pair_half("__done"));
}

// A string value keys only against a string: a key slot whose kinds differ is dropped.
TEST(PairingProbeFunctions, UsdtKeySlotsOfDifferentKindsAreDropped) {
  std::vector<ProbeInfo> probes{usdt_probe(0, "p:w__start", 0x100, {"$arg1", "$arg2"}, 0b11),
                                usdt_probe(1, "p:w__done", 0x200, {"$arg1", "$arg2"}, 0b11)};
  probes[1].values[1].kind = ValueKind::String;  // $arg2:string on the done side only
  const auto pf = group_probes(probes);
  ASSERT_EQ(pf.functions.size(), 1u);
  const std::vector<std::pair<uint16_t, uint16_t>> key{{0, 0}};
  EXPECT_EQ(pf.functions[0].key, key);
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

ProbeInfo site_probe(uint32_t index, std::string function, uint64_t vaddr, uint64_t offset_in_function) {
  ProbeInfo p = test::probe(index, ProbeKind::Entry, std::move(function), vaddr, {"x"}, offset_in_function);
  p.site = true;
  return p;
}

// A line's statements are one function that counts hits; a function's inlined copies
// count hits on the row of its out-of-line copy, even one at another function's entry.
TEST(SiteProbeFunctions, LinesAndInlinedCopiesGroupByName) {
  const auto pf = group_probes(std::vector<ProbeInfo>{
      test::probe(0, ProbeKind::Entry, "twice", 0x1210),
      test::probe(1, ProbeKind::Return, "twice", 0x1210),
      site_probe(2, "twice", 0x10ab, 0x4b),
      site_probe(3, "twice", 0x1270, 0),  // a copy at squares' first byte: no entry of twice
      site_probe(4, "lines.c:23", 0x1240, 0),
      site_probe(5, "lines.c:23", 0x1255, 0x15),
  });
  ASSERT_EQ(pf.functions.size(), 3u);
  const uint32_t twice = pf.function_of_probe[0];
  EXPECT_TRUE(pf.functions[twice].paired());
  const uint32_t copies = pf.function_of_probe[2];
  EXPECT_EQ(pf.function_of_probe[3], copies);
  EXPECT_TRUE(pf.functions[copies].site);
  EXPECT_EQ(pf.functions[copies].row, twice);
  EXPECT_EQ(pf.role(2), ProbeRole::HitOnly);
  EXPECT_EQ(pf.role(3), ProbeRole::HitOnly);
  const uint32_t line = pf.function_of_probe[4];
  EXPECT_EQ(pf.function_of_probe[5], line);
  EXPECT_EQ(pf.functions[line].name, "lines.c:23");
  EXPECT_EQ(pf.functions[line].row, kNoFunction);
  EXPECT_EQ(pf.first_slot_of_probe[5], 0u);
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

ProbeInfo recorded(ProbeInfo p, RowRole role, std::string row) {
  p.role = role;
  p.row = std::move(row);
  return p;
}

// A file of format 1.6 says what each probe does in which row: group_probes takes that,
// not what the names suggest. Each of these would be guessed otherwise.
TEST(RecordedProbeFunctions, RolesAndRowsAreTakenAsRecorded) {
  std::vector<ProbeInfo> probes{
      // A pair whose names are no known pair's halves: begin and end of "app:request".
      recorded(test::usdt_probe(0, "app:req_in", 0x100, {"$arg1"}), RowRole::UsdtStart, "app:request"),
      recorded(test::usdt_probe(1, "app:req_out", 0x200, {"$arg1"}), RowRole::UsdtDone, "app:request"),
      // Names of a pair's halves, recorded as probes of no pair: each counts hits.
      recorded(test::usdt_probe(2, "p:gc__start", 0x300), RowRole::Usdt, "p:gc__start"),
      recorded(test::usdt_probe(3, "p:gc__done", 0x400), RowRole::Usdt, "p:gc__done"),
      recorded(test::probe(4, ProbeKind::Entry, "twice", 0x1210), RowRole::Entry, "twice"),
      recorded(test::probe(5, ProbeKind::Return, "twice", 0x1210), RowRole::Return, "twice"),
      // A source line whose row is named like a function joins no function's row.
      recorded(test::probe(6, ProbeKind::Entry, "twice", 0x10ab, {}, 0x4b), RowRole::Line, "twice"),
  };
  probes[6].site = true;
  const auto pf = group_probes(probes);
  ASSERT_EQ(pf.functions.size(), 5u);
  const FunctionInfo& request = pf.functions[pf.function_of_probe[0]];
  EXPECT_EQ(request.name, "app:request");
  EXPECT_TRUE(request.usdt);
  EXPECT_TRUE(request.paired());
  EXPECT_EQ(pf.function_of_probe[1], pf.function_of_probe[0]);
  EXPECT_EQ(pf.role(0), ProbeRole::Entry);
  EXPECT_EQ(pf.role(1), ProbeRole::Return);
  EXPECT_NE(pf.function_of_probe[2], pf.function_of_probe[3]);
  EXPECT_EQ(pf.functions[pf.function_of_probe[2]].name, "p:gc__start");
  EXPECT_EQ(pf.role(2), ProbeRole::HitOnly);
  EXPECT_EQ(pf.role(3), ProbeRole::HitOnly);
  EXPECT_TRUE(pf.functions[pf.function_of_probe[4]].paired());
  const FunctionInfo& line = pf.functions[pf.function_of_probe[6]];
  EXPECT_TRUE(line.site);
  EXPECT_EQ(line.row, kNoFunction);

  // Guessed from the same names and flags, they group otherwise.
  for (ProbeInfo& p : probes) p.role = RowRole::Unrecorded;
  const auto guessed = group_probes(probes);
  EXPECT_NE(guessed.function_of_probe[0], guessed.function_of_probe[1]);
  EXPECT_EQ(guessed.function_of_probe[2], guessed.function_of_probe[3]);
  EXPECT_EQ(guessed.functions[guessed.function_of_probe[6]].row, guessed.function_of_probe[4]);
}

// A half of a USDT pair whose other half is not in the table counts hits under its own
// name, and an instruction probe is its row's, even at a function's first byte.
TEST(RecordedProbeFunctions, AHalfAloneAndAnInstructionCountHits) {
  const auto pf = group_probes(std::vector<ProbeInfo>{
      recorded(test::usdt_probe(0, "python:gc__start", 0x100), RowRole::UsdtStart, "python:gc"),
      recorded(test::probe(1, ProbeKind::Entry, "f", 0x2000), RowRole::Instruction, "f+0x0"),
      recorded(test::probe(2, ProbeKind::Return, "f", 0x2000), RowRole::Return, "f"),
  });
  ASSERT_EQ(pf.functions.size(), 3u);
  EXPECT_EQ(pf.functions[pf.function_of_probe[0]].name, "python:gc__start");
  EXPECT_EQ(pf.role(0), ProbeRole::HitOnly);
  EXPECT_EQ(pf.functions[pf.function_of_probe[1]].name, "f+0x0");
  EXPECT_EQ(pf.role(1), ProbeRole::HitOnly);
  EXPECT_EQ(pf.role(2), ProbeRole::HitOnly);  // return-only
}

// Entry points recorded under one row name are one source function when their symbols
// differ (gcc's clones); two functions of one symbol (two `static helper`s) are two.
TEST(RecordedProbeFunctions, ClonesShareARowAndStaticNamesakesDoNot) {
  std::vector<ProbeInfo> probes{
      recorded(test::probe(0, ProbeKind::Entry, "scale", 0x1000), RowRole::Entry, "scale"),
      recorded(test::probe(1, ProbeKind::Entry, "scale", 0x2000), RowRole::Entry, "scale"),
      recorded(test::probe(2, ProbeKind::Entry, "helper", 0x3000), RowRole::Entry, "helper"),
      recorded(test::probe(3, ProbeKind::Entry, "helper", 0x4000), RowRole::Entry, "helper"),
  };
  const char* symbols[] = {"scale", "scale.constprop.0", "helper", "helper"};
  for (std::size_t i = 0; i < probes.size(); i++) probes[i].symbol = symbols[i];
  const auto pf = group_probes(probes);
  ASSERT_EQ(pf.functions.size(), 4u);
  EXPECT_EQ(pf.functions[1].row, 0u);
  EXPECT_EQ(pf.functions[3].row, kNoFunction);
}

// What the recorder writes for an ordinary table groups it as the guesses always did:
// the table of the tests above, each probe with the role and row `record` gives it.
TEST(RecordedProbeFunctions, RecordedRolesGroupAsTheGuessesDid) {
  std::vector<ProbeInfo> probes{
      recorded(test::probe(0, ProbeKind::Entry, "parse", 0x1139, {"%di"}), RowRole::Entry, "parse"),
      recorded(test::probe(1, ProbeKind::Return, "parse", 0x1139, {"$retval"}), RowRole::Return, "parse"),
      recorded(test::probe(2, ProbeKind::Entry, "parse", 0x1149, {}, 0x10), RowRole::Instruction, "parse+0x10"),
      recorded(test::probe(3, ProbeKind::Entry, "", 0x11c0), RowRole::Entry, "./app:0x11c0"),
      recorded(test::probe(4, ProbeKind::Return, "", 0x11c0), RowRole::Return, "./app:0x11c0"),
      recorded(test::probe(5, ProbeKind::Entry, "", 0x5000), RowRole::Entry, "./app:0x5000"),
      recorded(test::probe(6, ProbeKind::Entry, "inner", 0x1270), RowRole::Entry, "inner"),
      recorded(test::probe(7, ProbeKind::Exit, "inner", 0x1276, {}, 0x6), RowRole::Exit, "inner"),
      recorded(test::probe(8, ProbeKind::Exit, "inner", 0x12a0, {}, 0x30), RowRole::Exit, "inner"),
      recorded(test::usdt_probe(9, "python:function__entry", 0x100, {"$arg1"}, 1), RowRole::UsdtStart,
               "python:function"),
      recorded(test::usdt_probe(10, "python:function__return", 0x200, {"$arg1"}, 1), RowRole::UsdtDone,
               "python:function"),
      recorded(test::probe(11, ProbeKind::Entry, "twice", 0x10ab, {}, 0x4b), RowRole::Inlined, "twice"),
      recorded(test::probe(12, ProbeKind::Entry, "twice", 0x1210), RowRole::Entry, "twice"),
      recorded(test::probe(13, ProbeKind::Entry, "lines.c:23", 0x1240), RowRole::Line, "lines.c:23"),
      recorded(test::probe(14, ProbeKind::Entry, "parse", 0x1139), RowRole::Entry, "parse"),
  };
  for (ProbeInfo& p : probes) p.symbol = p.function;
  probes[11].site = probes[13].site = true;
  const ProbeFunctions as_recorded = group_probes(probes);
  for (ProbeInfo& p : probes) p.role = RowRole::Unrecorded;
  const ProbeFunctions as_guessed = group_probes(probes);
  ASSERT_EQ(as_recorded.functions.size(), as_guessed.functions.size());
  for (std::size_t i = 0; i < as_guessed.functions.size(); i++) {
    const FunctionInfo &a = as_recorded.functions[i], &b = as_guessed.functions[i];
    EXPECT_EQ(a.name, b.name) << i;
    EXPECT_EQ(a.entry_probe, b.entry_probe) << a.name;
    EXPECT_EQ(a.return_probe, b.return_probe) << a.name;
    EXPECT_EQ(a.at_exits, b.at_exits) << a.name;
    EXPECT_EQ(a.usdt, b.usdt) << a.name;
    EXPECT_EQ(a.site, b.site) << a.name;
    EXPECT_EQ(a.row, b.row) << a.name;
    EXPECT_EQ(a.key, b.key) << a.name;
    EXPECT_EQ(a.values.size(), b.values.size()) << a.name;
  }
  EXPECT_EQ(as_recorded.function_of_probe, as_guessed.function_of_probe);
  EXPECT_EQ(as_recorded.role_of_probe, as_guessed.role_of_probe);
  EXPECT_EQ(as_recorded.first_slot_of_probe, as_guessed.first_slot_of_probe);
  EXPECT_EQ(as_guessed.functions[as_guessed.function_of_probe[14]].name, "parse [probe #14]");
  EXPECT_TRUE(as_guessed.functions[as_guessed.function_of_probe[3]].paired());
}

}  // namespace
}  // namespace uprof
