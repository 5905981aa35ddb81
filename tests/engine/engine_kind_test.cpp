// The engines' names: what the probe-cost cache and --engine spell.
#include "uprof/engine/engine_kind.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

TEST(EngineKind, NamesRoundTrip) {
  for (EngineKind e : kEngineKindList) EXPECT_EQ(engine_kind_from_name(to_string(e)), e) << to_string(e);
  EXPECT_EQ(to_string(EngineKind::Bpf), "bpf");
  EXPECT_EQ(to_string(EngineKind::Perf), "perf");
  EXPECT_EQ(engine_kind_from_name("auto"), std::nullopt);
  EXPECT_EQ(engine_kind_from_name(""), std::nullopt);
  EXPECT_EQ(engine_kind_from_name("BPF"), std::nullopt);
}

}  // namespace
}  // namespace uprof
