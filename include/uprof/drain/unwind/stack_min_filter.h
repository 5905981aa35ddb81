// record -g --stack-min on the perf engine: a perf event cannot decide at a return
// whether the call was long (no per-thread state in the kernel), so every return copies
// its stack and the drain drops the stacks of the calls shorter than the minimum, once
// the events are in time order (an entry and its return may come from two CPUs' rings).
//
//   work entry t=0 (EntryTime), work return t=2ms (IfLong)  --stack-min 1ms  -> the return keeps its stack
//   work entry t=0,             work return t=0.5ms                          -> its stack is dropped
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "uprof/model/capture_plan.h"
#include "uprof/model/recording.h"

namespace uprof {

class StackMinFilter {
 public:
  explicit StackMinFilter(const CapturePlan& plan) : plan_(plan) {}
  // Called on each event in time order: whether e is a short call's return whose stack
  // must go.
  bool drop_stack(const Event& e);
  uint64_t dropped() const { return dropped_; }

 private:
  const CapturePlan& plan_;
  std::unordered_map<uint32_t, std::vector<uint64_t>> entries_;  // per thread: its open calls' entry times
  uint64_t dropped_ = 0;
};

}  // namespace uprof
