#include "uprof/record/recording_session.h"

#include <signal.h>
#include <sys/utsname.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "uprof/analyse/interval_stats.h"
#include "uprof/attach/workload.h"
#include "uprof/engine/engine_table.h"
#include "uprof/record/task_names.h"
#include "uprof/store/data_file.h"
#include "uprof/util/clock.h"
#include "uprof/util/thousands.h"
#include "uprof/util/text_file.h"

namespace uprof {
namespace {

// The facts of the run the data file keeps, and the probe costs when they are whole.
RecordingMeta recording_meta(const RecordRequest& req, ProbeCosts costs, std::size_t probes) {
  for (auto* list : {&costs.inside_ns, &costs.hit_ns})
    if (list->size() != probes || std::none_of(list->begin(), list->end(), [](uint64_t c) { return c != 0; }))
      list->clear();
  RecordingMeta meta;
  meta.arch = host_arch();
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
  for (uint64_t c : costs.inside_ns)
    if (c && (!meta.probe_cost_ns || c < meta.probe_cost_ns)) meta.probe_cost_ns = c;
  meta.probe_costs_ns = std::move(costs.inside_ns);
  meta.probe_hit_costs_ns = std::move(costs.hit_ns);
  return meta;
}

// A closed block of the live statistics as data for the command: the functions named,
// the times since the recording's start (0 for a time before it) and on the wall clock.
IntervalReport interval_report(const IntervalBlock& block, const ProbeFunctions& functions, const RecordingMeta& meta) {
  auto since_start = [&](uint64_t t) { return t >= meta.start_monotonic_ns ? t - meta.start_monotonic_ns : 0; };
  IntervalReport r{.index = block.index,
                   .begin_ns = since_start(block.begin),
                   .end_ns = since_start(block.end),
                   .end_realtime_ns = block.end + (meta.start_realtime_ns - meta.start_monotonic_ns),
                   .events = block.samples,
                   .lost = block.lost,
                   .functions = {}};
  for (std::size_t i = 0; i < block.functions.size() && i < functions.functions.size(); ++i) {
    const IntervalFunction& f = block.functions[i];
    r.functions.push_back(IntervalRow{.function = functions.functions[i].name, .paired = functions.functions[i].paired(),
                                      .calls = f.calls, .unmatched = f.unmatched, .latency = f.latency});
  }
  return r;
}

// --interval: every event also goes to the live statistics, and each flush (after
// every drain pass, 100 ms apart at most) closes a block once its time is up; the
// command hears each block as data (SessionControl::on_interval).
class LiveIntervals {
 public:
  LiveIntervals(const RecordingPlan& plan, const RecordingMeta& meta, const SessionControl& control)
      : meta_(meta), control_(control) {
    if (!plan.request.interval_s || !control.on_interval) return;
    period_ = std::max<uint64_t>(1, static_cast<uint64_t>(*plan.request.interval_s * 1e9));
    stats_.emplace(plan.probes, meta.start_monotonic_ns);
    next_cut_ = meta.start_monotonic_ns + period_;
  }

  void add(const Event& e) {
    if (stats_) stats_->add(e);
  }

  // After each flush of the data file: the block, once its time is up.
  void flushed() {
    if (!stats_) return;
    const uint64_t now = clock_ns(CLOCK_MONOTONIC);
    if (now < next_cut_) return;
    control_.on_interval(interval_report(stats_->cut(now), stats_->functions(), meta_));
    next_cut_ += period_;
    if (next_cut_ <= now) next_cut_ = now + period_;  // a slow pass skipped a boundary
  }

  // The rest, since the last block; nothing to say after a block that said it all.
  void ended() {
    if (!stats_) return;
    stats_->finish();
    const IntervalBlock last = stats_->cut(clock_ns(CLOCK_MONOTONIC));
    const bool empty = !last.samples && !last.lost &&
                       std::all_of(last.functions.begin(), last.functions.end(),
                                   [](const IntervalFunction& f) { return !f.calls && !f.unmatched; });
    if (!empty || last.index == 1) control_.on_interval(interval_report(last, stats_->functions(), meta_));
  }

