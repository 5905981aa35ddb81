// Which capture engine a recording will use, decided before anything is measured or
// opened: `uprof record` needs it early, because the probe costs it stores are the
// figures of that engine (calibrate/record_costs.h), and it passes the answer on in
// RecordRequest::engine so that the session does not decide again.
//
//   --engine auto, bpf_engine_supported() ok     -> bpf
//   --engine auto, "the kernel has no BPF ring"  -> perf, note "recording with the perf engine: the kernel has ..."
//   --engine bpf,  not supported                 -> "--engine bpf: the kernel has ..." (nothing is started)
//   --engine perf (or --backend)                 -> perf, the kernel is not asked
#pragma once

#include <string>

#include "uprof/engine/engine_kind.h"
#include "uprof/record/recording_plan.h"
#include "uprof/util/result.h"

namespace uprof {

struct ResolvedEngine {
  EngineKind engine = EngineKind::Bpf;
  std::string note;  // for the user when auto fell back to perf; "" otherwise
};

// The decision alone, from what bpf_engine_supported() answered (pure).
Result<ResolvedEngine> resolve_engine(EngineChoice choice, const Status& bpf_supported);
// The same for a request: asks the kernel unless the request names perf.
Result<ResolvedEngine> resolve_engine(const RecordRequest& request);

// The choice that names `e`, for RecordRequest::engine.
EngineChoice engine_choice(EngineKind e);

}  // namespace uprof
