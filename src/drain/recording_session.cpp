#include "uprof/drain/recording_session.h"
#include "uprof/resolve/typed_values.h"

#include <linux/perf_event.h>
#include <signal.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include "uprof/attach/stale_uprobes.h"
#include "uprof/attach/workload.h"
#include "uprof/drain/drain_loop.h"
#include "uprof/drain/event_order.h"
#include "uprof/drain/record_decoder.h"
#include "uprof/drain/sample_values.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

uint64_t clock_ns(clockid_t c) {
  timespec ts{};
  clock_gettime(c, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

std::string with_commas(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

// The program a spec without OBJECT refers to.
Result<std::string> target_program(const RecordRequest& req) {
  if (req.attach_pid > 0) {
    if (::kill(req.attach_pid, 0) != 0 && errno == ESRCH)
      return err("record: -p ", req.attach_pid, ": no such process");
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(req.attach_pid) + "/exe", ec);
    if (ec) return err("record: process ", req.attach_pid, ": ", ec.message());
    return exe.string();
  }
  if (req.command.empty()) {
    if (req.system_wide) return std::string();  // specs must name their file: BIN:FUNC
    return err("record: no command to run (uprof record -e SPEC -- CMD ARGS...) and no -p PID");
  }
  return find_program(req.command.front());
}

constexpr uint32_t kNoProbe = UINT32_MAX;  // what Event::probe holds for "no probe"

// Per event id: which probe, and how its samples are laid out.
struct IdInfo {
  uint32_t probe = 0;
  SampleFormat format;
};

}  // namespace

uint64_t RecordReport::kernel_total() const {
  uint64_t n = 0;
  for (auto& p : per_probe) n += p.kernel;
  return n;
}

uint64_t RecordReport::recorded_total() const {
  uint64_t n = 0;
  for (auto& p : per_probe) n += p.recorded;
  return n;
}

bool RecordReport::accounted() const {
  for (const auto& p : per_probe)
    if (p.recorded + lost_of(p) != p.kernel) return false;
  return true;
}

std::string summary_line(const RecordReport& r) {
  std::string s = "uprof: " + with_commas(r.samples) + " events recorded, " + with_commas(r.lost) +
                  " lost (kernel counted " + with_commas(r.kernel_total()) + "); " + r.output + ", ";
  char size[32];
  if (r.bytes >= 10u << 20) std::snprintf(size, sizeof size, "%.0f MB", static_cast<double>(r.bytes) / 1e6);
  else if (r.bytes >= 1u << 20) std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(r.bytes) / 1e6);
  else std::snprintf(size, sizeof size, "%.1f kB", static_cast<double>(r.bytes) / 1e3);
  return s + size;
}

