// `uprof bench`: measures what a probe hit costs on the running kernel, through
// uprof's own recording path (tracefs probes, the same sample content, rings drained
// into a data file), for each target of bench_targets.h:
//
//   for each run, for each class (interleaved, so that load changes hit all alike):
//     unprobed loop (in this process), then three recordings of a child
//     `uprof bench --run-target CLASS N FILE`: entry probe only ($arg1 $arg2), return
//     probe only ($retval), entry + return (both)
//   added per hit = (child loop CPU time - unprobed loop CPU time) / hits
//   in a measured call = median duration the entry + return recording reports
//   for the target (it does nothing: all of it is the probes)
//   every figure is the median over the runs.
//
// CPU time of the probed thread, not wall time: a trap, its handler and the sample
// are charged to the thread, while waiting for a CPU on a loaded machine is not.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "uprof/calibrate/probe_cost.h"
#include "uprof/util/result.h"

namespace uprof {

struct ProbeBenchOptions {
  std::string self_exe;          // uprof's own binary (the targets live in it)
  std::string work_dir;          // where the runs' data files go (removed after)
  int runs = 3;
  uint64_t calls_step = 5'000;   // calls per run of the single-stepped target (slow)
  uint64_t calls_fast = 20'000;  // calls per run of the others
  std::function<void(std::string_view)> progress;  // one line per recording; may be empty
};

Result<ProbeCostTable> run_probe_bench(const ProbeBenchOptions& opts);

// The child's side: runs the target loop and writes "calls N cpu_ns C wall_ns W sum S"
// to `result_path`.
Status run_bench_target(std::string_view short_name, uint64_t calls, const std::string& result_path);

}  // namespace uprof
