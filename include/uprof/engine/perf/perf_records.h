// perf ring-buffer records -> the recording's events: the one place where a
// PERF_RECORD_SAMPLE becomes an Event with its probe's value slots, and COMM, FORK,
// EXIT and LOST become theirs. Pure: it learns each event id's layout from the
// caller (add_id) and keeps the counts the accounting needs.
//
//   SAMPLE id=41 tid=4242 time=T regs{di=1, si=10}  ->  Event{Sample, probe 0, values {1, 10}}
//   LOST id=41 lost=3 time=T2 (ring's last: T1)      ->  Event{Lost, probe 0, lost 3, time T1, until T2, tid 0}
//   COMM (side band) pid=4242 "worker"               ->  Event{Comm, "worker"}
//   MMAP2 (side band, record -g)                     ->  nothing; mapping() has it
//   THROTTLE, a side band's SAMPLE                   ->  nothing
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "uprof/drain/record_decoder.h"
#include "uprof/drain/unwind/user_stack.h"
#include "uprof/model/capture_plan.h"
#include "uprof/engine/perf/perf_fetch_args.h"
#include "uprof/model/recording.h"
#include "uprof/util/result.h"

namespace uprof {

class PerfRecordConverter {
 public:
  // `start_time`: the time given to a record that carries none before any sample has.
  explicit PerfRecordConverter(const CapturePlan& plan, uint64_t start_time = 0);

  // Event `id` samples plan probe `probe` (nullopt: the side band, which writes task
  // records and samples nothing), with the layout `attr` gives.
  void add_id(uint64_t id, std::optional<uint32_t> probe, const perf_event_attr& attr);
  // Where probe `probe`'s memory values lie in its samples' raw data
  // (engine/perf/perf_fetch_args.h); none by default.
  void set_raw_layout(uint32_t probe, std::vector<RawSlot> layout);

  // nullopt for a record the recording does not keep. An id never added, or bytes
  // that do not decode, is an Error naming the record. `ring`: the ring it came from
  // (a LOST record's gap starts at that ring's record before it).
  Result<std::optional<Event>> convert(std::span<const std::byte> record, std::size_t ring = 0);
  // record -g: the registers and stack the last sample converted copied for its call
  // stack, when its probe carries one; valid while that record's bytes are.
  const UserStack* stack() const { return has_stack_ ? &stack_ : nullptr; }
  // record -g: the executable mapping the last record converted announced (MMAP2, from
  // the side band with EventSetOptions::track_mappings), as a /proc/PID/maps line.
  struct Mapping {
    uint32_t pid = 0;
    uint64_t time = 0;
    std::string maps_line;  // "7f1c2a028000-7f1c2a1bd000 r-xp 00028000 fe:01 1835023 /usr/lib/.../libc.so.6"
  };
  const Mapping* mapping() const { return has_mapping_ ? &mapping_ : nullptr; }

  // Per probe (plan order): samples converted, and samples PERF_RECORD_LOST said
  // were dropped.
  const std::vector<uint64_t>& recorded() const { return recorded_; }
  const std::vector<uint64_t>& lost_records() const { return lost_records_; }
  uint64_t samples() const { return samples_; }
  uint64_t missing_values() const { return missing_values_; }

 private:
  struct IdInfo {
    uint32_t probe;  // kNoProbe: the side band
    SampleFormat format;
  };
  static constexpr uint32_t kNoProbe = UINT32_MAX;

  const CapturePlan& plan_;
  const ArchInfo& arch_;
  std::unordered_map<uint64_t, IdInfo> ids_;
  std::vector<uint64_t> recorded_, lost_records_;
  uint64_t& ring_time(std::size_t ring);

  uint64_t samples_ = 0, missing_values_ = 0;
  UserStack stack_{};
  bool has_stack_ = false;
  Mapping mapping_{};
  bool has_mapping_ = false;
  uint64_t start_time_ = 0;
  uint64_t last_time_ = 0;  // for records without a time of their own
  std::vector<uint64_t> ring_times_;  // per ring: the time of its last record
  std::vector<std::vector<RawSlot>> raw_layouts_;  // per probe
};

// Drops the kernel counted (PERF_FORMAT_LOST, `counted`) beyond what the Lost events
// said (`reported`): a ring still full when the recording stopped gets no LOST record
// (docs/kernel-findings.md). Which ring, and since when, is not known: a Lost of every
// thread at `time` (the end), so that the calls still open are cut, not "stopped".
std::optional<Event> unreported_loss(uint64_t counted, uint64_t reported, uint64_t time);

}  // namespace uprof
