// The perf_event syscalls on one event fd, with errors that say what to do:
//   "attach: perf_event_open(/work/build/mytest:0x1130): the uprobe PMU needs
//    CAP_SYS_ADMIN (run as root): Permission denied"
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "uprof/attach/event_attr.h"
#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

namespace uprof {

// perf_event_open(2). `probe`, when given, names the probed file and offset in the
// errors (attr.config1 is only a pointer, and a tracepoint attr has no path).
Result<UniqueFd> open_perf_event(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                                 unsigned long flags, const UprobeTarget* probe = nullptr);

// The message open_perf_event gives for `errno_value`: exposed for tests.
std::string open_error_message(int errno_value, const perf_event_attr& attr, pid_t pid, int cpu,
                               const UprobeTarget* probe);

// Sends the samples of `fd` into the ring buffer mapped on `target_fd` (same CPU).
Status redirect_output(int fd, int target_fd);
// PERF_EVENT_IOC_SET_FILTER: an ftrace filter on a tracepoint event ("common_pid != 42").
// A hit the filter rejects is neither sampled nor counted.
Status set_event_filter(int fd, const std::string& filter);

// The kernel's id of the event: the PERF_SAMPLE_IDENTIFIER value of its samples.
Result<uint64_t> event_id(int fd);

struct CounterValue {
  uint64_t count = 0;                 // hits so far, inherited threads and children included
  std::optional<uint64_t> lost{};     // samples dropped, when read_format has PERF_FORMAT_LOST
};

// read(2) of the counter; `read_format` must be the attr's.
Result<CounterValue> read_counter(int fd, uint64_t read_format = 0);

// Whether this kernel knows PERF_FORMAT_LOST (6.0+): probed once with a dummy
// software event on uprof itself.
bool kernel_supports_format_lost();

Status enable_event(int fd);
Status disable_event(int fd);

}  // namespace uprof
