// Tracefs probes that a uprof which is gone left behind.
//
// A uprof that exits normally removes its group "uprof_<pid>" from tracefs (the
// TracefsUprobe destructors); one that is SIGKILLed cannot. Its lines stay in
// uprobe_events:
//   p:uprof_4242/e0 /work/build/mytest:0x0000000000001130
//   r:uprof_4242/e1 /work/build/mytest:0x0000000000001130
// and pid 4242 no longer exists. The next `uprof record` removes such groups
// before adding its own. Only groups named uprof_<pid> whose pid is dead are
// touched: another uprof (or a test using EventSet directly) that is still
// running owns its group. A probe still in use (EBUSY: some perf event is open on
// it) is left in place and reported.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/util/result.h"

namespace uprof {

struct TracefsEventName {
  std::string group{};  // "uprof_4242"
  std::string name{};   // "e0"
  bool operator==(const TracefsEventName&) const = default;
};

// The events defined in an uprobe_events text (pure): "p:uprof_4242/e0 /bin/x:0x10"
// -> {uprof_4242, e0}. Lines that do not look like a definition are skipped.
std::vector<TracefsEventName> parse_uprobe_event_names(std::string_view text);

// The pid in a uprof group name (pure): "uprof_4242" -> 4242; other groups -> nullopt.
std::optional<pid_t> uprof_group_pid(std::string_view group);

// Whether a process with this pid exists (kill(pid, 0): EPERM counts as alive).
bool process_exists(pid_t pid);

struct StaleCleanup {
  std::vector<std::string> removed_groups{};     // every event of these was removed
  std::size_t removed_events = 0;
  std::vector<std::string> busy_events{};        // "uprof_4242/e0": in use, left in place
};

// Removes every event of every group uprof_<pid> in `tracefs_dir`/uprobe_events
// whose pid is not alive. `alive` is process_exists unless a test says otherwise.
Result<StaleCleanup> remove_stale_uprof_probes(const std::string& tracefs_dir,
                                               const std::function<bool(pid_t)>& alive = process_exists);

// One line per thing the user should know (pure): "removed 2 probes left by uprof
// 4242, which is gone", and for each busy event how to remove it later.
std::vector<std::string> describe_cleanup(const StaleCleanup& c, const std::string& tracefs_dir);

}  // namespace uprof
