// A recording turned into what `uprof report` shows, in one streaming pass over
// the data file: the read-side loop (event_loop.h) into an Aggregator. Memory
// grows with functions, threads and --by values, never with events.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "uprof/analyse/aggregate.h"
#include "uprof/analyse/call_stacks.h"
#include "uprof/analyse/event_loop.h"
#include "uprof/analyse/pairing.h"
#include "uprof/analyse/probe_functions.h"
#include "uprof/store/data_file.h"

namespace uprof {

struct ReportModel {
  std::string path;
  RecordingMeta meta;
  std::vector<ProbeInfo> probes;
  std::optional<Trailer> trailer;      // absent: the file was cut short
  std::vector<std::string> problems;   // from the reader: damage, truncation
  uint64_t file_size = 0;
  uint64_t events = 0;                 // events read
  uint64_t samples = 0;
  uint64_t lost = 0;                   // samples the kernel dropped
  uint64_t first_time = 0, last_time = 0;
  ProbeFunctions functions;
  PairingCounts pairing;
  std::vector<GroupStats> groups;      // per the grouping asked for
  std::vector<GroupStats> totals;      // one per selected function
  std::vector<bool> selected;          // per function
  uint64_t filtered_out = 0;
  AggregateOptions options;
  // Per function: what its probes add to a measured call (0 unknown), see probe_cost_by_function.
  std::vector<uint64_t> probe_cost;
  // record -g: the calls by caller and by stack, named; absent when no probe carried stacks.
  std::optional<CallStacks> stacks;
  bool offcpu = false;                 // some probe carried off-CPU times (record --off-cpu)
};

// `report --by caller`: a function's calls by their caller, unless a selected function
// captures a value named "caller" (then it is that value, as --by NAME always is).
// Rewrites `options` (by, by_value) accordingly.
void resolve_by_caller(const ProbeFunctions& functions, AggregateOptions& options);

// Per function of `functions`, what its probes add to a measured call: the figure of
// its entry probe's instruction (RecordingMeta::probe_costs_ns), else of its return
// probe's, else the recording's single figure (files that hold no per-probe ones).
std::vector<uint64_t> probe_cost_by_function(const RecordingMeta& meta, const ProbeFunctions& functions);

// A second consumer of the calls build_report's pass pairs, beside its Aggregator: what
// a picture needs and the model does not keep (call_timeline.h). `begin` is called once
// the model's options are final (compensation, start time), before the first event;
// then on_call for every call the Aggregator counts. Only calls: an observer of every
// event would cost the pass a second virtual call per event (5% of a 10M-event report).
class CallObserver {
 public:
  virtual ~CallObserver() = default;
  virtual void begin(const ReportModel& /*model*/) {}
  virtual void on_call(const Call& call, std::string_view comm) = 0;
};

// `calls`, when given, hears every call the Aggregator hears.
Result<ReportModel> build_report(const std::string& path, const AggregateOptions& options,
                                 CallObserver* calls = nullptr);

}  // namespace uprof
