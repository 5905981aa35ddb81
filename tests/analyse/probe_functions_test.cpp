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
