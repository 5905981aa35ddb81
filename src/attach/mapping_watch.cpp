#include "uprof/attach/mapping_watch.h"

#include <linux/perf_event.h>

#include "uprof/attach/perf_event.h"
#include "uprof/drain/record_decoder.h"

namespace uprof {
namespace {

// Every record carries TID, TIME and IDENTIFIER in its sample_id trailer, as the probes'
// events do (attach/event_attr.h), so that decode_mmap2 reads it the same way.
constexpr uint64_t kTrailer = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

perf_event_attr watch_attr(const MappingWatchOptions& o) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_DUMMY;  // counts nothing, samples nothing: side-band records only
  a.sample_type = kTrailer;
  a.sample_id_all = 1;
  a.mmap = 1;
  a.mmap2 = 1;
  a.mmap_data = 1;  // every file mapping: an unwinder places a file by its first (read-only) segment
  a.disabled = 1;
  a.enable_on_exec = o.on_exec ? 1 : 0;
  a.inherit = o.pid > 0 ? 1 : 0;  // the workload's children too
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  return a;
}

}  // namespace

Result<MappingWatch> MappingWatch::open(const MappingWatchOptions& options) {
  UPROF_ASSIGN(std::vector<int> cpus, read_online_cpus(options.online_cpus_path));
  const perf_event_attr attr = watch_attr(options);
  MappingWatch w;
  for (int cpu : cpus) {
    UPROF_ASSIGN(UniqueFd fd, open_perf_event(attr, options.pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    UPROF_ASSIGN(RingBuffer ring, RingBuffer::map(fd.get(), options.ring_pages, cpu));
    w.rings_.push_back(std::move(ring));
    w.fds_.push_back(std::move(fd));
  }
  return w;
}

Status MappingWatch::enable() {
  for (const UniqueFd& fd : fds_) UPROF_TRY(enable_event(fd.get()));
  return ok();
}

Status MappingWatch::drain(const MappingFn& fn) {
  const SampleFormat format{.sample_type = kTrailer, .sample_id_all = true};
  for (RingBuffer& ring : rings_) {
    auto drained = ring.drain([&](std::span<const std::byte> rec) -> Status {
      UPROF_ASSIGN(perf_event_header h, decode_header(rec));
      if (h.type != PERF_RECORD_MMAP2) return ok();  // LOST: /proc/PID/maps is still read first
      UPROF_ASSIGN(MmapRecord m, decode_mmap2(rec, format));
      if (auto line = proc_maps_line(m)) fn(m.pid, *line);
      return ok();
    });
    if (!drained) return drained.error();
  }
  return ok();
}

}  // namespace uprof
