#include "uprof/engine/engine_table.h"

#include "uprof/engine/bpf/bpf_engine.h"
#include "uprof/engine/perf/perf_engine.h"

namespace uprof {
namespace {

Result<std::unique_ptr<CaptureEngine>> open_bpf(const CapturePlan& plan, const CaptureTarget& target,
                                                const EngineOptions& options) {
  return open_bpf_engine(plan, target, BpfEngineOptions{.attach = options.bpf_attach, .on_note = options.on_note,
                                                           .workload_file = options.workload_file});
}

Result<std::unique_ptr<CaptureEngine>> open_perf(const CapturePlan& plan, const CaptureTarget& target,
                                                 const EngineOptions& options) {
  return open_perf_engine(plan, target,
                          PerfEngineOptions{.backend = options.backend, .start_time = options.start_time,
                                            .on_note = options.on_note});
}

const EngineRow kEngines[] = {
    {.kind = EngineKind::Bpf,
     .name = "bpf",
     .needs = "BPF programs on uprobes, a BPF ring buffer (Linux 5.8+), bpf_get_attach_cookie (Linux 5.15+)",
     .supported = bpf_engine_supported,
     .fallback = EngineKind::Perf,
     .fallback_note = "recording with the perf engine: ",
     .ring_pages = " pages in the BPF ring",
     .open = open_bpf},
    {.kind = EngineKind::Perf,
     .name = "perf",
     .needs = "uprobes and perf events",
     .supported = nullptr,
     .fallback = std::nullopt,
     .fallback_note = "",
     .ring_pages = " pages per CPU",
     .open = open_perf},
};
static_assert(std::size(kEngines) == kEngineKinds);

}  // namespace

std::span<const EngineRow> engine_table() { return kEngines; }

const EngineRow& engine_row(EngineKind kind) {
  for (const auto& row : kEngines)
    if (row.kind == kind) return row;
  return kEngines[0];  // unreachable: every EngineKind has a row (engine_table_test)
}

Result<std::unique_ptr<CaptureEngine>> open_engine(EngineKind kind, const CapturePlan& plan,
                                                   const CaptureTarget& target, const EngineOptions& options) {
  return engine_row(kind).open(plan, target, options);
}

std::string_view to_string(EngineKind e) {
  for (const auto& row : kEngines)
    if (row.kind == e) return row.name;
  return "?";
}

std::optional<EngineKind> engine_kind_from_name(std::string_view name) {
  for (const auto& row : kEngines)
    if (row.name == name) return row.kind;
  return std::nullopt;
}

}  // namespace uprof
