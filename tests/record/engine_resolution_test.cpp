// Which engine a recording uses, decided before its costs are looked up: the pure
// decision from what the kernel answered, no root needed.
#include "uprof/record/engine_resolution.h"

#include <gtest/gtest.h>

#include <optional>
#include <string_view>

namespace uprof {
namespace {

const Status kSupported = ok();
const Status kNoRing = err("the kernel has no BPF ring buffer (Linux 5.8+)");

// A kernel whose bpf row's check answers `bpf`; the perf row asks nothing, and a check
// of it would fail the test.
EngineCheck kernel(const Status& bpf) {
  return [bpf](EngineKind e) -> Status {
    EXPECT_EQ(e, EngineKind::Bpf) << "only the bpf row has a kernel check";
    return bpf;
  };
}

TEST(EngineResolution, AutoIsBpfWhereTheKernelRunsIt) {
  auto r = resolve_engine(EngineChoice::Auto, kernel(kSupported));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->engine, EngineKind::Bpf);
  EXPECT_EQ(r->note, "");
}

TEST(EngineResolution, AutoFallsBackToPerfAndSaysWhy) {
  auto r = resolve_engine(EngineChoice::Auto, kernel(kNoRing));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->engine, EngineKind::Perf);
  EXPECT_EQ(r->note, "recording with the perf engine: the kernel has no BPF ring buffer (Linux 5.8+)");
}

TEST(EngineResolution, ANamedEngineIsKeptOrRefused) {
  auto bpf = resolve_engine(EngineChoice::Bpf, kernel(kSupported));
  ASSERT_TRUE(bpf.ok());
  EXPECT_EQ(bpf->engine, EngineKind::Bpf);
  auto refused = resolve_engine(EngineChoice::Bpf, kernel(kNoRing));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "--engine bpf: the kernel has no BPF ring buffer (Linux 5.8+)");
  for (const Status* s : {&kSupported, &kNoRing}) {
    auto perf = resolve_engine(EngineChoice::Perf, kernel(*s));
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

TEST(EngineResolution, PerfIsDecidedWithoutAskingTheKernel) {
  int asked = 0;
  auto r = resolve_engine(EngineChoice::Perf, [&](EngineKind) {
    ++asked;
    return kNoRing;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->engine, EngineKind::Perf);
  EXPECT_EQ(asked, 0);
}

// --engine and --backend as `uprof record` parses them: the same words and usage errors
// as before the table.
TEST(EngineResolution, EngineOptionParsesToAChoice) {
  auto parsed = [](std::string_view name, bool backend) -> std::optional<EngineChoice> {
    auto r = parse_engine_choice(name, backend);
    if (!r) return std::nullopt;
    return *r;
  };
  EXPECT_EQ(parsed("auto", false), EngineChoice::Auto);
  EXPECT_EQ(parsed("bpf", false), EngineChoice::Bpf);
  EXPECT_EQ(parsed("perf", false), EngineChoice::Perf);
  // --backend is the perf engine's: it makes auto perf, and goes with perf.
  EXPECT_EQ(parsed("auto", true), EngineChoice::Perf);
  EXPECT_EQ(parsed("perf", true), EngineChoice::Perf);
  auto with_backend = parse_engine_choice("bpf", true);
  ASSERT_FALSE(with_backend.ok());
  EXPECT_EQ(with_backend.error().message,
            "--backend chooses the perf engine's probes: it does not go with --engine bpf");
  for (const char* bad : {"", "BPF", "ebpf", "tracefs"}) {
    auto r = parse_engine_choice(bad, false);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message, "--engine is bpf, perf or auto") << bad;
  }
}

}  // namespace
}  // namespace uprof
