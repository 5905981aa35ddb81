// Puts the events of all CPU ring buffers into time order as they are drained, in
// bounded memory, so the data file is a time-ordered stream that report can pair
// without sorting.
//
// Each ring is already in time order (a CPU writes its samples as they happen), so
// events wait in one queue per ring and leave by a k-way merge of the queue heads:
// appending is O(1) and nothing is reshuffled (a heap of ~200-byte events was the
// recorder's largest cost).
//
// Why it is safe: a pass reads every ring up to the head it sees when the pass
// starts. A sample taken at time t is visible in its ring a moment after t, so any
// sample that a later pass can still find was taken after the start of the pass
// before the current one. After pass k ends, every pending event older than the
// start of pass k-1 can go out: nothing older can come.
//   pass k-1 starts at T1, pass k starts at T2, pass k ends -> flush events < T1
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "uprof/model/recording.h"
#include "uprof/util/result.h"

namespace uprof {

class EventOrderer {
 public:
  using Sink = std::function<Status(const Event&)>;

  // `ring` is the ring buffer the event came from; events that come from no ring
  // (a synthesized first Comm) may use any index, e.g. one past the last ring.
  void push(std::size_t ring, Event e);
  // Call at the start of every drain pass with the clock's time then.
  void pass_started(uint64_t now);
  // Call when the pass has ended: emits, in time order, what can no longer be overtaken,
  // and nothing at or after `hold` (a ring that may still owe an older event:
  // engine/perf/ring_loss_watch.h).
  Status pass_ended(const Sink& sink, uint64_t hold = UINT64_MAX);
  // Emits everything left (after the final pass).
  Status flush_all(const Sink& sink);

  std::size_t pending() const;
  // Events emitted older than something already emitted (a ring out of order, or
  // a sample visible later than a whole pass): should stay 0.
  uint64_t late() const { return late_; }

 private:
  Status emit_before(uint64_t limit, const Sink& sink);
  std::vector<std::deque<Event>> queues_;
  uint64_t prev_pass_start_ = 0;
  uint64_t cur_pass_start_ = 0;
  uint64_t last_emitted_ = 0;
  uint64_t late_ = 0;
};

}  // namespace uprof
