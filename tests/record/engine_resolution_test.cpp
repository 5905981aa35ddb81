// Which engine a recording uses, decided before its costs are looked up: the pure
// decision from what the kernel answered, no root needed.
#include "uprof/record/engine_resolution.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

const Status kSupported = ok();
const Status kNoRing = err("the kernel has no BPF ring buffer (Linux 5.8+)");

TEST(EngineResolution, AutoIsBpfWhereTheKernelRunsIt) {
  auto r = resolve_engine(EngineChoice::Auto, kSupported);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->engine, EngineKind::Bpf);
  EXPECT_EQ(r->note, "");
}

TEST(EngineResolution, AutoFallsBackToPerfAndSaysWhy) {
  auto r = resolve_engine(EngineChoice::Auto, kNoRing);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->engine, EngineKind::Perf);
  EXPECT_EQ(r->note, "recording with the perf engine: the kernel has no BPF ring buffer (Linux 5.8+)");
}

TEST(EngineResolution, ANamedEngineIsKeptOrRefused) {
  auto bpf = resolve_engine(EngineChoice::Bpf, kSupported);
  ASSERT_TRUE(bpf.ok());
  EXPECT_EQ(bpf->engine, EngineKind::Bpf);
  auto refused = resolve_engine(EngineChoice::Bpf, kNoRing);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "--engine bpf: the kernel has no BPF ring buffer (Linux 5.8+)");
  for (const Status* s : {&kSupported, &kNoRing}) {
    auto perf = resolve_engine(EngineChoice::Perf, *s);
    ASSERT_TRUE(perf.ok());
    EXPECT_EQ(perf->engine, EngineKind::Perf);
    EXPECT_EQ(perf->note, "");
  }
}

TEST(EngineResolution, TheResolvedEngineIsAChoiceThatNeedsNoSecondDecision) {
  EXPECT_EQ(engine_choice(EngineKind::Bpf), EngineChoice::Bpf);
  EXPECT_EQ(engine_choice(EngineKind::Perf), EngineChoice::Perf);
  RecordRequest perf;
  perf.engine = EngineChoice::Perf;  // the kernel is not asked
  auto r = resolve_engine(perf);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->engine, EngineKind::Perf);
}

}  // namespace
}  // namespace uprof
