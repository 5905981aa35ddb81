// How the perf engine puts its uprobes on (--backend), and the BPF engine (--attach): choices that `record`'s request
// carries down to attach/event_set.h, which opens the events. It lives in model/ so that
// record/ names it without including attach/.
//
//   UprobePmu  --backend pmu: the dynamic uprobe PMU; follows only the exec'd main thread
//   Tracefs    --backend tracefs (the default): a tracefs uprobe; follows threads and children
#pragma once

#include <cstdint>

namespace uprof {

enum class ProbeBackend : uint8_t { UprobePmu, Tracefs };

// How the BPF engine puts its program on the probed code (--attach; engine/bpf/bpf_attach.h).
enum class BpfAttach : uint8_t {
  Auto,    // multi-uprobe links where the kernel has them, else uprobe-PMU events
  Links,   // multi-uprobe links, with uprobe sessions where the kernel has them
  Events,  // one uprobe-PMU perf event per probe, each carrying the program
};

}  // namespace uprof
