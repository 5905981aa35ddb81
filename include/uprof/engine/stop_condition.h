// When a capture ends, and why it did: part of the engine seam (capture_engine.h).
// `record` fills a StopCondition from the workload, Ctrl-C and --duration; each engine
// hands it to its loop (the perf engine's drain/drain_loop.h, the BPF engine's own loop
// on drain's StopWaiter) and says which of the three held first.
//
//   uprof record -e add --duration 5 ./mytest
//     -> StopCondition{.workload = 4242, .flag = &g_stop, .deadline = now + 5 s}
//     -> CaptureResult::stop_reason = Deadline ("deadline reached") if mytest runs longer
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace uprof {

struct StopCondition {
  // Stop when this process has exited (watched with a pidfd; it is not reaped:
  // its exit status stays for the caller's waitpid). -1: no workload.
  pid_t workload = -1;
  // Set: once the workload has exited, the capture goes on while this says a process
  // it started is still running (a daemon's child), polled at every wake of the loop.
  std::function<bool()> descendants_running{};
  // Stop when set, e.g. by a SIGINT handler (a lock-free atomic is signal-safe).
  const std::atomic<bool>* flag = nullptr;
  std::optional<std::chrono::steady_clock::time_point> deadline{};
};

enum class StopReason : uint8_t { WorkloadExited, Flag, Deadline };
// "workload exited", "stop requested", "deadline reached"
std::string_view to_string(StopReason reason);

}  // namespace uprof
