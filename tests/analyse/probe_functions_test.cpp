#include "uprof/analyse/probe_functions.h"

#include <gtest/gtest.h>

#include "analyse/event_builders.h"

namespace uprof {
namespace {

using test::probe;

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

}  // namespace
}  // namespace uprof
