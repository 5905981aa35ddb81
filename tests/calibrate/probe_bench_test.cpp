// Which engines `uprof bench` measures, from what was asked and what the kernel runs
// (pure: the kernel's answer is given).
#include "uprof/calibrate/probe_bench.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

const Status kSupported = ok();
const Status kNoBpf = err("the kernel cannot load BPF programs on uprobes (bpf(): Operation not permitted)");

TEST(ProbeBench, MeasuresBothEnginesByDefault) {
  auto e = bench_engines({}, kSupported);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->engines, (std::vector<EngineKind>{EngineKind::Bpf, EngineKind::Perf}));
  EXPECT_EQ(e->note, "");
}

TEST(ProbeBench, MeasuresPerfAloneWhereTheKernelRunsNoBpfAndSaysWhy) {
  auto e = bench_engines({}, kNoBpf);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->engines, std::vector<EngineKind>{EngineKind::Perf});
  EXPECT_EQ(e->note,
            "not measuring the bpf engine: the kernel cannot load BPF programs on uprobes (bpf(): Operation not "
            "permitted)");
}

TEST(ProbeBench, MeasuresTheEnginesAskedForOnceEachInOrder) {
  EngineKind perf[] = {EngineKind::Perf};
  auto p = bench_engines(perf, kNoBpf);  // perf needs no BPF
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->engines, std::vector<EngineKind>{EngineKind::Perf});
  EXPECT_EQ(p->note, "");
  EngineKind both[] = {EngineKind::Perf, EngineKind::Bpf, EngineKind::Perf};
  auto b = bench_engines(both, kSupported);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->engines, (std::vector<EngineKind>{EngineKind::Bpf, EngineKind::Perf}));
  EngineKind bpf[] = {EngineKind::Bpf};
  auto refused = bench_engines(bpf, kNoBpf);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "bench: the bpf engine: the kernel cannot load BPF programs on uprobes (bpf(): Operation not permitted)");
}

}  // namespace
}  // namespace uprof
