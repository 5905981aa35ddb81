#include "uprof/attach/event_attr.h"

#include <ctime>

namespace uprof {

uint32_t stack_request_size(uint32_t stack_bytes) {
  if (stack_bytes == 0) return 0;
  uint64_t rounded = (uint64_t{stack_bytes} + 7) & ~uint64_t{7};
  return rounded > kMaxStackBytes ? kMaxStackBytes : static_cast<uint32_t>(rounded);
}

perf_event_attr build_sample_attr(const ProbeReads& content, const AttrOptions& options) {
  perf_event_attr a{};
  a.size = sizeof(a);
  // One sample per hit: a uprobe fires once per call, and period-1 software events
  // are never throttled, so every hit is either a sample or counted in a LOST record.
  a.sample_period = 1;
  // IDENTIFIER first: every sample starts with the id, so a reader can tell which
  // probe (and hence which layout) a record has before parsing the rest of it.
  a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  if (content.regs_mask != 0) {
    a.sample_type |= PERF_SAMPLE_REGS_USER;
    a.sample_regs_user = content.regs_mask;
  }
  if (uint32_t stack = stack_request_size(content.stack_bytes); stack != 0) {
    a.sample_type |= PERF_SAMPLE_STACK_USER;
    a.sample_stack_user = stack;
  }
  // LOST/THROTTLE records then carry the id and time too.
  a.sample_id_all = 1;
  // Samples from different CPUs' buffers are merged by time: one clock for all,
  // and the same one uprof uses for its own timestamps.
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  // Follow threads and forked children (per-CPU events; see event_set.h).
  a.inherit = 1;
  a.disabled = 1;
  a.enable_on_exec = options.start == StartMode::OnExec ? 1 : 0;
  if (options.count_lost) a.read_format = PERF_FORMAT_LOST;
  if (options.wakeup_watermark != 0) {
    a.watermark = 1;
    a.wakeup_watermark = options.wakeup_watermark;
  }
  return a;
}

perf_event_attr build_uprobe_attr(const UprobePmu& pmu, const UprobeTarget& target,
                                  const ProbeReads& content, const AttrOptions& options) {
  perf_event_attr a = build_sample_attr(content, options);
  a.type = pmu.type;
  uint64_t config = 0;
  if (target.is_return) config |= pmu.retprobe.place(1);
  if (target.ref_ctr_offset != 0 && pmu.ref_ctr_offset)
    config |= pmu.ref_ctr_offset->place(target.ref_ctr_offset);
  a.config = config;
  a.config1 = reinterpret_cast<uint64_t>(target.path.c_str());  // attr.uprobe_path
  a.config2 = target.offset;                                     // attr.probe_offset
  return a;
}

perf_event_attr build_bpf_uprobe_attr(const UprobePmu& pmu, const UprobeTarget& target) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.disabled = 1;
  a.type = pmu.type;
  uint64_t config = 0;
  if (target.is_return) config |= pmu.retprobe.place(1);
  if (target.ref_ctr_offset != 0 && pmu.ref_ctr_offset) config |= pmu.ref_ctr_offset->place(target.ref_ctr_offset);
  a.config = config;
  a.config1 = reinterpret_cast<uint64_t>(target.path.c_str());
  a.config2 = target.offset;
  return a;
}

perf_event_attr build_tracepoint_attr(uint64_t tracepoint_id, const ProbeReads& content,
                                      const AttrOptions& options) {
  perf_event_attr a = build_sample_attr(content, options);
  a.type = PERF_TYPE_TRACEPOINT;
  a.config = tracepoint_id;
  return a;
}

Status check_uprobe_target(const UprobePmu& pmu, const UprobeTarget& target) {
  if (target.path.empty()) return err("attach: uprobe with an empty path");
  if (target.ref_ctr_offset != 0) {
    if (!pmu.ref_ctr_offset)
      return err("attach: ", target.path, ": a reference counter (SDT semaphore) at 0x", std::hex,
                 target.ref_ctr_offset, " needs Linux 4.20 or later (no format/ref_ctr_offset)");
    if (!pmu.ref_ctr_offset->fits(target.ref_ctr_offset))
      return err("attach: ", target.path, ": reference counter offset 0x", std::hex,
                 target.ref_ctr_offset, " does not fit the PMU's ", std::dec,
                 pmu.ref_ctr_offset->width(), "-bit field");
  }
  return ok();
}

}  // namespace uprof
