// The last step of `uprof record`: only the parts that need the kernel. Start the
// workload stopped (or find the process to attach to), open the capture engine on
// the plan, let the workload run, write every event it hands over to the data file,
// and account for every hit against the kernel's own counts.
//
//   plan_recording (recording_plan.h) -> the command resolves the engine (engine_resolution.h)
//     and measures its probe costs (calibrate/)
//     -> run_session(plan, engine, ...): engine open -> start -> capture -> data file -> RecordReport
//
// The session opens the engine it is given (engine/engine_table.h) and decides nothing
// about it; with --interval it hands each block's statistics to the command as data.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "uprof/engine/capture_engine.h"
#include "uprof/engine/engine_kind.h"
#include "uprof/record/interval_report.h"
#include "uprof/record/recording_plan.h"
#include "uprof/util/result.h"

namespace uprof {

// What the probes cost, per probe (by ProbeInfo::index): what each adds to its own
// function's measured call, and what one hit of it costs in all (calibrate/ measures
// them). A list that is empty, all 0 or not one per probe is not stored.
struct ProbeCosts {
  std::vector<uint64_t> inside_ns;
  std::vector<uint64_t> hit_ns;
};

// How the command steers a session while it runs.
struct SessionControl {
  // Set by a signal handler (Ctrl-C): stop recording.
  const std::atomic<bool>* stop = nullptr;
  // Published as soon as the workload exists, so that the handler can forward signals.
  std::atomic<pid_t>* workload_pid = nullptr;
  // Lines for the user before the run starts (stale tracefs probes removed).
  std::function<void(const std::string&)> on_note{};
  // --interval: each block as it closes (the command renders it: present/interval_text.h);
  // the last one when the recording ends.
  std::function<void(const IntervalReport&)> on_interval{};
};

struct RecordReport {
  std::string output;
  std::string engine;        // which capture engine recorded
  std::string attach;        // how its probes went on (CaptureEngine::attach_path)
  uint64_t bytes = 0;
  uint64_t events = 0;       // everything written (samples, lost markers, comm)
  uint64_t samples = 0;
  uint64_t lost = 0;         // samples the kernel dropped (ring full), all probes
  uint64_t missing_values = 0;
  uint64_t late = 0;         // events that arrived after newer ones were written
  UnwindCounts unwinding{};  // record -g
  uint64_t task_dropped = 0; // task records (fork, exit, names) a full ring had no room for
  std::vector<ProbeAccount> per_probe;
  std::vector<ProbeInfo> probes;
  int exit_status = 0;       // the workload's; 0 when attached
  int term_signal = 0;       // the signal that killed the workload, 0 if it exited
  std::string stop_reason;
  std::size_t cpus = 0;
  // The data file could not be written on (a full disk): the line that says so, the
  // recording having stopped there; "" otherwise. The workload ran to its end.
  std::string write_failure;

  uint64_t kernel_total() const;
  uint64_t recorded_total() const;
  // recorded + dropped == hits, probe by probe.
  bool accounted() const;
};

// Records with `engine`, decided before (engine_resolution.h): the session opens it and
// does not decide again.
Result<RecordReport> run_session(const RecordingPlan& plan, EngineKind engine, const ProbeCosts& costs,
                                 const SessionControl& control);

// "uprof: 2,000,000 events recorded, 0 lost (kernel counted 2,000,000); uprof.data, 41 MB"
std::string summary_line(const RecordReport& r);

}  // namespace uprof
