// The read side's one pass over a recording, shared by `report` and `script`:
// events -> names -> pairer -> filter -> sink.
//
//   DataFileReader ──> EventLoop::add ──> ThreadNames (Comm, Fork, Exit)
//                           │
//                           └──> Pairer ──> EventFilter ──> EventSink
//                                (calls, unmatched,         (Aggregator, script's
//                                 hits)                      text / JSON / Chrome)
//
// The filter applies to what the pairer reports, not to what it is fed: the pairer
// must see every event, or a call that straddles --since would turn into a
// ReturnWithoutEntry and its caller's depth would be off.
//
// Per event, a sink hears in this order: on_thread (a sample's or Comm event's
// thread, named), then what the pairer reported (on_unmatched, on_call, on_hit, in
// the pairer's order: an unwound inner frame before the outer call that unwound
// it), on_paired, then on_sample (the sample itself, by its own time) or on_lost.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "uprof/analyse/event_filter.h"
#include "uprof/analyse/pairing.h"
#include "uprof/analyse/probe_functions.h"
#include "uprof/analyse/thread_names.h"
#include "uprof/store/data_file.h"

namespace uprof {

// What the loop hands on. `comm` is the thread's name at that moment ("" when no
// event named the thread or its process); spans in Call, Unmatched and Hit are
// valid during the call only.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_call(const Call& /*call*/, std::string_view /*comm*/) {}
  virtual void on_unmatched(const Unmatched& /*unmatched*/, std::string_view /*comm*/) {}
  virtual void on_hit(const Hit& /*hit*/, std::string_view /*comm*/) {}
  // Every sample of a known probe that the filter keeps by its own time, after the
  // pairer saw it; `call_duration` when it was a return that closed a call.
  virtual void on_sample(const Event& /*sample*/, uint32_t /*function*/, std::optional<uint64_t> /*call_duration*/,
                         std::string_view /*comm*/) {}
  // Every Lost event, unfiltered: a loss is news whatever the filter.
  virtual void on_lost(const Event& /*lost*/) {}
  // The thread of every Sample and Comm event, filtered or not, before the pairer
  // sees it: a timeline names its tracks from these.
  virtual void on_thread(uint32_t /*pid*/, uint32_t /*tid*/, std::string_view /*comm*/) {}
  // The pairer has reported everything the current event (or the end) caused.
  virtual void on_paired() {}
  // A file that stack frames name (EventKind::Object, record -g), before the first
  // frame that names it; unfiltered, as frames of any call may name it.
  virtual void on_object(uint32_t /*object*/, std::string_view /*path*/, std::string_view /*build_id*/) {}
};

class EventLoop final : private PairingSink {
 public:
  // `hit_cost_ns`: see Pairer. `functions` and `sink` must outlive the loop.
  EventLoop(const ProbeFunctions& functions, const AggregateFilter& filter, uint64_t start_time, EventSink& sink,
            std::span<const uint64_t> hit_cost_ns = {});

  void add(const Event& e);
  // The calls still open are reported as RecordingStopped.
  void finish();

  const PairingCounts& pairing() const { return pairer_.counts(); }
  // Calls, unmatched entries and hits of selected functions that the pid/tid/comm/time filters left out.
  uint64_t filtered_out() const { return filtered_out_; }
  bool selected(uint32_t function) const { return filter_.selected(function); }
  const ThreadNames& names() const { return names_; }
  const Pairer& pairer() const { return pairer_; }
  // The time of the last event fed (0 before the first).
  uint64_t now() const { return now_; }
  // Whether a call, hit or unmatched entry of `function` on that thread at `time` would
  // reach the sink (the filters), as admitted, without counting it.
  bool admits(uint32_t function, uint32_t pid, uint32_t tid, uint64_t time) const {
    return filter_.selected(function) && filter_.keeps(pid, tid, time, names_);
  }

 private:
  void on_call(const Call& call) override;
  void on_unmatched(const Unmatched& unmatched) override;
  void on_hit(const Hit& hit) override;
  void on_fork(uint32_t pid, uint32_t tid, uint32_t parent_pid, uint32_t parent_tid) override;
  void on_exit(uint32_t pid, uint32_t tid) override;
  void on_object(uint32_t object, std::string_view path, std::string_view build_id) override {
    sink_.on_object(object, path, build_id);
  }
  bool admit(uint32_t function, uint32_t pid, uint32_t tid, uint64_t time);

  const ProbeFunctions& functions_;
  Pairer pairer_;
  EventFilter filter_;
  ThreadNames names_;
  EventSink& sink_;
  std::optional<uint64_t> closed_duration_;  // of the call the current event closed
  uint64_t filtered_out_ = 0;
  uint64_t now_ = 0;
};

struct ReadCounts {
  uint64_t events = 0;                     // events read
  uint64_t samples = 0;
  uint64_t lost = 0;                       // the sum of Lost events
  uint64_t first_time = 0, last_time = 0;  // of samples
};

// Feeds every event of `reader` to `loop` and finishes it. A file cut short or damaged
// stops at its last whole block: what it holds is reported, and reader.problems()
// says what was wrong.
ReadCounts read_events(DataFileReader& reader, EventLoop& loop);

}  // namespace uprof
