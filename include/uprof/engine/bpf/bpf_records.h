// BPF ring-buffer records -> the recording's events: what the BPF engine's programs
// wrote (bpf_capture_abi.h) becomes an Event with its probe's value slots, and the
// task records become Fork, Exit and Comm. Pure, like PerfRecordConverter; it keeps
// the counts the accounting needs.
//
//   HIT probe 0 cpu 1 tid 4242 time T {1, 10}   ->  Event{Sample, probe 0, values {1, 10}}, lane 1
//   HIT with a DWARF constant slot               ->  the slot holds the constant
//   FORK 4243/4243 from 4242/4242                ->  Event{Fork, values {4242, 4242}}
//   COMM 4242/4242 "worker"                      ->  Event{Comm, "worker"}
//   HIT tid 4242 with LOST_BEFORE, 3 dropped     ->  Event{Lost, pid/tid 4242, lost 3}, then the hit
//   STACK tid 4242 time T, then HIT tid 4242 time T  ->  no event, then the hit with `stack` (record -g)
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "uprof/drain/unwind/user_stack.h"

#include "uprof/model/capture_plan.h"
#include "uprof/model/recording.h"
#include "uprof/util/result.h"

namespace uprof {

struct BpfEvent {
  Event event;
  uint16_t cpu = 0;  // the CPU that wrote it: events of one CPU come in time order
  // The record said its thread's records were dropped since its last one: this Lost
  // event of that thread goes first (same CPU, same time).
  std::optional<Event> lost_before{};
  // No event: a STACK record, kept for its hit (record -g).
  bool none = false;
  // record -g: the hit's copied registers and stack, valid until the next convert; the
  // engine unwinds it into event.stack (drain/unwind/stack_unwinder.h).
  const UserStack* stack = nullptr;
};

// A Lost event of one thread (model/recording.h): it lost `lost` events before `time`.
Event thread_lost_event(uint32_t pid, uint32_t tid, uint64_t time, uint64_t lost);

class BpfRecordConverter {
 public:
  explicit BpfRecordConverter(const CapturePlan& plan);

  // A record cut short, of an unknown kind, or of a probe beyond the plan is an
  // Error naming the byte offset or the field.
  Result<BpfEvent> convert(std::span<const std::byte> record);
  // The same into `out`, which the drain reuses for every record: no Event is built
  // (and zeroed) per record. On an error `out` holds part of the record.
  Status convert_into(std::span<const std::byte> record, BpfEvent& out);

  // Per probe (plan order): hits converted.
  const std::vector<uint64_t>& recorded() const { return recorded_; }
  uint64_t samples() const { return samples_; }
  uint64_t missing_values() const { return missing_values_; }
  // Drops the records' LOST_BEFORE marks counted.
  uint64_t lost_marked() const { return lost_marked_; }

 private:
  // The STACK record a thread wrote last, until its HIT record (same time) takes it.
  struct PendingStack {
    uint64_t time = 0;
    std::vector<std::byte> regs, bytes;
  };
  Status keep_stack(uint32_t tid, uint64_t time, uint32_t copied, std::span<const std::byte> rest);

  const CapturePlan& plan_;
  std::unordered_map<uint32_t, PendingStack> pending_stacks_;
  UserStack stack_{};
  std::vector<uint64_t> recorded_;
  uint64_t samples_ = 0, missing_values_ = 0, lost_marked_ = 0;
};

}  // namespace uprof
