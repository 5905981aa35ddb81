// Every perf event of one recording: one event per probe per online CPU, all
// following one process (pid = workload, cpu = N, inherit = 1), and one ring
// buffer per CPU that every event of that CPU writes into.
//
//   cpu 0:  [add entry] --mmap--> ring 0 <--SET_OUTPUT-- [add return]
//   cpu 1:  [add entry] --mmap--> ring 1 <--SET_OUTPUT-- [add return]
//
// Why per CPU: an inherited per-task event (cpu = -1) cannot be mmapped (EINVAL),
// and without inherit the workload's threads and children go unseen. Samples of
// one thread land in whichever CPU's ring it ran on: merge the rings by time.
//
// Which probe a sample belongs to: its PERF_SAMPLE_IDENTIFIER is the kernel id of
// the event (the parent event's, for inherited ones), mapped here to the
// caller's probe (ProbeCapture::probe).
//
// Two backends (see tracefs_uprobe.h for the measurements):
//   UprobePmu  the dynamic uprobe PMU; nothing left in tracefs. Follows only the
//              workload's exec'd main thread: the kernel does not inherit these
//              events into threads or forked children.
//   Tracefs    a uprobe defined in tracefs, opened as a tracepoint; follows
//              threads and forked children.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "uprof/attach/event_attr.h"
#include "uprof/attach/tracefs_uprobe.h"
#include "uprof/attach/uprobe_pmu.h"
#include "uprof/model/capture_plan.h"
#include "uprof/model/probe_backend.h"
#include "uprof/attach/ring_buffer.h"
#include "uprof/attach/trace_format.h"
#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

namespace uprof {

struct EventSetOptions {
  ProbeBackend backend = ProbeBackend::UprobePmu;
  StartMode start = StartMode::OnExec;
  std::size_t ring_data_pages = 256;  // per CPU, a power of two (1 MiB with 4 KiB pages)
  uint32_t wakeup_watermark = 0;      // bytes; 0 = a quarter of the ring
  std::string pmu_dir = kUprobePmuDir;
  std::string online_cpus_path = "/sys/devices/system/cpu/online";
  std::string tracefs_dir{};  // "" = find it
  // Also ask for COMM, FORK and EXIT records: thread names, and which threads
  // ended with calls open. They come from a side-band event of their own per CPU
  // (a software dummy, as perf record does) writing into the same ring: the
  // kernel counts a record it could not write as a lost sample of the event that
  // wrote it, so on a probe's event they would make "recorded + lost" exceed
  // that probe's hits (measured: +6 with a 1-page ring and 8 threads exiting).
  bool track_tasks = false;
  // With track_tasks: the side band also writes the processes' file mappings
  // (PERF_RECORD_MMAP2), which record -g unwinds with when a process is gone.
  bool track_mappings = false;
  // Per request (in order; empty = none): tracefs fetch arguments to define the probe
  // with, "s0=+0(%di):string u2=+32(%di):u64" (engine/perf/perf_fetch_args.h). Their
  // values come in each sample's raw data, laid out as raw_fields() says. Tracefs only.
  std::vector<std::string> fetch_args{};
};

// What read() on a probe's events says, summed over its CPUs.
struct KernelCounts {
  uint32_t probe = 0;
  uint64_t hits = 0;  // the kernel's count: every hit, sampled or dropped
  // Samples the kernel dropped because the ring was full (PERF_FORMAT_LOST);
  // nullopt on kernels before 6.0. hits == samples drained + lost, per probe.
  std::optional<uint64_t> lost{};
};

class EventSet {
 public:
  // Opens every event (disabled), maps the rings, redirects, and collects ids.
  // With StartMode::OnExec the events start at `pid`'s next exec.
  static Result<EventSet> open(std::span<const ProbeCapture> probes, pid_t pid,
                               const EventSetOptions& options = {});

  EventSet(EventSet&&) noexcept = default;
  EventSet& operator=(EventSet&&) noexcept = default;
  EventSet(const EventSet&) = delete;
  EventSet& operator=(const EventSet&) = delete;
  ~EventSet() = default;

  Status enable();
  Status disable();

  // The kernel's hit and drop counts per probe (summed over CPUs and
  // requests, and over inherited threads and children), in order of first
  // appearance.
  Result<std::vector<KernelCounts>> counts() const;
  // The samples the probes' events on ring `ring`'s CPU dropped so far (PERF_FORMAT_LOST);
  // nullopt on kernels before 6.0.
  Result<std::optional<uint64_t>> dropped_on_ring(std::size_t ring) const;

  // The probe behind a sample's (or LOST record's) id, nullptr if unknown or
  // the side-band event's.
  const ProbeCapture* find_probe(uint64_t id) const;
  // The attr that request was opened with (config1 cleared: it pointed at a
  // string of the caller), or the side-band event's. Decoders take sample_type
  // and sample_regs_user from it.
  const perf_event_attr* find_attr(uint64_t id) const;
  // Whether `id` is a side-band event's (track_tasks): its records are COMM,
  // FORK, EXIT, and LOST for those.
  bool is_side_band(uint64_t id) const { return side_band_ids_.count(id) > 0; }

  // Every event's id with its probe (nullptr for the side band's) and attr: what a
  // record converter needs to know of each id (engine/perf/perf_records.h).
  struct Identity {
    uint64_t id = 0;
    const ProbeCapture* probe = nullptr;
    const perf_event_attr* attr = nullptr;
  };
  std::vector<Identity> identities() const;

  // A request's tracefs record fields (its format file), when it has fetch arguments.
  const std::vector<TraceField>& raw_fields(std::size_t request) const { return raw_fields_[request]; }

  std::span<RingBuffer> rings() { return rings_; }
  const std::vector<int>& cpus() const { return cpus_; }
  std::size_t event_count() const { return events_.size(); }
  pid_t pid() const { return pid_; }

 private:
  EventSet() = default;
  Status open_all(const EventSetOptions& options);
  // One attr per request through the uprobe PMU (config1, the path pointer, is set at open).
  Status uprobe_pmu_attrs(const EventSetOptions& options, const AttrOptions& attr_options);
  // One tracefs uprobe per request, created now, and its tracepoint attr.
  Status tracefs_attrs(const EventSetOptions& options, const AttrOptions& attr_options);
  // Every request's event on `cpu`, sharing the CPU's one ring, and the side band's.
  Status open_on_cpu(int cpu, const EventSetOptions& options, bool through_pmu);

  struct Event {
    UniqueFd fd;
    int cpu = -1;
    std::size_t request = 0;
    uint64_t id = 0;
  };

  // Destroyed in reverse order: rings (unmapped) first, then the event fds, and
  // only then the tracefs probes, which the kernel will not remove while in use.
  std::vector<TracefsUprobe> tracefs_;
  std::vector<Event> events_;
  std::vector<RingBuffer> rings_;
  std::vector<ProbeCapture> requests_;
  std::vector<perf_event_attr> attrs_;  // one per request
  std::vector<std::vector<TraceField>> raw_fields_;  // one per request
  std::unordered_map<uint64_t, std::size_t> id_to_request_;
  std::vector<UniqueFd> side_band_;     // one per CPU with track_tasks
  perf_event_attr side_band_attr_{};
  std::unordered_set<uint64_t> side_band_ids_;
  std::vector<int> cpus_;
  pid_t pid_ = -1;
};

// Raises RLIMIT_NOFILE's soft limit (up to the hard limit) so that `needed` more
// descriptors fit; an error says how to raise the hard limit when even that is
// too low.
Status ensure_fd_headroom(std::size_t needed);

}  // namespace uprof
