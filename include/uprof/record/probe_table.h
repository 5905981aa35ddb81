// What to attach, decided before anything is opened: resolved probe points ->
// the recording's probe table (entry and return probes, with the values each
// captures) and the capture plan (what one hit of each must read). Pure.
//
//   -e 'add %di %si $retval'   -> add (entry: %di %si), add%return ($retval)
//   -e 'add%return'            -> add%return only
//   -e 'loop_sum+0x8 %ax'      -> an entry-style probe in the middle; no return probe
#pragma once

#include <vector>

#include "uprof/model/capture_plan.h"
#include "uprof/model/recording.h"
#include "uprof/record/unwind_risk.h"
#include "uprof/resolve/resolved_probe.h"
#include "uprof/util/result.h"

namespace uprof {

struct PlanOptions {
  bool entry_only = false;   // --entry-only: no return probes
  bool return_only = false;  // --return-only: no entry probes
  // --unsafe-returns: return probes also where a C++ exception could unwind through them
  // (record/unwind_risk.h, ReturnRisks); by default those functions are measured by probes
  // on their exit instructions (ReturnRisk::exits), or get entry probes only.
  bool unsafe_returns = false;
  // --string-size: the most bytes a string value keeps (record/value_binding.h).
  uint16_t string_max = 64;
  // --pair-by: which arguments ($argN, by N) key the calls of a USDT pair (ProbeInfo::
  // pair_key). Empty: python's function__entry/function__return by file and function
  // name ($arg1, $arg2), other pairs by nesting alone.
  std::vector<unsigned> pair_by{};
};

struct ProbeTable {
  std::vector<ProbeInfo> probes;  // the data file's probe table; index == position
  CapturePlan capture;            // one ProbeCapture per probe, in the same order
  // For the user: specs that named what an earlier spec probes already, and share its row.
  std::vector<std::string> notes;
};

// The arguments ($argN, by N) that key a USDT probe's pair: --pair-by's, else python's
// function probes by $arg1 and $arg2 (file and function name), else none.
std::vector<unsigned> usdt_pair_key_args(const std::string& function, const std::vector<unsigned>& pair_by);

// --pair-by's text: argN, $argN or N, comma-separated, N from 1 to 12 ("arg1,arg2" -> {1, 2}).
Result<std::vector<unsigned>> parse_pair_by(const std::string& text);

// Probes are deduplicated by (path, file offset, kind): the same function named by
// two specs is probed once, with the values of both (the first spec's first). `risks`
// (record/unwind_risk.h): the functions whose returns are measured at their exits, or not.
Result<ProbeTable> plan_probes(const std::vector<ResolvedProbe>& resolved, const PlanOptions& opts,
                               const ReturnRisks& risks = {});

}  // namespace uprof
