// The seam between `record` and the kernel: a capture engine takes the capture plan
// (model/capture_plan.h: what to read at each probe), attaches it, and hands back the
// recording's events in time order and, per probe, what was recorded against what the
// kernel counted. Everything above it (the session, the data file, report) is the same
// whichever engine recorded.
//
//   record/recording_session  --CapturePlan-->  CaptureEngine::open
//                             <--Event, Event...  capture(stop, sink)
//                             <--ProbeAccount per probe
//
// Engines: perf_engine.h (tracefs or uprobe-PMU probes opened as per-CPU perf events,
// their samples decoded from perf ring buffers). A new engine implements this
// interface, gets an open_*_engine function of its own beside perf_engine.h, and is
// chosen by record/recording_session.cpp's open_engine.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "uprof/drain/drain_loop.h"
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
  std::vector<ProbeAccount> per_probe;  // by probe table index
};

class CaptureEngine {
 public:
  virtual ~CaptureEngine() = default;
  // "perf": what the data file and the messages call it.
  virtual std::string_view name() const = 0;
  // How many CPUs (rings) it watches.
  virtual std::size_t cpus() const = 0;
  // Starts the probes now, unless they start at the workload's exec.
  virtual Status start() = 0;
  // Hands every event to `sink` until `stop` holds; then stops the probes, drains
  // what is left, and accounts for every probe.
  virtual Result<CaptureResult> capture(const StopCondition& stop, const CaptureSink& sink) = 0;
};

}  // namespace uprof
