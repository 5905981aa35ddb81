// The names of the kinds of off-CPU time (record --off-cpu), as reports print them.
#include <array>

#include "uprof/model/recording.h"

namespace uprof {

std::string_view to_string(OffCpuKind kind) {
  static constexpr std::array<std::string_view, kOffCpuKinds> kNames = {"runnable", "lock",    "io",
                                                                        "sleep",    "syscall", "other"};
  const auto i = static_cast<std::size_t>(kind);
  return i < kNames.size() ? kNames[i] : "?";
}

}  // namespace uprof
