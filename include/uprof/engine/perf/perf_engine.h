// The perf capture engine: each probe opened as one perf event per online CPU (a
// uprobe defined in tracefs, or one on the dynamic uprobe PMU), every hit a perf
// sample of the registers and stack bytes the plan asks for, the per-CPU rings
// drained and merged by time (attach/event_set.h, drain/drain_loop.h,
// drain/event_order.h), each record converted by PerfRecordConverter.
//
// Accounting per probe: the events' read() gives every hit and, on Linux 6.0+, the
// samples dropped for a full ring (PERF_FORMAT_LOST); before that, PERF_RECORD_LOST.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "uprof/attach/event_set.h"
#include "uprof/engine/capture_engine.h"
#include "uprof/model/capture_plan.h"

namespace uprof {

// Per CPU ring when -m is not given: 1 MiB with 4 KiB pages.
inline constexpr std::size_t kPerfDefaultRingPages = 256;

struct PerfEngineOptions {
  // Tracefs follows threads and forked children; the uprobe PMU only the exec'd
  // main thread (its events are not inherited on this kernel: docs/kernel-findings.md).
  ProbeBackend backend = ProbeBackend::Tracefs;
  // The time of records that carry none before the first sample.
  uint64_t start_time = 0;
  // Lines for the user before the run: stale tracefs probes of a killed uprof removed.
  std::function<void(const std::string&)> on_note{};
};

// Finds tracefs (for the tracefs backend: a user who is not root learns here that
// it needs root), removes what a killed uprof left there, and opens every event,
// disabled. `plan` must outlive the engine.
// Why the perf engine refuses record --off-cpu: a perf event cannot act at a context
// switch, so it cannot add up a thread's time off the CPU only while the thread is inside
// a probed call, nor say which system call it blocked in. (perf's own --off-cpu runs a
// BPF program on sched_switch too, and for the whole program, not per call.)
inline constexpr const char* kPerfNoOffCpu =
    "--off-cpu needs the BPF engine: a perf event cannot follow a thread's switches off the CPU inside a probed "
    "call (perf's own --off-cpu is a BPF program too)";

Result<std::unique_ptr<CaptureEngine>> open_perf_engine(const CapturePlan& plan, const CaptureTarget& target,
                                                        const PerfEngineOptions& options);

}  // namespace uprof
