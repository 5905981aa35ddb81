// The kernel's CPU list syntax, as in /sys/devices/system/cpu/online:
//   "0-1"        -> {0, 1}
//   "0,2-3,8\n"  -> {0, 2, 3, 8}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "uprof/util/result.h"

namespace uprof {

// Parses a CPU list (pure); the result is sorted and without duplicates.
Result<std::vector<int>> parse_cpu_list(std::string_view text);

inline constexpr const char* kOnlineCpusPath = "/sys/devices/system/cpu/online";

// The online CPUs: one ring buffer and one event per probe each.
Result<std::vector<int>> read_online_cpus(const std::string& path = kOnlineCpusPath);

}  // namespace uprof
