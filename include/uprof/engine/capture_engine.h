// The seam between `record` and the kernel: a capture engine takes the capture plan
// (model/capture_plan.h: what to read at each probe), attaches it, and hands back the
// recording's events in time order and, per probe, what was recorded against what the
// kernel counted. Everything above it (the session, the data file, report) is the same
// whichever engine recorded.
//
//   record/recording_session  --CapturePlan-->  open_engine(kind, ...)  (engine_table.h)
//                             <--Event, Event...  capture(stop, sink)   (stop_condition.h)
//                             <--ProbeAccount per probe
//
// Two engines implement it:
//   engine/bpf/   bpf_engine.h: one BPF program on uprobe-PMU events writes each hit into
//                 one BPF ring buffer (the default where the kernel runs it)
//   engine/perf/  perf_engine.h: tracefs or uprobe-PMU probes as per-CPU perf events,
//                 their samples decoded from perf ring buffers and merged by time
// Both are rows of engine/engine_table.h: its name, what the kernel must have and how
// that is asked, its fallback and the note printed then, and how it is opened. `uprof
// record` reads the table once to choose (record/engine_resolution.h); the session opens
// the engine it was given through the table. A new engine implements this interface in
// engine/<name>/ and adds its row.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/drain/unwind/stack_unwinder.h"
#include "uprof/engine/stop_condition.h"
#include "uprof/model/recording.h"
#include "uprof/util/result.h"

namespace uprof {

// Which processes the probes follow.
struct CaptureTarget {
  pid_t pid = -1;              // the launched workload or -p PID; -1 with -a and no command
  bool system_wide = false;    // -a: every process that runs the probed code
  bool start_on_exec = true;   // a launched workload: the probes start at its exec
  // Ring buffer pages, a power of two: the perf engine's per CPU, the BPF engine's one
  // ring for all. 0: the engine's default (perf 256 per CPU, BPF kBpfDefaultRingPages).
  std::size_t ring_pages = 0;
  // Bytes the drain may hold between the ring and the data file (--buffer-size);
  // past it the ring fills and the kernel drops and counts. 0: kDefaultDrainBudget
  // (drain/event_order.h).
  std::size_t drain_budget = 0;
};

// One probe's accounting: recorded + dropped == hits when nothing went missing.
struct ProbeAccount {
  uint64_t recorded = 0;   // events handed to the sink
  uint64_t hits = 0;       // the kernel's count of every hit, recorded or dropped
  uint64_t dropped = 0;    // hits whose event the kernel could not write (ring full)
};

// Where the events go: `write` in time order, `flush` after each batch (the data
// file writes whole sections there). An error from either ends the capture.
struct CaptureSink {
  std::function<Status(const Event&)> write;
  std::function<Status()> flush;
};

struct CaptureResult {
  StopReason stop_reason = StopReason::WorkloadExited;
  uint64_t samples = 0;         // probe hits recorded, all probes
  uint64_t missing_values = 0;  // values a hit could not read (stored as 0)
  uint64_t late = 0;            // events that arrived after newer ones were written
  uint64_t task_dropped = 0;    // fork, exit and name records a full ring had no room for
  // record -g (drain/unwind/stack_unwinder.h): stacks unwound, and of them those with
  // no frame (their process exited before its mappings were read) or cut short.
  UnwindCounts unwinding{};
  std::vector<ProbeAccount> per_probe;  // by probe table index
};

class CaptureEngine {
 public:
  virtual ~CaptureEngine() = default;
  // "perf": what the data file and the messages call it.
  virtual std::string_view name() const = 0;
  // How its probes went on, for the record line and the data file:
  // "multi-uprobe links, sessions", "uprobe-PMU events", "tracefs".
  virtual std::string attach_path() const = 0;
  // How many CPUs (rings) it watches.
  virtual std::size_t cpus() const = 0;
  // Starts the probes now, unless they start at the workload's exec.
  virtual Status start() = 0;
  // Hands every event to `sink` until `stop` holds; then stops the probes, drains
  // what is left, and accounts for every probe.
  virtual Result<CaptureResult> capture(const StopCondition& stop, const CaptureSink& sink) = 0;
};

}  // namespace uprof
