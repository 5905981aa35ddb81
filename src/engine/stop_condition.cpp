#include "uprof/engine/stop_condition.h"

namespace uprof {
namespace {

struct StopReasonName {
  StopReason reason;
  std::string_view name;
};
constexpr StopReasonName kStopReasonNames[] = {
    {StopReason::WorkloadExited, "workload exited"},
    {StopReason::Flag, "stop requested"},
    {StopReason::Deadline, "deadline reached"},
};

}  // namespace

std::string_view to_string(StopReason reason) {
  for (const auto& n : kStopReasonNames)
    if (n.reason == reason) return n.name;
  return "?";
}

}  // namespace uprof
