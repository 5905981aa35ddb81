// Which capture engine a recording will use, decided once, before anything is measured
// or opened, from the engine table (engine/engine_table.h): `uprof record` needs it
// early, because the probe costs it stores are the figures of that engine
// (calibrate/record_costs.h), and it hands the answer to run_session, which opens that
// engine and does not decide again.
//
//   --engine auto, the bpf row's kernel check ok     -> bpf
//   --engine auto, "the kernel has no BPF ring"      -> its fallback, perf, note "recording with the perf engine: the kernel has ..."
//   --engine bpf,  the check fails                   -> "--engine bpf: the kernel has ..." (nothing is started)
//   --engine perf (or auto with --backend)           -> perf, whose row asks the kernel nothing
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "uprof/engine/engine_kind.h"
#include "uprof/record/recording_plan.h"
#include "uprof/util/result.h"

namespace uprof {

struct ResolvedEngine {
  EngineKind engine = EngineKind::Bpf;
  std::string note;  // for the user when auto fell back to perf; "" otherwise
};

// --engine NAME and whether --backend was given, as a choice: "auto" with --backend is
// perf (the backend is the perf engine's); "bpf" with --backend, or an unknown name,
// is a usage error ("--engine is bpf, perf or auto").
Result<EngineChoice> parse_engine_choice(std::string_view name, bool backend_given);

// What the kernel answered to an engine row's check (EngineRow::supported); asked only
// for the rows the decision reaches.
using EngineCheck = std::function<Status(EngineKind)>;

// The decision alone, from the table and what `check` answers (pure).
Result<ResolvedEngine> resolve_engine(EngineChoice choice, const EngineCheck& check);
// The same for a request: asks the kernel through the table's checks.
Result<ResolvedEngine> resolve_engine(const RecordRequest& request);

// The choice that names `e`, for RecordRequest::engine.
EngineChoice engine_choice(EngineKind e);

}  // namespace uprof
