// A uprobe defined through tracefs (uprobe_events), opened as a tracepoint.
//
// Why this exists beside the uprobe PMU: an *inherited* uprobe-PMU event does not
// follow the workload's threads and forked children. When a traced task clones,
// the kernel re-creates each inherited event with pmu->event_init, and
// perf_uprobe_init() copies attr.config1 (the path pointer) with strndup_user()
// from the memory of the task that is cloning, i.e. the workload, where uprof's
// pointer means nothing; the copy fails and the child runs unprobed, silently.
// Measured on 6.18: 4 threads + a forked child each calling add() 1000 times, plus
// 1000 calls in main: the PMU counts 1000, a tracefs uprobe counts 6000.
//
// A tracefs uprobe is created once (by path and offset), and an inherited
// tracepoint event needs nothing from user memory, so inheritance works. The
// price: the probe is visible in tracefs while uprof runs, and a crashed uprof
// leaves it behind (group "uprof_<pid>"; remove it with "-:uprof_<pid>/<name>"). The
// next `uprof record` removes such leftovers (stale_uprobes.h).
//
// The definition written, for add() at file offset 0x1130 of ./mytest:
//   p:uprof_4242/e0 /work/build/mytest:0x1130
//   r:uprof_4242/e1 /work/build/mytest:0x1130          (return probe)
//   p:uprof_4242/e2 /usr/bin/python3:0x2f1a0(0x4c5d8)  (with an SDT semaphore)
//   p:uprof_4242/e3 /work/build/strings:0x1190 s0=+0(%di):string   (fetch arguments)
#pragma once

#include <cstdint>
#include <string>

#include "uprof/util/result.h"

namespace uprof {

struct TracefsUprobeSpec {
  std::string group{};  // "uprof_4242"
  std::string name{};   // "e0"
  std::string path{};
  uint64_t offset = 0;
  bool is_return = false;
  uint64_t ref_ctr_offset = 0;
  // Fetch arguments after the location, as uprobe_events takes them:
  // "s0=+0(%di):string u1=+8(%si):u32" ("" for none).
  std::string fetch_args{};
};

// The uprobe_events line that defines `spec` (pure). Paths with white space are
// refused: tracefs splits its arguments on it.
Result<std::string> format_uprobe_definition(const TracefsUprobeSpec& spec);

// The tracefs mount holding uprobe_events: /sys/kernel/tracing, else
// /sys/kernel/debug/tracing. When neither is mounted, mounts tracefs on
// /sys/kernel/tracing (as perf does; it needs root like the probes themselves).
// Errors say what is missing: root, CONFIG_UPROBE_EVENTS, or the mount.
Result<std::string> find_tracefs();

// Owns one tracefs uprobe: defined on create(), removed on destruction. Close the
// perf events that use it first (the kernel refuses to remove a probe in use).
class TracefsUprobe {
 public:
  static Result<TracefsUprobe> create(const std::string& tracefs_dir, TracefsUprobeSpec spec);

  TracefsUprobe(TracefsUprobe&& o) noexcept;
  TracefsUprobe& operator=(TracefsUprobe&& o) noexcept;
  TracefsUprobe(const TracefsUprobe&) = delete;
  TracefsUprobe& operator=(const TracefsUprobe&) = delete;
  ~TracefsUprobe();

  uint64_t tracepoint_id() const { return id_; }
  // Its format file: the layout of its records (attach/trace_format.h).
  std::string format_path() const { return tracefs_dir_ + "/events/" + spec_.group + "/" + spec_.name + "/format"; }
  const TracefsUprobeSpec& spec() const { return spec_; }
  // Removes the probe now; the destructor then does nothing.
  Status remove();

 private:
  TracefsUprobe() = default;
  std::string tracefs_dir_;
  TracefsUprobeSpec spec_;
  uint64_t id_ = 0;
  bool defined_ = false;
};

// A group name unique to this process, "uprof_<pid>".
std::string tracefs_group_for_this_process();
// A fresh event name within it, "e0", "e1", ... (process-wide counter).
std::string next_tracefs_event_name();

}  // namespace uprof
