// What `uprof record --interval SEC` prints while it records: per function, the calls
// that returned, the hits and the losses drained in each interval, with their latency
// statistics (BCC funclatency -i, bpftrace interval:s:N).
//
//   events, as the capture engine hands them to the data file
//     -> IntervalStats::add   (pairs them like report: analyse/pairing.h)
//     -> IntervalStats::cut   every SEC: the block of what was drained since the last cut
//
// A call belongs to the block in which its return was drained, a hit or a loss to the
// one in which it was; a call still open when the recording ends is counted in the
// last block as unmatched. So the blocks add up to what `uprof report` shows for the
// whole file (the same pairing, over the same events). Memory: one latency histogram
// per function, reset at each cut.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "uprof/analyse/latency_histogram.h"
#include "uprof/analyse/pairing.h"
#include "uprof/analyse/probe_functions.h"
#include "uprof/model/recording.h"

namespace uprof {

struct IntervalFunction {
  uint64_t calls = 0;          // paired calls that returned, and hits of probes that do not pair
  uint64_t unmatched = 0;      // entries left without a return (all reasons), returns without entry
  LatencyHistogram latency{};  // paired calls only
};

struct IntervalBlock {
  uint64_t index = 0;          // 1, 2, ...
  uint64_t begin = 0;          // CLOCK_MONOTONIC ns: the previous cut (or the start)
  uint64_t end = 0;            // this cut
  uint64_t samples = 0;        // probe hits drained in it
  uint64_t lost = 0;           // samples the kernel reported lost in it
  std::vector<IntervalFunction> functions{};  // by ProbeFunctions index
};

class IntervalStats final : private PairingSink {
 public:
  // `start`: CLOCK_MONOTONIC ns of the recording's start, the first block's begin.
  IntervalStats(std::span<const ProbeInfo> probes, uint64_t start);

  void add(const Event& e);
  // Closes the current block at `now` and returns it; the next one begins there.
  IntervalBlock cut(uint64_t now);
  // The recording ended: the calls still open count as unmatched in the current block.
  void finish();
  const ProbeFunctions& functions() const { return functions_; }

 private:
  void on_call(const Call& call) override;
  void on_unmatched(const Unmatched& unmatched) override;
  void on_hit(const Hit& hit) override;

  ProbeFunctions functions_;
  Pairer pairer_;
  IntervalBlock block_;
};

}  // namespace uprof
