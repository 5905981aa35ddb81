#include "uprof/record/engine_resolution.h"

#include "uprof/engine/bpf/bpf_engine.h"

namespace uprof {

Result<ResolvedEngine> resolve_engine(EngineChoice choice, const Status& bpf_supported) {
  if (choice == EngineChoice::Perf) return ResolvedEngine{.engine = EngineKind::Perf, .note = {}};
  if (bpf_supported) return ResolvedEngine{.engine = EngineKind::Bpf, .note = {}};
  if (choice == EngineChoice::Bpf) return err("--engine bpf: ", bpf_supported.error().message);
  return ResolvedEngine{.engine = EngineKind::Perf,
                        .note = "recording with the perf engine: " + bpf_supported.error().message};
}

Result<ResolvedEngine> resolve_engine(const RecordRequest& request) {
  if (request.engine == EngineChoice::Perf) return resolve_engine(request.engine, ok());
  return resolve_engine(request.engine, bpf_engine_supported());
}

EngineChoice engine_choice(EngineKind e) { return e == EngineKind::Bpf ? EngineChoice::Bpf : EngineChoice::Perf; }

}  // namespace uprof
