// `uprof bench`: measures what a probe hit costs on the running kernel, through
// uprof's own recording path (the same sample content, the same engine, rings drained
// into a data file), for each capture engine and each target of bench_targets.h:
//
//   for each run, for each class, for each engine (interleaved, so that load changes
//   hit all alike):
//     unprobed loop (in this process, once per class and run), then three recordings
//     of a child `uprof bench --run-target CLASS N FILE` with that engine: entry probe
//     only ($arg1 $arg2), return probe only ($retval), entry + return (both)
//   added per hit = (child loop CPU time - unprobed loop CPU time) / hits
//   in a measured call = median duration the entry + return recording reports
//   for the target (it does nothing: all of it is the probes)
//   every figure is the median over the runs.
//
// CPU time of the probed thread, not wall time: a trap, its handler and the sample
// are charged to the thread, while waiting for a CPU on a loaded machine is not.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/calibrate/probe_cost.h"
#include "uprof/util/result.h"

namespace uprof {

struct ProbeBenchOptions {
  std::string self_exe;          // uprof's own binary (the targets live in it); empty: /proc/self/exe
  std::string work_dir;          // where the runs' data files go; empty: a new one in $TMPDIR, removed after
  std::vector<InsnClass> classes;  // the classes to measure; empty: every one this build has a target for
  // The engines to measure; empty: both, or perf alone where bpf_engine_supported()
  // fails (bench_engines).
  std::vector<EngineKind> engines;
  int runs = 3;
  uint64_t calls_step = 5'000;   // calls per run of the single-stepped target (slow)
  uint64_t calls_fast = 20'000;  // calls per run of the others
  std::function<void(std::string_view)> progress;  // one line per recording; may be empty
  // A line worth showing even without the progress lines: an engine left out, and why.
  // May be empty: the line then goes to `progress`.
  std::function<void(std::string_view)> note;

  // `bench --quick` and record's measurement: one run with fewer calls.
  ProbeBenchOptions& quick() {
    runs = 1;
    calls_step = 1'000;
    calls_fast = 5'000;
    return *this;
  }
};

// Which engines a bench measures, from those asked for (empty: as many as the
// kernel runs) and what bpf_engine_supported() answered (pure):
//   {} , ok                   -> bpf, perf
//   {} , "no BPF ring buffer" -> perf, note "not measuring the bpf engine: the kernel has no BPF ring ..."
//   {bpf}, not supported      -> the error
struct BenchEngines {
  std::vector<EngineKind> engines;  // in EngineKind order, each once
  std::string note;
};
Result<BenchEngines> bench_engines(std::span<const EngineKind> wanted, const Status& bpf_supported);

Result<ProbeCostTable> run_probe_bench(const ProbeBenchOptions& opts);

// What `uprof record` runs before it starts when the cache has no figures for a class
// its probes need with the engine it records with: a quick measurement (one run, 1,000
// or 5,000 calls: about half a second a class here) of just the missing classes (those
// this build has a target for) with that engine alone, merged into the cached table
// and saved. Returns the table to use: the cached one
// when nothing was missing, nullopt when nothing could be measured (`why` then says
// why, unless there was nothing to measure).
struct RecordCalibration {
  std::optional<ProbeCostTable> table;
  std::string why;                  // a measurement or the cache write failed
};
RecordCalibration calibrate_for_record(std::span<const InsnClass> needed, EngineKind engine, bool measure,
                                       const std::function<void(std::span<const InsnClass>)>& before_measuring);

// The child's side: runs the target loop and writes "calls N cpu_ns C wall_ns W sum S"
// to `result_path`.
Status run_bench_target(std::string_view short_name, uint64_t calls, const std::string& result_path);

}  // namespace uprof
