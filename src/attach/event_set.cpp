#include "uprof/attach/event_set.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "uprof/attach/cpu_list.h"
#include "uprof/attach/perf_event.h"

namespace uprof {
namespace {

// Descriptors uprof itself may still open while recording (data file, ELF files,
// /proc files): kept free beyond the events.
constexpr std::size_t kFdSlack = 64;

std::size_t open_fd_count() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

UprobeTarget target_of(const ProbeCapture& r) {
  return UprobeTarget{.path = r.path, .offset = r.file_offset, .is_return = r.is_return,
                      .ref_ctr_offset = r.ref_ctr_offset};
}

}  // namespace

Status ensure_fd_headroom(std::size_t needed) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return err("attach: getrlimit(RLIMIT_NOFILE): ", std::strerror(errno));
  std::size_t want = open_fd_count() + needed + kFdSlack;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= want) return ok();
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
    return err("attach: ", needed, " perf events (one per probe per CPU, and one per CPU for task records) need about ", want,
               " open files, but RLIMIT_NOFILE's hard limit is ", rl.rlim_max, ": raise it with ulimit -n ",
               want, " (as root; ulimit -Hn ", want, " raises the hard limit alone; LimitNOFILE= for a "
               "service) or probe fewer functions");
  rlimit raised = rl;
  raised.rlim_cur = rl.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &raised) != 0)
    return err("attach: raising RLIMIT_NOFILE from ", rl.rlim_cur, " to ", rl.rlim_max, ": ",
               std::strerror(errno));
  return ok();
}

Result<EventSet> EventSet::open(std::span<const ProbeCapture> probes, pid_t pid,
                                const EventSetOptions& options) {
  if (probes.empty()) return err("attach: no probes to open");
  EventSet set;
  set.pid_ = pid;
  set.requests_.assign(probes.begin(), probes.end());
  UPROF_ASSIGN(set.cpus_, read_online_cpus(options.online_cpus_path));
  UPROF_TRY(set.open_all(options));
  return set;
}

Status EventSet::open_all(const EventSetOptions& options) {
  const std::size_t ring_bytes = options.ring_data_pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  AttrOptions attr_options{
      .start = options.start,
      .wakeup_watermark = options.wakeup_watermark != 0 ? options.wakeup_watermark
                                                        : static_cast<uint32_t>(ring_bytes / 4),
      .count_lost = kernel_supports_format_lost()};

  // One attr per request; config1 (the path pointer) is filled in just before
  // each open, from requests_, which does not move while this runs.
  raw_fields_.assign(requests_.size(), {});
  const bool any_fetch = std::any_of(options.fetch_args.begin(), options.fetch_args.end(),
                                     [](const std::string& a) { return !a.empty(); });
  if (any_fetch && options.backend != ProbeBackend::Tracefs)
    return err("attach: values read from memory (strings, +OFF(...)) need tracefs probes: the uprobe PMU has no "
               "fetch arguments (use --backend tracefs or --engine bpf)");
  const bool through_pmu = options.backend == ProbeBackend::UprobePmu;
  if (through_pmu) {
    UPROF_TRY(uprobe_pmu_attrs(options, attr_options));
  } else {
    UPROF_TRY(tracefs_attrs(options, attr_options));
  }

  // The side band: a software dummy (it never samples) that only writes task
  // records, with the probes' sample_id layout so that their decoders read it.
  if (options.track_tasks) {
    side_band_attr_ = build_sample_attr(ProbeReads{}, attr_options);
    side_band_attr_.type = PERF_TYPE_SOFTWARE;
    side_band_attr_.config = PERF_COUNT_SW_DUMMY;
    side_band_attr_.comm = 1;
    side_band_attr_.comm_exec = 1;
    side_band_attr_.task = 1;
    side_band_attr_.mmap = options.track_mappings;
    side_band_attr_.mmap2 = options.track_mappings;
    // Every file mapping, not only the executable ones: an unwinder places a file by its
    // first (read-only) segment, where its ELF header is mapped.
    side_band_attr_.mmap_data = options.track_mappings;
    if (pid_ < 0) side_band_attr_.inherit = 0;
  }

  UPROF_TRY(ensure_fd_headroom((requests_.size() + (options.track_tasks ? 1 : 0)) * cpus_.size()));
  for (int cpu : cpus_) UPROF_TRY(open_on_cpu(cpu, options, through_pmu));
  return ok();
}

Status EventSet::uprobe_pmu_attrs(const EventSetOptions& options, const AttrOptions& attr_options) {
  UPROF_ASSIGN(UprobePmu p, read_uprobe_pmu(options.pmu_dir));
  for (const ProbeCapture& r : requests_) {
    UprobeTarget t = target_of(r);
    UPROF_TRY(check_uprobe_target(p, t));
    perf_event_attr a = build_uprobe_attr(p, t, r.reads, attr_options);
    a.config1 = 0;
    attrs_.push_back(a);
  }
  return ok();
}

