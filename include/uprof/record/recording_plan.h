// The first step of `uprof record`: from the parsed specs to the probe table and the
// capture plan, before anything touches the kernel. Resolves every spec against the
// program (or the file it names), lets DWARF type the values, and decides the entry
// and return probes and what each reads. Needs no root: tests run it on the fixtures.
//
//   uprof record -e 'add' ./mytest
//     -> target /work/build/mytest
//     -> probes  0 add (entry: a, b)   1 add%return ($retval)
//     -> capture probe 0 @ 0x1139 reads di si;  probe 1 @ 0x1139 %return reads ax
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "uprof/model/capture_plan.h"
#include "uprof/model/probe_backend.h"
#include "uprof/model/recording.h"
#include "uprof/model/site_move.h"
#include "uprof/record/probe_table.h"
#include "uprof/resolve/resolver.h"
#include "uprof/spec/probe_spec.h"
#include "uprof/util/result.h"

namespace uprof {

enum class EngineChoice : uint8_t { Auto, Bpf, Perf };

struct RecordRequest {
  std::vector<ProbeSpec> specs;         // -e, parsed; each may expand to many functions
  std::vector<std::string> command;     // the workload's argv; empty with attach_pid
  pid_t attach_pid = -1;                // -p
  bool system_wide = false;             // -a: every process that maps the probed files
  std::string output = "uprof.data";
  PlanOptions plan;
  std::size_t ring_pages = 0;           // -m: see CaptureTarget::ring_pages; 0 = the engine's default
  std::size_t drain_budget = 0;         // --buffer-size: see CaptureTarget::drain_budget; 0 = the default
  std::optional<double> duration_s;     // --duration
  // A command's recording ends when the last process it started has exited (a daemon's
  // child too: uprof adopts its orphans); --exit-with-command ends it with the command's
  // first process, as perf record does.
  bool exit_with_command = false;
  // --interval SEC: a block of per-function statistics every SEC while recording
  // (SessionControl::on_interval); the command draws log2 histograms in each when
  // interval_hist is set.
  std::optional<double> interval_s;
  bool interval_hist = false;
  ResolveOptions resolve;
  // The capture engine asked for: the BPF one where the kernel runs it, else perf
  // (auto); or either by name (--engine). The command resolves it once
  // (engine_resolution.h) and hands the engine to run_session. The backend is the
  // perf engine's.
  EngineChoice engine = EngineChoice::Auto;
  ProbeBackend backend = ProbeBackend::Tracefs;
  BpfAttach bpf_attach = BpfAttach::Auto;  // the BPF engine's (--attach)
  // --off-cpu: each call's time off the CPU, by kind (record/offcpu_probes.h); the BPF
  // engine's alone.
  bool offcpu = false;
  // With no values in a spec, capture every parameter and the return value
  // DWARF describes (--no-args turns it off).
  bool capture_args = true;
  // --exact-site: probe each function at its symbol, never at a cheaper site a few
  // instructions in (record/site_placement.h).
  bool exact_site = false;
  // -g, --call-graph, --stack-min: the call stack of each call (record/call_stacks.h).
  CallGraphPlan call_graph{};
};

struct RecordingPlan {
  RecordRequest request;
  std::string target;              // the program a spec without OBJECT names ("" with -a alone)
  std::vector<ProbeInfo> probes;   // the data file's probe table
  CapturePlan capture;             // what each probe reads, for the engine
  // Lines for the user before the run: a probe whose arguments cannot be captured,
  // a compiler clone, values cut to fit.
  std::vector<std::string> notes;
  // The entry sites placement moved (the probes' file offsets are the new sites).
  std::vector<SiteMove> moves;
};

Result<RecordingPlan> plan_recording(RecordRequest request);

}  // namespace uprof
