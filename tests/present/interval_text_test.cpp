// `uprof record --interval` blocks rendered from hand-made data: the exact text the
// command prints on stderr (README "Watching while it records"). The expected texts
// are what the renderer printed before the session handed blocks over as data, for
// the same block.
#include "uprof/present/interval_text.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

// 2026-12-06 08:41:03 UTC
constexpr uint64_t kWall = 1'796'546'463ull * 1'000'000'000ull;

LatencyHistogram latencies(std::initializer_list<uint64_t> ns) {
  LatencyHistogram h;
  for (uint64_t v : ns) h.record(v);
  return h;
}

IntervalReport block3() {
  return IntervalReport{
      .index = 3,
      .begin_ns = 2'000'000'000,
      .end_ns = 3'004'000'000,
      .end_realtime_ns = kWall + 250'000'000,
      .events = 24'690,
      .lost = 12,
      .functions = {
          IntervalRow{.function = "add", .paired = true, .calls = 12'345, .unmatched = 0,
                      .latency = latencies({2'000, 2'100, 5'000, 1'200'000})},
          IntervalRow{.function = "idle", .paired = true, .calls = 0, .unmatched = 0, .latency = {}},
          IntervalRow{.function = "main", .paired = true, .calls = 0, .unmatched = 1, .latency = {}},
          IntervalRow{.function = "tick", .paired = false, .calls = 7, .unmatched = 0, .latency = {}},
      }};
}

TEST(IntervalText, BlockWithATableOfTheFunctionsThatDidSomething) {
  // "idle" did nothing in the block: no row. "main" only left a call open; "tick" has
  // no return probe, so no latency and no unmatched calls.
  EXPECT_EQ(render_interval_block(block3(), IntervalTextOptions{}),
            "uprof: interval 3 (2.00-3.00 s, 08:41:03 UTC): 24,690 events, 12 lost\n"
            "  FUNCTION   CALLS     P50     P99     MAX  UNMATCHED\n"
            "  add       12,345  2.10us  1.20ms  1.20ms          0\n"
            "  main           0       -       -       -          1\n"
            "  tick           7       -       -       -          -\n");
}

TEST(IntervalText, HistogramsFollowTheTable) {
  EXPECT_EQ(render_interval_block(block3(), IntervalTextOptions{.histograms = true}),
            "uprof: interval 3 (2.00-3.00 s, 08:41:03 UTC): 24,690 events, 12 lost\n"
            "  FUNCTION   CALLS     P50     P99     MAX  UNMATCHED\n"
            "  add       12,345  2.10us  1.20ms  1.20ms          0\n"
            "  main           0       -       -       -          1\n"
            "  tick           7       -       -       -          -\n"
            "  add latency (log2):\n"
            "    [1.02us, 2.05us)  1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
            "    [2.05us, 4.10us)  1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
            "    [4.10us, 8.19us)  1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
            "    [8.19us, 16.4us)  0 |                                        |\n"
            "    [16.4us, 32.8us)  0 |                                        |\n"
            "    [32.8us, 65.5us)  0 |                                        |\n"
            "    [65.5us, 131us)   0 |                                        |\n"
            "    [131us, 262us)    0 |                                        |\n"
            "    [262us, 524us)    0 |                                        |\n"
            "    [524us, 1.05ms)   0 |                                        |\n"
            "    [1.05ms, 2.10ms)  1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n");
}

TEST(IntervalText, ABlockWithNothingSaysSoInOneLine) {
  IntervalReport empty{.index = 1, .begin_ns = 0, .end_ns = 1'000'000'000, .end_realtime_ns = kWall,
                       .events = 0, .lost = 0,
                       .functions = {IntervalRow{.function = "add", .paired = true, .calls = 0, .unmatched = 0,
                                                 .latency = {}}}};
  EXPECT_EQ(render_interval_block(empty, IntervalTextOptions{.histograms = true}),
            "uprof: interval 1 (0.00-1.00 s, 08:41:03 UTC): 0 events, 0 lost; no calls\n");
}

}  // namespace
}  // namespace uprof
