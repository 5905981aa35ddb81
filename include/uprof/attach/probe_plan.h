// What to attach, decided before anything is opened: resolved probe points ->
// the recording's probe table (entry and return probes, with the values each
// captures) and what the kernel must sample for each. Pure.
//
//   -e 'add %di %si $retval'   -> add (entry: %di %si), add%return ($retval)
//   -e 'add%return'            -> add%return only
//   -e 'loop_sum+0x8 %ax'      -> an entry-style probe in the middle; no return probe
#pragma once

#include <vector>

#include "uprof/attach/event_attr.h"
#include "uprof/resolve/resolved_probe.h"
#include "uprof/spec/value_spec.h"
#include "uprof/store/recording.h"
#include "uprof/util/result.h"

namespace uprof {

struct PlanOptions {
  bool entry_only = false;   // --entry-only: no return probes
  bool return_only = false;  // --return-only: no entry probes
};

struct ProbePlan {
  std::vector<ProbeInfo> probes;        // the data file's probe table; index == position
  std::vector<SampleContent> content;   // per probe: registers and stack bytes to sample
};

// Probes are deduplicated by (path, file offset, kind): the same function named by
// two specs is probed once, with the values of both (the first spec's first).
Result<ProbePlan> plan_probes(const std::vector<ResolvedProbe>& resolved, const PlanOptions& opts);

}  // namespace uprof
