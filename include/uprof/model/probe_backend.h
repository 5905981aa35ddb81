// How the perf engine puts its uprobes on (--backend): a choice that `record`'s request
// carries down to attach/event_set.h, which opens the events. It lives in model/ so that
// record/ names it without including attach/.
//
//   UprobePmu  --backend pmu: the dynamic uprobe PMU; follows only the exec'd main thread
//   Tracefs    --backend tracefs (the default): a tracefs uprobe; follows threads and children
#pragma once

#include <cstdint>

namespace uprof {

enum class ProbeBackend : uint8_t { UprobePmu, Tracefs };

}  // namespace uprof
