// Pure builders of perf_event_attr for a uprobe: no syscalls, testable bit by bit.
//
// A uprobe on the uprobe PMU is described entirely by the attr:
//   type    = the PMU's type number (8 here)
//   config  = retprobe bit | (ref_ctr_offset << 32)     (positions from sysfs)
//   config1 = pointer to the path string ("/work/build/mytest")
//   config2 = FILE OFFSET of the probed instruction (0x1130), not its address
// The same sample settings serve a uprobe defined through tracefs, which is a
// PERF_TYPE_TRACEPOINT event whose config is the tracepoint id.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string>

#include "uprof/attach/uprobe_pmu.h"
#include "uprof/model/capture_plan.h"
#include "uprof/util/result.h"

namespace uprof {

struct UprobeTarget {
  std::string path{};        // attr.config1 points into this string: keep it alive until opened
  uint64_t offset = 0;       // file offset
  bool is_return = false;
  uint64_t ref_ctr_offset = 0;  // SDT semaphore file offset, 0 = none
};

enum class StartMode : uint8_t {
  OnExec,    // launched workload: disabled until the child's exec (no hit from uprof's own code)
  Explicit,  // attach to a running pid: disabled until EventSet::enable()
};

struct AttrOptions {
  StartMode start = StartMode::OnExec;
  // Wake the reader once this many bytes are in the ring; 0 = the kernel's default
  // (half the ring).
  uint32_t wakeup_watermark = 0;
  // read() also returns the samples the kernel dropped for this event (ring full),
  // PERF_FORMAT_LOST, Linux 6.0+. Unlike PERF_RECORD_LOST it is exact per event
  // and includes drops that no later record reported (the ring was still full
  // when the workload ended). Turn off for older kernels.
  bool count_lost = true;
};

// The kernel copies at most this much user stack per sample (u16 size field,
// rounded down to a multiple of 8).
inline constexpr uint32_t kMaxStackBytes = 65528;

// The stack size actually asked of the kernel: rounded up to a multiple of 8
// (the kernel refuses others), capped at kMaxStackBytes. 0 stays 0.
uint32_t stack_request_size(uint32_t stack_bytes);

// The attr fields shared by every probe: sampling on each hit, sample layout (what
// `content` asks each sample to carry beyond IDENTIFIER | TID | TIME; its register
// mask is the probed file's architecture's: this builder knows none),
// clock, inheritance and the start mode. type/config/config1/config2 are left 0.
perf_event_attr build_sample_attr(const ProbeReads& content, const AttrOptions& options = {});

// An event on the uprobe PMU. `target.path` must outlive the perf_event_open call.
perf_event_attr build_uprobe_attr(const UprobePmu& pmu, const UprobeTarget& target,
                                  const ProbeReads& content, const AttrOptions& options = {});

// An event on the uprobe PMU that only carries a BPF program (the BPF engine): it
// samples nothing and is not inherited; opened with pid -1 it fires for every
// process that runs the probed instruction, and the program filters. Disabled:
// attaching the program enables it.
perf_event_attr build_bpf_uprobe_attr(const UprobePmu& pmu, const UprobeTarget& target);

// A uprobe already defined in tracefs (its events/<group>/<name>/id).
perf_event_attr build_tracepoint_attr(uint64_t tracepoint_id, const ProbeReads& content,
                                      const AttrOptions& options = {});

// What build_uprobe_attr cannot express: an empty path, a ref_ctr_offset that
// does not fit its field (or a kernel without the field).
Status check_uprobe_target(const UprobePmu& pmu, const UprobeTarget& target);

}  // namespace uprof
