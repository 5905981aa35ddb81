// Puts the events of all CPU ring buffers into time order as they are drained, in
// bounded memory, so the data file is a time-ordered stream that report can pair
// without sorting.
//
// Each ring (or, in the BPF engine's one ring, each CPU's records) is already in time
// order, so events wait in one queue per lane and leave by a k-way merge of the
// queue heads (a heap over the lanes): appending is O(1) and nothing is reshuffled.
// The queues hold events compactly (drain/event_queue.h).
//
// Why it is safe: a pass reads every ring up to the head it sees when the pass
// starts. A sample taken at time t is visible in its ring a moment after t, so any
// sample that a later pass can still find was taken after the start of the pass
// before the current one. After pass k ends, every pending event older than the
// start of pass k-1 can go out: nothing older can come.
//   pass k-1 starts at T1, pass k starts at T2, pass k ends -> flush events < T1
//
// The budget: what waits here is capped (`budget` bytes). Once full, the reader stops
// taking records (full()); the records stay in the ring, the ring fills, and the
// kernel drops new ones and counts them: the accounting stays exact, and memory
// stays what the budget says. A pass that stopped early (pass_cut()) has read its
// rings only up to the newest event it took, not up to its start: that is where it
// counts from instead.
//   pass k starts at T2, stops at budget after an event of time t < T2 -> pass k counts as t
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "uprof/drain/event_queue.h"
#include "uprof/model/recording.h"
#include "uprof/util/result.h"

namespace uprof {

// What the drain may hold in memory between the ring and the data file, by default.
inline constexpr std::size_t kDefaultDrainBudget = std::size_t{32} << 20;

class EventOrderer {
 public:
  using Sink = std::function<Status(const Event&)>;

  explicit EventOrderer(std::size_t budget = kDefaultDrainBudget);

  // `lane` is the ring (or CPU) the event came from; events that come from no ring
  // (a synthesized first Comm) may use any index, e.g. one past the last ring.
  void push(std::size_t lane, const Event& e);
  // Call at the start of every drain pass with the clock's time then.
  void pass_started(uint64_t now);
  // This pass left records behind in its rings, each ring's older ones all taken
  // (it stopped at the budget, or read nothing): it counts as having read up to the
  // newest event pushed, not up to its start.
  void pass_cut();
  // Call when the pass has ended: emits, in time order, what can no longer be overtaken,
  // and nothing at or after `hold` (a ring that may still owe an older event:
  // engine/perf/ring_loss_watch.h).
  Status pass_ended(const Sink& sink, uint64_t hold = UINT64_MAX);
  // Emits everything left (after the final pass).
  Status flush_all(const Sink& sink);

  // Whether the events held have reached the budget: read no more records until a
  // pass has ended.
  bool full() const { return pool_->in_use() >= budget_; }
  std::size_t pending() const;
  // Bytes held now, and the most held at once.
  std::size_t held_bytes() const { return pool_->in_use(); }
  std::size_t peak_bytes() const { return pool_->peak(); }
  // Events emitted older than something already emitted (a ring out of order, or
  // a sample visible later than a whole pass): should stay 0.
  uint64_t late() const { return late_; }

 private:
  Status emit_before(uint64_t limit, const Sink& sink);
  std::size_t budget_;
  std::unique_ptr<ChunkPool> pool_;  // the queues point at it: it does not move
  std::vector<EventQueue> queues_;
  std::vector<std::pair<uint64_t, uint32_t>> heap_;  // (head time, lane), emit_before's
  Event out_;                                        // reused for every event emitted
  uint64_t prev_horizon_ = 0;  // what the previous pass read up to (its start, or less when cut)
  uint64_t cur_horizon_ = 0;
  uint64_t newest_pushed_ = 0;
  uint64_t last_emitted_ = 0;
  uint64_t late_ = 0;
};

}  // namespace uprof