 private:
  const RecordingMeta& meta_;
  const SessionControl& control_;
  std::optional<IntervalStats> stats_;
  uint64_t period_ = 0, next_cut_ = 0;
};

// The first name of the workload's main thread; the engine reports the names that
// threads and children take after it. Every probe hit comes later than this.
Event first_comm(const RecordRequest& req, pid_t pid, uint64_t start) {
  Event comm;
  comm.kind = EventKind::Comm;
  comm.pid = comm.tid = static_cast<uint32_t>(pid);
  comm.time = start;
  comm.comm = req.attach_pid > 0 ? read_first_line("/proc/" + std::to_string(pid) + "/comm")
                                 : std::filesystem::path(req.command.front()).filename().string().substr(0, 15);
  return comm;
}

// -a and -p: the moment the probes are live, so that a user (or a script) knows
// from when on calls are recorded; nothing before it is, and no kernel counts those.
std::string live_line(const RecordRequest& req, std::size_t probes, pid_t pid) {
  std::string where;
  if (pid > 0) {
    where = "in process " + std::to_string(pid);
    const std::string name = read_first_line("/proc/" + std::to_string(pid) + "/comm");
    if (!name.empty()) where += " (" + name + ")";
  } else {
    where = "in every process that maps their files";
  }
  std::string until = pid > 0 ? "until it exits or Ctrl-C" : "until Ctrl-C";
  if (req.duration_s) {
    char d[48];
    std::snprintf(d, sizeof d, "for %g s", *req.duration_s);
    until = std::string(d) + " or " + until;
  }
  return "recording: " + with_commas(probes) + (probes == 1 ? " probe" : " probes") + " live " + where +
         "; calls from now on are recorded, " + until;
}

StopCondition stop_condition(const RecordRequest& req, pid_t pid, const SessionControl& control) {
  StopCondition sc;
  sc.workload = pid;  // -1 with -a and no command: until Ctrl-C or --duration
  sc.flag = control.stop;
  if (req.duration_s)
    sc.deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(*req.duration_s));
  return sc;
}

void take_capture(RecordReport& rep, CaptureResult captured) {
  rep.stop_reason = std::string(to_string(captured.stop_reason));
  rep.samples = captured.samples;
  rep.missing_values = captured.missing_values;
  rep.late = captured.late;
  rep.unwinding = captured.unwinding;
  rep.task_dropped = captured.task_dropped;
  rep.per_probe = std::move(captured.per_probe);
  for (const auto& p : rep.per_probe) rep.lost += p.dropped;
}

Trailer trailer(const RecordReport& rep, bool launched) {
  Trailer t;
  t.end_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  t.events = rep.events;
  t.lost = rep.lost;
  t.exit_status = launched ? rep.exit_status : -1;
  for (const auto& p : rep.per_probe) t.counts.push_back({p.recorded, p.hits});
  return t;
}

// "uprof: store: u.data: No space left on device after 262,144 bytes: ..." One line,
// true whenever it is printed: the workload has not been touched.
std::string write_failure_line(const DataFileWriter& writer, bool workload) {
  return "uprof: store: " + writer.path() + ": " + std::strerror(writer.write_errno()) + " after " +
         with_commas(writer.bytes_written()) + " bytes: the recording stopped there (probes removed)" +
         (workload ? ", the workload ran on to its end" : "") + "; what was written is readable: uprof report " +
         writer.path();
}

}  // namespace

uint64_t RecordReport::kernel_total() const {
  uint64_t n = 0;
  for (auto& p : per_probe) n += p.hits;
  return n;
}

uint64_t RecordReport::recorded_total() const {
  uint64_t n = 0;
  for (auto& p : per_probe) n += p.recorded;
  return n;
}

bool RecordReport::accounted() const {
  return std::all_of(per_probe.begin(), per_probe.end(),
                     [](const ProbeAccount& p) { return p.recorded + p.dropped == p.hits; });
}

std::string summary_line(const RecordReport& r) {
  std::string s = "uprof: " + with_commas(r.samples) + " events recorded, " + with_commas(r.lost) +
                  " lost (kernel counted " + with_commas(r.kernel_total()) + "); " + r.output + ", ";
  char size[32];
  if (r.bytes >= 10u << 20) std::snprintf(size, sizeof size, "%.0f MB", static_cast<double>(r.bytes) / 1e6);
  else if (r.bytes >= 1u << 20) std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(r.bytes) / 1e6);
  else std::snprintf(size, sizeof size, "%.1f kB", static_cast<double>(r.bytes) / 1e3);
  s += size;
  if (!r.engine.empty()) s += "; " + r.engine + " engine" + (r.attach.empty() ? "" : " (" + r.attach + ")");
  return s;
}

