// Nanoseconds on a POSIX clock. The recording's event clock is CLOCK_MONOTONIC, the
// clock uprof asks the kernel to stamp samples with (attr.use_clockid).
#pragma once

#include <time.h>

#include <cstdint>

namespace uprof {

inline uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }

}  // namespace uprof