Status EventSet::tracefs_attrs(const EventSetOptions& options, const AttrOptions& attr_options) {
  std::string dir = options.tracefs_dir;
  if (dir.empty()) { UPROF_ASSIGN(dir, find_tracefs()); }
  std::string group = tracefs_group_for_this_process();
  for (std::size_t i = 0; i < requests_.size(); i++) {
    const ProbeCapture& r = requests_[i];
    const std::string args = i < options.fetch_args.size() ? options.fetch_args[i] : std::string();
    UPROF_ASSIGN(TracefsUprobe probe,
                 TracefsUprobe::create(dir, TracefsUprobeSpec{.group = group,
                                                               .name = next_tracefs_event_name(),
                                                               .path = r.path,
                                                               .offset = r.file_offset,
                                                               .is_return = r.is_return,
                                                               .ref_ctr_offset = r.ref_ctr_offset,
                                                               .fetch_args = args}));
    perf_event_attr a = build_tracepoint_attr(probe.tracepoint_id(), r.reads, attr_options);
    if (!args.empty()) {
      a.sample_type |= PERF_SAMPLE_RAW;
      UPROF_ASSIGN(raw_fields_[i], read_trace_format(probe.format_path()));
    }
    attrs_.push_back(a);
    tracefs_.push_back(std::move(probe));
  }
  return ok();
}

Status EventSet::open_on_cpu(int cpu, const EventSetOptions& options, bool through_pmu) {
  int ring_fd = -1;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    UprobeTarget t = target_of(requests_[i]);
    perf_event_attr a = attrs_[i];
    if (through_pmu) a.config1 = reinterpret_cast<uint64_t>(requests_[i].path.c_str());
    // pid -1: every process on this CPU (-a); inheriting makes no sense there.
    if (pid_ < 0) a.inherit = 0;
    UPROF_ASSIGN(UniqueFd fd, open_perf_event(a, pid_, cpu, -1, PERF_FLAG_FD_CLOEXEC, &t));
    // -a: never uprof itself. With a probe on a function it calls too (libc:malloc),
    // each drain pass would record the mallocs of the one before. The tracepoint's
    // filter drops its hits in the kernel, uncounted (uprof has one thread: its pid
    // is its only tid, which is what common_pid holds).
    if (pid_ < 0 && !through_pmu) UPROF_TRY(set_event_filter(fd.get(), "common_pid != " + std::to_string(::getpid())));
    UPROF_ASSIGN(uint64_t id, event_id(fd.get()));
    if (ring_fd < 0) {
      UPROF_ASSIGN(RingBuffer ring, RingBuffer::map(fd.get(), options.ring_data_pages, cpu));
      ring_fd = fd.get();
      rings_.push_back(std::move(ring));
    } else {
      UPROF_TRY(redirect_output(fd.get(), ring_fd));
    }
    id_to_request_[id] = i;
    events_.push_back(Event{.fd = std::move(fd), .cpu = cpu, .request = i, .id = id});
  }
  if (options.track_tasks) {
    UPROF_ASSIGN(UniqueFd fd, open_perf_event(side_band_attr_, pid_, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    UPROF_ASSIGN(uint64_t id, event_id(fd.get()));
    UPROF_TRY(redirect_output(fd.get(), ring_fd));
    side_band_ids_.insert(id);
    side_band_.push_back(std::move(fd));
  }
  return ok();
}

Status EventSet::enable() {
  for (auto& fd : side_band_) UPROF_TRY(enable_event(fd.get()));
  for (auto& e : events_) UPROF_TRY(enable_event(e.fd.get()));
  return ok();
}

Status EventSet::disable() {
  for (auto& e : events_) UPROF_TRY(disable_event(e.fd.get()));
  for (auto& fd : side_band_) UPROF_TRY(disable_event(fd.get()));
  return ok();
}

Result<std::vector<KernelCounts>> EventSet::counts() const {
  std::vector<KernelCounts> out;
  for (const auto& e : events_) {
    UPROF_ASSIGN(CounterValue v, read_counter(e.fd.get(), attrs_[e.request].read_format));
    uint32_t index = requests_[e.request].probe;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const KernelCounts& c) { return c.probe == index; });
    if (it == out.end()) {
      out.push_back(KernelCounts{.probe = index, .hits = v.count, .lost = v.lost});
    } else {
      it->hits += v.count;
      if (it->lost && v.lost) *it->lost += *v.lost;
      else it->lost.reset();
    }
  }
  return out;
}

Result<std::optional<uint64_t>> EventSet::dropped_on_ring(std::size_t ring) const {
  if (ring >= rings_.size()) return std::optional<uint64_t>{};
  uint64_t dropped = 0;
  for (const auto& e : events_) {
    if (e.cpu != rings_[ring].cpu()) continue;
    UPROF_ASSIGN(CounterValue v, read_counter(e.fd.get(), attrs_[e.request].read_format));
    if (!v.lost) return std::optional<uint64_t>{};
    dropped += *v.lost;
  }
  return std::optional<uint64_t>{dropped};
}

const ProbeCapture* EventSet::find_probe(uint64_t id) const {
  auto it = id_to_request_.find(id);
  return it == id_to_request_.end() ? nullptr : &requests_[it->second];
}

const perf_event_attr* EventSet::find_attr(uint64_t id) const {
  if (is_side_band(id)) return &side_band_attr_;
  auto it = id_to_request_.find(id);
  return it == id_to_request_.end() ? nullptr : &attrs_[it->second];
}

}  // namespace uprof

namespace uprof {

std::vector<EventSet::Identity> EventSet::identities() const {
  std::vector<Identity> out;
  for (const auto& [id, request] : id_to_request_) out.push_back({id, &requests_[request], &attrs_[request]});
  for (uint64_t id : side_band_ids_) out.push_back({id, nullptr, &side_band_attr_});
  return out;
}

}  // namespace uprof