Result<RecordReport> run_session(const RecordingPlan& plan, EngineKind engine_kind, const ProbeCosts& costs,
                                 const SessionControl& control) {
  const RecordRequest& req = plan.request;
  // The workload starts stopped; the probes start at its exec.
  std::optional<Workload> workload;
  pid_t pid = req.attach_pid;
  if (pid <= 0 && !req.command.empty()) {
    UPROF_ASSIGN(Workload w, Workload::spawn(req.command, !req.exit_with_command));
    workload.emplace(std::move(w));
    pid = workload->pid();
    if (control.workload_pid) control.workload_pid->store(pid);
  }
  RecordingMeta meta = recording_meta(req, costs, plan.probes.size());
  CaptureTarget target{.pid = pid, .system_wide = req.system_wide, .start_on_exec = workload.has_value(),
                       .ring_pages = req.ring_pages, .drain_budget = req.drain_budget};
  UPROF_ASSIGN(auto engine, open_engine(engine_kind, plan.capture, target,
                                        EngineOptions{.backend = req.backend, .bpf_attach = req.bpf_attach, .start_time = meta.start_monotonic_ns,
                                                      .workload_file = plan.target, .on_note = control.on_note}));
  meta.engine = std::string(engine->name());
  meta.attach = engine->attach_path();
  // A write past RLIMIT_FSIZE raises SIGXFSZ, which would end uprof on the spot and the
  // recording with it; with a handler that does nothing (reset at the workload's exec,
  // which SIG_IGN would not be) the write fails with EFBIG, and stops the recording as a
  // full disk does.
  struct sigaction on_xfsz {};
  on_xfsz.sa_handler = [](int) {};
  ::sigaction(SIGXFSZ, &on_xfsz, nullptr);
  UPROF_ASSIGN(DataFileWriter writer, DataFileWriter::create(req.output, meta, plan.probes));

  RecordReport rep;
  rep.output = req.output;
  rep.engine = std::string(engine->name());
  rep.attach = meta.attach;
  rep.probes = plan.probes;
  rep.cpus = engine->cpus();
  LiveIntervals intervals(plan, meta, control);
  TaskNames names;  // threads running before the recording started get their names from /proc
  auto write = [&](const Event& e) -> Status {
    if (std::optional<Event> comm = names.before(e)) {
      rep.events++;
      UPROF_TRY(writer.add(*comm));
    }
    rep.events++;
    intervals.add(e);
    return writer.add(e);
  };
  auto flush = [&]() -> Status {
    UPROF_TRY(writer.flush());
    intervals.flushed();
    return ok();
  };
  if (pid > 0) UPROF_TRY(write(first_comm(req, pid, meta.start_monotonic_ns)));

  StopCondition stop = stop_condition(req, pid, control);  // --duration counts from here
  if (workload && !req.exit_with_command)
    stop.descendants_running = [&workload, &control, &req, said = false]() mutable {
      const bool left = workload->descendants_running();
      if (left && !said && control.on_note) {
        said = true;
        control.on_note(req.command.front() + " exited; still recording the processes it left running, until the last "
                        "exits (Ctrl-C or --duration stop sooner; --exit-with-command stops with the first process)");
      }
      return left;
    };
  UPROF_TRY(engine->start());
  if (workload) UPROF_TRY(workload->start());
  else if (control.on_note) control.on_note(live_line(req, plan.probes.size(), pid));
  auto captured = engine->capture(stop, CaptureSink{.write = write, .flush = flush});
  if (!captured && !writer.failed()) return std::move(captured).take_error();
  if (captured) {
    intervals.ended();
    take_capture(rep, std::move(*captured));
  } else {
    // The data file cannot be written on (a full disk, a quota, an I/O error): the
    // recording ends, the workload does not. The probes come off now, and the workload
    // runs to its end untouched and is waited for below.
    engine.reset();
    rep.write_failure = write_failure_line(writer, workload.has_value());
  }

  if (workload) {
    // Ctrl-C: the workload got SIGINT too; wait for it to finish what it does on that.
    UPROF_ASSIGN(int st, workload->wait());
    rep.exit_status = st;
    rep.term_signal = workload->term_signal();
  }
  if (rep.write_failure.empty()) {
    const Trailer t = trailer(rep, workload.has_value());
    if (auto st = writer.finish(t); !st) {
      if (!writer.failed()) return std::move(st).take_error();
      rep.write_failure = write_failure_line(writer, workload.has_value());
    }
  }
  // -p and -a have no workload's status to pass on: a recording cut short fails.
  if (!rep.write_failure.empty() && !workload) rep.exit_status = 1;
  rep.bytes = writer.bytes_written();
  return rep;
}

}  // namespace uprof
