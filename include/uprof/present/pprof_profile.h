// `uprof report --format pprof -o FILE`: the callers of each probed function as a pprof
// profile (github.com/google/pprof proto/profile.proto), gzipped, for `go tool pprof`,
// Pyroscope and Grafana. Written by hand: the profile is a handful of messages.
//
//   sample_type  calls/count, latency/nanoseconds, and with record --off-cpu
//                on_cpu/nanoseconds, off_cpu/nanoseconds; latency is the default
//   sample       one per distinct named stack (call_stacks.h): locations leaf first,
//                the probed function, its caller, ... the outermost; its values
//   location     one per function name, with one line naming that function (no
//                mapping: the names were resolved here, from the recording's files)
//
// The values of a function's samples add up to its calls and their total latency, as
// --format folded's lines do.
#pragma once

#include <string>

#include "uprof/analyse/report_model.h"
#include "uprof/util/result.h"

namespace uprof {

// The profile.proto bytes, not yet gzipped (tests read them back).
std::string pprof_proto(const ReportModel& m);
// Gzipped, as pprof reads it.
Result<std::string> render_pprof(const ReportModel& m);

}  // namespace uprof
