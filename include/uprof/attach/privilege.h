// Whether this process may put uprobes on: both the uprobe PMU and tracefs uprobes need
// CAP_SYS_ADMIN (an unprivileged user gets EACCES at every perf_event_paranoid level).
// `record` asks first, so that a user without it hears so before anything is resolved
// against the kernel, measured or started.
#pragma once

#include "uprof/util/result.h"

namespace uprof {

// True when the effective capability set holds CAP_SYS_ADMIN (root has it).
bool can_probe();
// ok(), or "uprobes need root (CAP_SYS_ADMIN): run 'sudo uprof record ...'".
Status check_probe_privilege(const char* command);

}  // namespace uprof
