// `uprof script`: every event of a recording, in time order, one per line, like
// `perf script`; or as JSON lines; or as a Chrome trace-event timeline that
// Perfetto UI and chrome://tracing open (one complete "X" event per paired call
// on its thread's track, unmatched entries and lost samples as instant events).
//
//   0.000012345  workload 4242/4242  add(%di=1, %si=10)
//   0.000013101  workload 4242/4242  add%return $retval=11  [756ns]
#pragma once

#include <ostream>
#include <string>

#include "uprof/analyse/event_filter.h"
#include "uprof/util/result.h"

namespace uprof {

enum class ScriptFormat { Text, JsonLines, Chrome };

struct ScriptOptions {
  ScriptFormat format = ScriptFormat::Text;
  AggregateFilter filter;  // pid, tid, comm, function, since/until: the same as report's
};

// Streams the file at `path` to `out`. Problems with the file are written to
// `problems` (one line each) and do not stop the output of what is whole.
Status write_script(const std::string& path, const ScriptOptions& opts, std::ostream& out, std::ostream& problems);

}  // namespace uprof
