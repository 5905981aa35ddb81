// The recording loop: sleep in epoll until a ring crosses its wakeup watermark
// (or a short interval passes), drain every ring, and repeat until the stop
// condition holds; then disable the events and drain everything that is left.
//
//   epoll { ring fds (POLLIN at the watermark), pidfd of the workload }
//     -> pass: ring 0, ring 1, ... each drained up to the head read at its start
//     -> workload exited / flag set / deadline passed
//     -> disable events -> final passes until every ring is empty
//
// The stop condition and its reasons belong to the engine seam (engine/stop_condition.h):
// both engines loop on them, the BPF one on StopWaiter alone.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "uprof/attach/ring_buffer.h"
#include "uprof/engine/stop_condition.h"
#include "uprof/util/unique_fd.h"
#include "uprof/util/result.h"

namespace uprof {

// The loop's sleep: epoll on the readers' fds (POLLIN when data waits) and the
// workload's pidfd, woken at the latest by the poll interval or the deadline.
// A reader that drains a ring of its own (the BPF engine's) loops on it too.
class StopWaiter {
 public:
  static Result<StopWaiter> open(const StopCondition& stop, std::span<const int> fds);
  // Sleeps until a fd is ready, the workload exits or `poll_interval_ms` passes.
  // Returns the reason to stop once one holds (checked before sleeping), else nullopt.
  // `ready` is set when a fd woke it.
  Result<std::optional<StopReason>> wait(int poll_interval_ms, bool& ready);

 private:
  StopWaiter(const StopCondition& stop, UniqueFd ep, UniqueFd pidfd, std::vector<int> fds)
      : stop_(&stop), ep_(std::move(ep)), pidfd_(std::move(pidfd)), fds_(std::move(fds)) {}
  const StopCondition* stop_;
  UniqueFd ep_, pidfd_;
  std::vector<int> fds_;
  bool workload_exited_ = false;
};

struct DrainLoopOptions {
  // Longest sleep between passes: how late a flag or an exit is noticed when no
  // signal interrupts the wait, and how long samples below the watermark wait.
  int poll_interval_ms = 100;
  // Called around every pass over all rings, the final ones included: a consumer
  // that merges the rings by time learns when a pass began and ended (see
  // event_order.h). An error from on_pass_end ends the loop like a record error.
  std::function<void()> on_pass_start{};
  std::function<Status()> on_pass_end{};
  // Asked after on_pass_start: true when the consumer holds as much as it may
  // (drain/event_order.h's budget). The pass then reads no ring: the records wait in
  // the rings, and once a ring is full the kernel drops new ones and counts them.
  std::function<bool()> hold_reads{};
};

struct DrainLoopResult {
  StopReason reason = StopReason::WorkloadExited;
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t wrapped = 0;   // records that crossed a buffer's end
  uint64_t passes = 0;    // drain passes over all rings, final ones included
  uint64_t held = 0;      // passes that read nothing: the consumer was full (hold_reads)
  uint64_t wakeups = 0;   // epoll returns with a ready ring
};

// Called for every record; `ring` is the index into the rings given.
using RingRecordFn = std::function<Status(std::size_t ring, std::span<const std::byte> record)>;

// Runs until `stop` holds, then calls `disable_events` and drains the rings
// empty. An error from `on_record` or from a ring ends the loop at once (the
// events are not disabled then: the caller owns them).
Result<DrainLoopResult> run_drain_loop(std::span<RingBuffer> rings, const StopCondition& stop,
                                       const RingRecordFn& on_record,
                                       const std::function<Status()>& disable_events,
                                       const DrainLoopOptions& options = {});

// One pass over every ring (what the loop does on each wakeup).
Result<DrainStats> drain_all(std::span<RingBuffer> rings, const RingRecordFn& on_record);

}  // namespace uprof
