// `uprof bench --attach-cost`: what putting probes on and taking them off costs per
// probe, on each of the BPF engine's attach paths (engine/bpf/bpf_attach.h), measured
// through the engine itself: open (load the programs, attach) and close (detach) of a
// recording of N functions' entry and return probes.
//
// The probes go on a private copy of libc.so.6 that no process maps, so that what is
// timed is the kernel's registration and unregistration of the uprobes, not the
// instruction analysis and breakpoint writes into other processes (those are per
// mapping process, alike on both paths). One uprobe-PMU event costs ~5 ms to open and
// ~94 ms to close here (each close waits for an RCU-tasks-trace grace period), so the
// events path is measured on fewer functions than the links path.
#pragma once

#include <string>
#include <vector>

#include "uprof/util/result.h"

namespace uprof {

struct AttachBenchOptions {
  std::string work_dir;          // where the copy of libc goes (a new temporary one when empty)
  std::size_t link_functions = 2000;
  std::size_t event_functions = 20;
  int runs = 1;
};

struct AttachBenchRow {
  std::string path;            // "multi-uprobe links, sessions", "uprobe-PMU events"
  std::size_t probes = 0;      // entry + return probes
  double attach_s = 0, detach_s = 0;  // medians over the runs
};

struct AttachBench {
  std::vector<AttachBenchRow> rows;
  std::string skipped;  // why a path was not measured ("" when both were)
};

Result<AttachBench> bench_attach(const AttachBenchOptions& options);
std::string render_attach_bench(const AttachBench& b);

}  // namespace uprof
