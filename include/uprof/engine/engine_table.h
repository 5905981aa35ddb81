// The capture engines as one table: everything `uprof record` needs to choose an engine
// and to open it, so that the choice is made in one place (record/engine_resolution.h,
// called once by the command) and the session only opens the engine it is handed.
//
//   name  what the kernel must have                     asked by                fallback  note when auto falls back
//   bpf   BPF programs on uprobes, a BPF ring buffer    bpf_engine_supported()  perf      "recording with the perf engine: <why>"
//         (5.8+), bpf_get_attach_cookie (5.15+)
//   perf  uprobes and perf events                       (not asked)             -         -
//
// The rows are in order of preference: --engine auto takes the first whose kernel check
// passes, following each row's fallback. The names are what --engine, the data file's
// META and the probe-cost cache spell (engine_kind.h reads them from here).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "uprof/engine/capture_engine.h"
#include "uprof/engine/engine_kind.h"
#include "uprof/model/capture_plan.h"
#include "uprof/model/probe_backend.h"
#include "uprof/util/result.h"

namespace uprof {

// What opening an engine may use; each engine takes the fields that are its own.
struct EngineOptions {
  ProbeBackend backend = ProbeBackend::Tracefs;  // perf: how its uprobes go on (--backend)
  BpfAttach bpf_attach = BpfAttach::Auto;        // bpf: how its program goes on (--attach)
  uint64_t start_time = 0;                       // perf: the time of records that carry none
  std::string workload_file{};                   // bpf: the launched program ("" when attaching)
  // Lines for the user before the run (stale tracefs probes removed, a library that
  // other processes map too).
  std::function<void(const std::string&)> on_note{};
};

using EngineOpenFn = Result<std::unique_ptr<CaptureEngine>> (*)(const CapturePlan& plan, const CaptureTarget& target,
                                                                const EngineOptions& options);

struct EngineRow {
  EngineKind kind;
  std::string_view name;         // "bpf"
  std::string_view needs;        // what the kernel must have, for people (the check's Error says which is missing)
  Status (*supported)();         // asks the kernel for `needs`; nullptr: nothing to ask
  std::optional<EngineKind> fallback;  // what --engine auto records with when `supported` says no
  std::string_view fallback_note;      // the note then, before the check's reason
  std::string_view ring_pages;         // what -m counts, after the number: " pages per CPU"
  EngineOpenFn open;
};

// Every engine, the preferred first.
std::span<const EngineRow> engine_table();
const EngineRow& engine_row(EngineKind kind);

// Opens the engine `kind` on `plan` (which must outlive it); nothing fires before start().
Result<std::unique_ptr<CaptureEngine>> open_engine(EngineKind kind, const CapturePlan& plan,
                                                   const CaptureTarget& target, const EngineOptions& options);

}  // namespace uprof
