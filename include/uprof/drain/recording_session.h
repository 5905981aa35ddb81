// One `uprof record` run, end to end: resolve the specs against the program, plan
// the probes, start the workload stopped (or find the process to attach to), open
// the events, drain the rings into the data file in time order, and account for
// every event against the kernel's own counts.
#pragma once

#include <functional>

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "uprof/attach/event_set.h"
#include "uprof/attach/probe_plan.h"
#include "uprof/resolve/resolver.h"
#include "uprof/util/result.h"

namespace uprof {

// What `on_planned` returns: per probe (by ProbeInfo::index), what it adds to its own
// function's measured call and what one hit of it costs in all.
struct PlannedProbeCosts {
  std::vector<uint64_t> inside_ns;
  std::vector<uint64_t> hit_ns;
};

struct RecordRequest {
  std::vector<std::string> specs;       // -e, each may expand to many functions
  std::vector<std::string> command;     // the workload's argv; empty with attach_pid
  pid_t attach_pid = -1;                // -p
  bool system_wide = false;             // -a: every process that maps the probed files
  std::string output = "uprof.data";
  PlanOptions plan;
  std::size_t ring_pages = 256;         // per CPU, a power of two
  std::optional<double> duration_s;     // --duration
  ResolveOptions resolve;
  ProbeBackend backend = ProbeBackend::Tracefs;
  // Where the uprobe PMU is described; "" = kUprobePmuDir, or the same path under
  // $UPROF_SYSFS_ROOT when that is set (see uprobe_pmu_dir()).
  std::string pmu_dir{};
  // With no values in a spec, capture every parameter and the return value
  // DWARF describes (--no-args turns it off).
  bool capture_args = true;
  // Lines for the user before the run starts: a probe whose arguments cannot
  // be captured, a compiler clone, stale tracefs probes of a killed uprof removed.
  std::function<void(const std::string&)> on_note;
  // Called once the probes are planned, before anything is opened: returns, per probe,
  // what the probes cost (RecordingMeta::probe_costs_ns and probe_hit_costs_ns; a list
  // that is empty, all 0 or not one per probe is not stored; probe_cost_ns gets the
  // smallest inside figure). `record` also uses it to say which class each probe's
  // first instruction is in.
  std::function<PlannedProbeCosts(const std::vector<ProbeInfo>&)> on_planned{};
};

struct ProbeTally {
  uint64_t recorded = 0;
  uint64_t kernel = 0;          // every hit, sampled or dropped
  uint64_t lost_records = 0;    // what PERF_RECORD_LOST said was dropped
  std::optional<uint64_t> lost; // what the counter says was dropped (PERF_FORMAT_LOST, Linux 6.0+)
};

struct RecordReport {
  std::string output;
  uint64_t bytes = 0;
  uint64_t events = 0;       // everything written (samples, lost markers, comm)
  uint64_t samples = 0;
  uint64_t lost = 0;         // samples the kernel dropped (ring full): the counters' figure when
                             // the kernel has one (PERF_RECORD_LOST misses drops at the end)
  uint64_t missing_values = 0;
  uint64_t late = 0;         // events that arrived after newer ones were written
  std::vector<ProbeTally> per_probe;
  std::vector<ProbeInfo> probes;
  int exit_status = 0;       // the workload's; 0 when attached
  int term_signal = 0;       // the signal that killed the workload, 0 if it exited
  std::string stop_reason;
  std::size_t cpus = 0;

  uint64_t kernel_total() const;
  uint64_t recorded_total() const;
  // recorded + lost == kernel, probe by probe.
  bool accounted() const;
  uint64_t lost_of(const ProbeTally& p) const { return p.lost.value_or(p.lost_records); }
};

// `stop` is set by a signal handler (Ctrl-C); `workload_pid` is published as soon
// as the workload exists, so the handler can forward signals to it.
Result<RecordReport> run_recording(const RecordRequest& req, const std::atomic<bool>& stop,
                                   std::atomic<pid_t>& workload_pid);

// "uprof: 2,000,000 events recorded, 0 lost (kernel counted 2,000,000); uprof.data, 41 MB"
std::string summary_line(const RecordReport& r);

}  // namespace uprof
