#include "uprof/record/engine_resolution.h"

#include <optional>

#include "uprof/engine/engine_table.h"

namespace uprof {
namespace {

// The choices that name an engine.
struct NamedChoice {
  EngineChoice choice;
  EngineKind kind;
};
constexpr NamedChoice kNamedChoices[] = {{EngineChoice::Bpf, EngineKind::Bpf}, {EngineChoice::Perf, EngineKind::Perf}};

std::optional<EngineKind> named_engine(EngineChoice choice) {
  for (const auto& n : kNamedChoices)
    if (n.choice == choice) return n.kind;
  return std::nullopt;  // auto
}

// The check of `row` when it has one; a row without one runs on every kernel.
Status check_row(const EngineRow& row, const EngineCheck& check) { return row.supported ? check(row.kind) : ok(); }

// "bpf, perf or auto": the table's names, then auto.
std::string choice_names() {
  std::string names;
  for (const auto& row : engine_table()) names += std::string(row.name) + ", ";
  return names.substr(0, names.size() - 2) + " or auto";
}

}  // namespace

Result<EngineChoice> parse_engine_choice(std::string_view name, bool backend_given) {
  if (name == "auto") return backend_given ? EngineChoice::Perf : EngineChoice::Auto;
  auto kind = engine_kind_from_name(name);
  if (!kind) return err("--engine is ", choice_names());
  if (backend_given && *kind != EngineKind::Perf)
    return err("--backend chooses the perf engine's probes: it does not go with --engine ", name);
  return engine_choice(*kind);
}

Result<ResolvedEngine> resolve_engine(EngineChoice choice, const EngineCheck& check) {
  if (auto named = named_engine(choice)) {
    const EngineRow& row = engine_row(*named);
    if (Status st = check_row(row, check); !st) return err("--engine ", row.name, ": ", st.error().message);
    return ResolvedEngine{.engine = row.kind, .note = {}};
  }
  // auto: the preferred row, then each fallback in turn; the note says why the last
  // one was left (one step today: bpf -> perf).
  const EngineRow* row = &engine_table().front();
  std::string note;
  for (std::size_t step = 0; step < kEngineKinds; ++step) {
    Status st = check_row(*row, check);
    if (st) return ResolvedEngine{.engine = row->kind, .note = note};
    if (!row->fallback) return err("--engine auto: ", st.error().message);
    note = std::string(row->fallback_note) + st.error().message;
    row = &engine_row(*row->fallback);
  }
  return err("--engine auto: the engine table's fallbacks go round in a circle");
}

Result<ResolvedEngine> resolve_engine(const RecordRequest& request) {
  return resolve_engine(request.engine, [](EngineKind e) { return engine_row(e).supported(); });
}

EngineChoice engine_choice(EngineKind e) {
  for (const auto& n : kNamedChoices)
    if (n.kind == e) return n.choice;
  return EngineChoice::Auto;  // unreachable: every engine has its choice
}

}  // namespace uprof
