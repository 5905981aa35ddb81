// The engine table: one row per engine, read by `uprof record` to choose one
// (record/engine_resolution.h) and by the session to open it. No kernel is asked here.
#include "uprof/engine/engine_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace uprof {
namespace {

TEST(EngineTable, EveryEngineHasOneRowAndItsName) {
  ASSERT_EQ(engine_table().size(), kEngineKinds);
  std::set<EngineKind> kinds;
  for (const EngineRow& row : engine_table()) {
    EXPECT_TRUE(kinds.insert(row.kind).second) << row.name;
    EXPECT_EQ(&engine_row(row.kind), &row);
    EXPECT_EQ(to_string(row.kind), row.name);
    EXPECT_FALSE(row.needs.empty()) << row.name;
    EXPECT_NE(row.open, nullptr) << row.name;
  }
}

// auto prefers bpf, falls back to perf with the note `uprof record` prints, and perf
// needs nothing the kernel is asked about: the chain ends there.
TEST(EngineTable, PreferenceChecksAndFallbacks) {
  EXPECT_EQ(engine_table().front().kind, EngineKind::Bpf);
  const EngineRow& bpf = engine_row(EngineKind::Bpf);
  EXPECT_NE(bpf.supported, nullptr);
  EXPECT_EQ(bpf.fallback, EngineKind::Perf);
  EXPECT_EQ(bpf.fallback_note, "recording with the perf engine: ");
  const EngineRow& perf = engine_row(EngineKind::Perf);
  EXPECT_EQ(perf.supported, nullptr);
  EXPECT_EQ(perf.fallback, std::nullopt);
  // From every row, the fallbacks end at a row that needs no check, without a circle.
  for (const EngineRow& start : engine_table()) {
    const EngineRow* row = &start;
    std::size_t steps = 0;
    while (row->fallback && steps++ < kEngineKinds) row = &engine_row(*row->fallback);
    EXPECT_LE(steps, kEngineKinds) << start.name;
    EXPECT_TRUE(row->supported == nullptr || row == &start) << start.name;
  }
}

// What -m counts, as the "samples were dropped" line says it.
TEST(EngineTable, RingPagesAsTheLostLineSaysThem) {
  EXPECT_EQ(std::string("try a larger -m (now 64") + std::string(engine_row(EngineKind::Bpf).ring_pages) + ")",
            "try a larger -m (now 64 pages in the BPF ring)");
  EXPECT_EQ(std::string("try a larger -m (now 64") + std::string(engine_row(EngineKind::Perf).ring_pages) + ")",
            "try a larger -m (now 64 pages per CPU)");
}

TEST(StopCondition, ReasonsByName) {
  EXPECT_EQ(to_string(StopReason::WorkloadExited), "workload exited");
  EXPECT_EQ(to_string(StopReason::Flag), "stop requested");
  EXPECT_EQ(to_string(StopReason::Deadline), "deadline reached");
}

}  // namespace
}  // namespace uprof
