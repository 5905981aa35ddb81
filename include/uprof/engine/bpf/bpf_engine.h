// The BPF capture engine: one shared BPF program on every probe finds the probe's
// capture table entry by the attach cookie, keeps only the followed processes' hits,
// and writes what the entry asks for into one BPF ring buffer. The probes go on as
// multi-uprobe links, one per file and kind (uprobe_links.h: thousands of probes in
// a fraction of a second, returns as uprobe sessions that leave the processes uprof
// does not follow alone), or, on kernels before 6.6, as one uprobe-PMU event per probe
// opened for every process (pid -1). Raw
// tracepoints on fork, exit and exec keep the set of followed processes in a map
// (the workload, its threads and every child, from its first instruction) and write
// the task events. The kernel side is src/engine/bpf/uprof_capture.bpf.c, compiled
// at build time and embedded; the table is bpf_capture_table.h, the records
// bpf_records.h.
//
// Accounting per probe, kept by the program: hits of followed threads, records
// written, records the ring had no room for.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "uprof/engine/capture_engine.h"
#include "uprof/model/capture_plan.h"
#include "uprof/model/probe_backend.h"

namespace uprof {

// Whether this kernel runs the BPF engine: bpf(), BPF ring buffers, the attach
// cookie helper. The Error says which is missing. $UPROF_BPF_PRETEND=no-bpf,
// no-ringbuf or no-cookie makes it answer as a kernel without that would.
Status bpf_engine_supported();

// The one ring's pages when -m is not given: 8 MiB with 4 KiB pages, what two threads
// calling a probed function flat out fill in ~100 ms here (the drain reads it every
// 100 ms, and when a quarter of it is full).
inline constexpr std::size_t kBpfDefaultRingPages = 2048;

struct BpfEngineOptions {
  BpfAttach attach = BpfAttach::Auto;
  // Lines for the user before the run: a probed file other processes map too.
  std::function<void(const std::string&)> on_note{};
  // The launched program ("" when attaching): its own file's probes cost no other
  // process anything, a library's do.
  std::string workload_file{};
};

// Loads the programs, fills the capture table and opens one uprobe-PMU event per
// probe; nothing fires before start(). `plan` must outlive the engine. Everything
// it attached goes with it (every object is a file descriptor: a killed uprof
// leaves nothing behind).
Result<std::unique_ptr<CaptureEngine>> open_bpf_engine(const CapturePlan& plan, const CaptureTarget& target,
                                                       const BpfEngineOptions& options);

}  // namespace uprof
