// The sentences and tables about callers (record -g) and on/off-CPU time (record
// --off-cpu) that the text report and the HTML page share:
//
//   callers (by latency, top 5 of 2):
//     CALLER   CALLS     P50     P99   ON-CPU  OFF-CPU
//     sleeper  1,000  1.06ms  1.12ms   0.7%    99.3% (sleep 99.1%, runnable 0.2%)
//     spinner  1,000  1.00ms  1.05ms  99.8%     0.2% (runnable 0.2%)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprof/analyse/cpu_split.h"
#include "uprof/analyse/report_model.h"

namespace uprof {

// "99.3%" of `part` in `whole` ("-" when whole is 0).
std::string share_text(uint64_t part, uint64_t whole);
// The off-CPU kinds, largest first, each as a share of on + off: "sleep 99.1%, runnable 0.2%"
// ("" when none was off the CPU).
std::string off_cpu_kinds_text(const CpuSplit& s);
// One line for a row: "on-CPU 1.00s (99.8%), off-CPU 2.1ms (0.2%: runnable 0.2%)".
std::string cpu_split_text(const CpuSplit& s);
// The callers of `function`, most latency first, at most `top` (the rest summed in a line).
// Columns ON-CPU and OFF-CPU only when the recording has off-CPU times. "" without stacks.
std::string callers_text(const ReportModel& m, uint32_t function, std::size_t top, const std::string& indent);
// The header line about stacks: "stacks:   2,000 calls, 12 without a stack; ./app: build-id ..." ("" without).
std::string stacks_summary(const ReportModel& m);

}  // namespace uprof
