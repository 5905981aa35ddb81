// One block of `uprof record --interval SEC` as data: what the session hands the command
// each time a block closes (SessionControl::on_interval), and what the command renders
// with present/interval_text.h. The session keeps the statistics (analyse/interval_stats.h:
// the same pairing as `uprof report`), the command decides how they look.
//
//   IntervalReport{.index = 3, .begin_ns = 2'000'000'000, .end_ns = 3'000'000'000,
//                  .end_realtime_ns = <08:41:03 UTC>, .events = 24'690, .lost = 0,
//                  .functions = {{"add", paired, 12'345 calls, 0 unmatched, latency},
//                                {"main", paired, 0 calls, 0 unmatched, {}}}}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprof/analyse/latency_histogram.h"

namespace uprof {

struct IntervalRow {
  std::string function;        // "add"
  bool paired = false;         // entry and return probes: latency and unmatched apply
  uint64_t calls = 0;          // paired calls that returned, and hits of probes that do not pair
  uint64_t unmatched = 0;      // entries left without a return, returns without an entry
  LatencyHistogram latency{};  // paired calls only
};

struct IntervalReport {
  uint64_t index = 0;            // 1, 2, ...
  uint64_t begin_ns = 0;         // since the recording's start (0 for the first block)
  uint64_t end_ns = 0;           // since the recording's start
  uint64_t end_realtime_ns = 0;  // CLOCK_REALTIME at the block's end: the wall time shown
  uint64_t events = 0;           // probe hits drained in the block
  uint64_t lost = 0;             // samples the kernel reported lost in it
  std::vector<IntervalRow> functions{};  // every probed function, those with nothing in the block too
};

}  // namespace uprof
