#include "uprof/engine/engine_kind.h"

namespace uprof {
namespace {

struct EngineName {
  EngineKind kind;
  std::string_view name;
};
constexpr EngineName kNames[] = {{EngineKind::Bpf, "bpf"}, {EngineKind::Perf, "perf"}};

}  // namespace

std::string_view to_string(EngineKind e) {
  for (const auto& n : kNames)
    if (n.kind == e) return n.name;
  return "?";
}

std::optional<EngineKind> engine_kind_from_name(std::string_view name) {
  for (const auto& n : kNames)
    if (n.name == name) return n.kind;
  return std::nullopt;
}

}  // namespace uprof