Result<RecordReport> run_recording(const RecordRequest& req, const std::atomic<bool>& stop,
                                   std::atomic<pid_t>& workload_pid) {
  if (req.specs.empty()) return err("record: no probe given (-e SPEC)");
  UPROF_ASSIGN(std::string target, target_program(req));

  // spec -> resolve -> plan
  Resolver resolver(req.resolve);
  TypedValueResolver dwarf;
  std::vector<std::string> notes;
  std::vector<ResolvedProbe> resolved;
  for (const auto& text : req.specs) {
    UPROF_ASSIGN(ProbeSpec spec, parse_probe_spec(text));
    UPROF_ASSIGN(auto probes, resolver.resolve(spec, target));
    for (auto& p : probes) {
      if (p.arch != host_arch())
        return err("record: ", p.path, " is an ", arch_info(p.arch).name, " file; this machine runs ",
                   arch_info(host_arch()).name, " (report works on any architecture's data file, record does not)");
      UPROF_ASSIGN(const Image* img, resolver.image(p.path));
      UPROF_TRY(apply_typed_values(dwarf, *img, p, req.capture_args, notes));
      resolved.push_back(std::move(p));
    }
  }
  if (req.on_note)
    for (const auto& n : notes) req.on_note(n);
  UPROF_ASSIGN(ProbePlan plan, plan_probes(resolved, req.plan));
  PlannedProbeCosts probe_costs = req.on_planned ? req.on_planned(plan.probes) : PlannedProbeCosts{};
  for (auto* list : {&probe_costs.inside_ns, &probe_costs.hit_ns})
    if (list->size() != plan.probes.size() ||
        std::none_of(list->begin(), list->end(), [](uint64_t c) { return c != 0; }))
      list->clear();
  const ArchInfo& arch = arch_info(host_arch());

  std::vector<ProbeRequest> requests;
  for (std::size_t i = 0; i < plan.probes.size(); i++) {
    const auto& p = plan.probes[i];
    requests.push_back({.path = p.path, .offset = p.file_offset, .is_return = p.kind == ProbeKind::Return,
                        .content = plan.content[i], .probe_index = p.index, .ref_ctr_offset = 0});
  }

  // Before anything is started: where tracefs is (a user who is not root learns
  // here that it needs root), and what a killed uprof left there.
  std::string tracefs_dir;
  if (req.backend == ProbeBackend::Tracefs) {
    UPROF_ASSIGN(tracefs_dir, find_tracefs());
    auto cleaned = remove_stale_uprof_probes(tracefs_dir);
    if (req.on_note) {
      if (!cleaned) req.on_note(cleaned.error().message);
      else for (const auto& line : describe_cleanup(*cleaned, tracefs_dir)) req.on_note(line);
    }
  }

  // The workload starts stopped; the events open on its pid with enable_on_exec.
  std::optional<Workload> workload;
  pid_t pid = req.attach_pid;
  if (pid <= 0 && !req.command.empty()) {
    UPROF_ASSIGN(Workload w, Workload::spawn(req.command));
    workload.emplace(std::move(w));
    pid = workload->pid();
    workload_pid.store(pid);
  }
  EventSetOptions eo;
  eo.backend = req.backend;
  eo.tracefs_dir = tracefs_dir;
  eo.pmu_dir = req.pmu_dir.empty() ? uprobe_pmu_dir() : req.pmu_dir;
  bool launched = workload.has_value();
  eo.start = launched && !req.system_wide ? StartMode::OnExec : StartMode::Explicit;
  eo.ring_data_pages = req.ring_pages;
  eo.track_tasks = true;
  UPROF_ASSIGN(EventSet events, EventSet::open(requests, req.system_wide ? -1 : pid, eo));

  RecordingMeta meta;
  meta.arch = arch.arch;
  meta.command = req.attach_pid > 0 ? std::vector<std::string>{"-p", std::to_string(req.attach_pid)} : req.command;
  if (req.system_wide) meta.command.insert(meta.command.begin(), "-a");
  utsname u{};
  if (uname(&u) == 0) {
    meta.kernel = u.release;
    meta.hostname = u.nodename;
  }
  meta.uprof_version = UPROF_VERSION;
  meta.start_realtime_ns = clock_ns(CLOCK_REALTIME);
  meta.start_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  for (uint64_t c : probe_costs.inside_ns)
    if (c && (!meta.probe_cost_ns || c < meta.probe_cost_ns)) meta.probe_cost_ns = c;
  meta.probe_costs_ns = std::move(probe_costs.inside_ns);
  meta.probe_hit_costs_ns = std::move(probe_costs.hit_ns);
  UPROF_ASSIGN(DataFileWriter writer, DataFileWriter::create(req.output, meta, plan.probes));

  RecordReport rep;
  rep.output = req.output;
  rep.probes = plan.probes;
  rep.per_probe.resize(plan.probes.size());
  rep.cpus = events.cpus().size();

  // The first name of the workload's main thread (threads and children that
  // rename themselves are not followed yet).
  Event comm;
  comm.kind = EventKind::Comm;
  comm.pid = comm.tid = static_cast<uint32_t>(pid);
  comm.time = meta.start_monotonic_ns;
  EventOrderer order;
  if (pid > 0) {
    comm.comm = req.attach_pid > 0 ? read_first_line("/proc/" + std::to_string(pid) + "/comm")
                                   : std::filesystem::path(req.command.front()).filename().string().substr(0, 15);
    order.push(events.rings().size(), comm);  // a lane of its own: it comes from no ring
  }
  auto write = [&](const Event& e) -> Status {
    rep.events++;
    return writer.add(e);
  };

  std::unordered_map<uint64_t, IdInfo> ids;
  uint64_t last_time = meta.start_monotonic_ns;
  auto on_record = [&](std::size_t ring, std::span<const std::byte> rec) -> Status {
    UPROF_ASSIGN(perf_event_header h, decode_header(rec));
    if (h.type != PERF_RECORD_SAMPLE && h.type != PERF_RECORD_LOST && h.type != PERF_RECORD_COMM &&
        h.type != PERF_RECORD_FORK && h.type != PERF_RECORD_EXIT)
      return ok();
    UPROF_ASSIGN(std::optional<uint64_t> id, record_identifier(rec));
    if (!id) return ok();
    auto it = ids.find(*id);
    if (it == ids.end()) {
      const ProbeRequest* r = events.find_request(*id);
      const perf_event_attr* a = events.find_attr(*id);
      if (!a || (!r && !events.is_side_band(*id))) return err("record: a record of unknown event id ", *id);
      // The side band's records (task records, and LOST for them) belong to no probe.
      it = ids.emplace(*id, IdInfo{r ? r->probe_index : kNoProbe, sample_format(*a, arch)}).first;
    }
    const IdInfo& info = it->second;
    Event e;
    if (h.type == PERF_RECORD_COMM) {
      UPROF_ASSIGN(CommRecord c, decode_comm(rec, info.format));
      e.kind = EventKind::Comm;
      e.pid = c.pid;
      e.tid = c.tid;
      e.comm = std::move(c.comm);
      e.time = c.sample_id ? c.sample_id->time : last_time;
    } else if (h.type == PERF_RECORD_FORK || h.type == PERF_RECORD_EXIT) {
      UPROF_ASSIGN(TaskRecord t, decode_task(rec, info.format));
      e.kind = t.exit ? EventKind::Exit : EventKind::Fork;
      e.pid = t.pid;
      e.tid = t.tid;
      e.time = t.time;
      if (!t.exit) {
        e.values[0] = t.ppid;
        e.values[1] = t.ptid;
        e.nvalues = 2;
      }
    } else if (h.type == PERF_RECORD_SAMPLE) {
      if (info.probe == kNoProbe) return ok();  // the side band does not sample
      UPROF_ASSIGN(Sample s, decode_sample(rec, info.format));
      e.kind = EventKind::Sample;
      e.probe = info.probe;
      e.pid = s.pid;
      e.tid = s.tid;
      e.time = s.time;
      rep.missing_values += extract_values(s, plan.probes[info.probe].values, arch.sp_reg, e);
      rep.per_probe[info.probe].recorded++;
      rep.samples++;
      last_time = s.time;
    } else {
      UPROF_ASSIGN(LostRecord l, decode_lost(rec, info.format));
      e.kind = EventKind::Lost;
      e.probe = info.probe;
      e.lost = l.lost;
      e.time = l.sample_id ? l.sample_id->time : last_time;
      if (info.probe < rep.per_probe.size()) rep.per_probe[info.probe].lost_records += l.lost;
    }
    order.push(ring, std::move(e));
    return ok();
  };

  StopCondition sc;
  sc.workload = pid;  // -1 with -a and no command: until Ctrl-C or --duration
  sc.flag = &stop;
  if (req.duration_s)
    sc.deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(*req.duration_s));
  DrainLoopOptions dopts;
  dopts.on_pass_start = [&] { order.pass_started(clock_ns(CLOCK_MONOTONIC)); };
  dopts.on_pass_end = [&]() -> Status {
    UPROF_TRY(order.pass_ended(write));
    return writer.flush();
  };

  if (eo.start == StartMode::Explicit) UPROF_TRY(events.enable());
  if (workload) UPROF_TRY(workload->start());
  // A failed write of the data file (disk full, I/O error) ends the recording;
  // the file keeps every whole section written before, and the error says so.
  auto write_failure = [&](Error e) {
    if (writer.failed())
      e.message += std::string("; recording stopped") + (workload && !workload->exited() ? " (the workload was killed)" : "") +
                   "; what was written before is readable: uprof report " + req.output;
    return e;
  };
  auto loop = run_drain_loop(events.rings(), sc, on_record, [&] { return events.disable(); }, dopts);
  if (!loop) return write_failure(std::move(loop).take_error());
  rep.stop_reason = std::string(to_string(loop->reason));
  if (auto st = order.flush_all(write); !st) return write_failure(std::move(st).take_error());
  rep.late = order.late();

  UPROF_ASSIGN(auto counts, events.counts());
  for (const auto& c : counts) {
    if (c.probe_index >= rep.per_probe.size()) continue;
    rep.per_probe[c.probe_index].kernel = c.hits;
    rep.per_probe[c.probe_index].lost = c.lost;
  }
  for (const auto& p : rep.per_probe) rep.lost += rep.lost_of(p);

  if (workload) {
    // Ctrl-C: the workload got SIGINT too; wait for it to finish what it does on that.
    UPROF_ASSIGN(int st, workload->wait());
    rep.exit_status = st;
    rep.term_signal = workload->term_signal();
  }
  Trailer t;
  t.end_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  t.events = rep.events;
  t.lost = rep.lost;
  t.exit_status = workload ? rep.exit_status : -1;
  for (const auto& p : rep.per_probe) t.counts.push_back({p.recorded, p.kernel});
  if (auto st = writer.finish(t); !st) return write_failure(std::move(st).take_error());
  rep.bytes = writer.bytes_written();
  return rep;
}

}  // namespace uprof
