// A process's environment as /proc/PID/environ holds it: the strings it was started
// with, each NUL-terminated ("HOME=/root\0GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2\0").
// What the process setenv()s later is not there; what its loader read at start-up is.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "uprof/util/result.h"

namespace uprof {

// The value of `name` in `block`: nullopt when unset, "" when set empty. The first
// occurrence wins, as getenv() finds it.
std::optional<std::string> environ_value(std::string_view block, std::string_view name);

// /proc/PID/environ of process `pid`; an error naming the process when it cannot be read.
Result<std::string> read_environ(int pid);

}  // namespace uprof
