// The two capture engines by name, for what has to tell them apart without opening
// one: the probe-cost cache keeps figures per engine ("class bpf emulated ..."), and
// `uprof record` resolves --engine auto to one of them before it looks the figures up.
// The data file's META names the engine as the engine itself does (CaptureEngine::name),
// which is the same word. The names come from the engine table (engine_table.h), which
// says everything else about each engine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace uprof {

enum class EngineKind : uint8_t { Bpf = 0, Perf = 1 };
inline constexpr std::size_t kEngineKinds = 2;
inline constexpr std::array<EngineKind, kEngineKinds> kEngineKindList{EngineKind::Bpf, EngineKind::Perf};

// "bpf", "perf"
std::string_view to_string(EngineKind e);
std::optional<EngineKind> engine_kind_from_name(std::string_view name);

}  // namespace uprof
