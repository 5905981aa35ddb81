#include "uprof/engine/perf/perf_engine.h"

#include "uprof/attach/stale_uprobes.h"
#include "uprof/drain/drain_loop.h"
#include "uprof/drain/event_order.h"
#include "uprof/drain/unwind/stack_min_filter.h"
#include "uprof/drain/unwind/stack_unwinder.h"
#include "uprof/engine/engine_kind.h"
#include "uprof/engine/perf/perf_fetch_args.h"
#include "uprof/engine/perf/perf_records.h"
#include "uprof/engine/perf/ring_loss_watch.h"
#include "uprof/util/clock.h"

namespace uprof {
namespace {

class PerfEngine final : public CaptureEngine {
 public:
  PerfEngine(const CapturePlan& plan, EventSet events, bool explicit_start, uint64_t start_time, ProbeBackend backend)
      : plan_(plan), events_(std::move(events)), explicit_start_(explicit_start), converter_(plan, start_time),
        backend_(backend) {
    for (const auto& ident : events_.identities())
      converter_.add_id(ident.id, ident.probe ? std::optional<uint32_t>(ident.probe->probe) : std::nullopt,
                        *ident.attr);
  }

  std::string_view name() const override { return to_string(EngineKind::Perf); }
  std::string attach_path() const override {
    return backend_ == ProbeBackend::Tracefs ? "tracefs uprobe events" : "uprobe-PMU events";
  }
  void set_drain_budget(std::size_t bytes) { drain_budget_ = bytes ? bytes : kDefaultDrainBudget; }
  const std::vector<TraceField>& raw_fields(std::size_t probe) const { return events_.raw_fields(probe); }
  void set_raw_layout(uint32_t probe, std::vector<RawSlot> layout) { converter_.set_raw_layout(probe, std::move(layout)); }
  std::size_t cpus() const override { return events_.cpus().size(); }
  Status start() override { return explicit_start_ ? events_.enable() : ok(); }

  Result<CaptureResult> capture(const StopCondition& stop, const CaptureSink& sink) override {
    // One lane per ring: each ring is in time order on its own, and the orderer
    // merges them (drain/event_order.h says how late an event may be).
    // What waits here is bounded by the budget: a pass starts only below it, and reads
    // each ring up to its head (at most the ring's size more). A ring that may owe a
    // LOST record holds the others back (ring_loss_watch.h).
    EventOrderer order(drain_budget_);
    std::vector<std::size_t> ring_bytes;
    for (const RingBuffer& ring : events_.rings()) ring_bytes.push_back(ring.data_size());
    RingLossWatch watch(std::move(ring_bytes));
    // --stack-min: the short calls' stacks are dropped here, in time order
    // (drain/unwind/stack_min_filter.h): the kernel copied every one. The Object events
    // of the files frames name go just before the first event written that names each.
    StackMinFilter stack_min(plan_);
    Event shortened;
    const EventOrderer::Sink write = [&](const Event& e) -> Status {
      if (plan_.call_graph.stack_min_ns != 0 && stack_min.drop_stack(e)) {
        shortened = e;
        shortened.stack.clear();
        return sink.write(shortened);
      }
      if (!e.stack.empty()) UPROF_TRY(unwinder_.announce(e, sink.write));
      return sink.write(e);
    };
    auto on_record = [&](std::size_t ring, std::span<const std::byte> rec) -> Status {
      UPROF_ASSIGN(std::optional<Event> e, converter_.convert(rec, ring));
      const std::optional<uint64_t> time = e ? std::optional<uint64_t>(e->time) : std::nullopt;
      // A LOST whose drops a settled Lost event already said adds nothing.
      if (e && e->kind == EventKind::Lost) e->lost = watch.on_lost_record(ring, e->lost);
      if (e && converter_.stack()) unwinder_.unwind(*converter_.stack(), plan_.probes[e->probe], *e);  // record -g
      if (e && (e->kind != EventKind::Lost || e->lost)) order.push(ring, *e);
      watch.on_record(ring, rec.size(), time);
      return ok();
    };
    bool held = false;
    DrainLoopOptions dopts;
    dopts.on_pass_start = [&] { order.pass_started(monotonic_ns()); };
    dopts.hold_reads = [&] { return held = order.full(); };
    dopts.on_pass_end = [&]() -> Status {
      if (held) order.pass_cut();
      const uint64_t now = monotonic_ns();
      watch.pass_ended(now);
      for (std::size_t ring : watch.overdue(now)) {
        UPROF_ASSIGN(std::optional<uint64_t> dropped, events_.dropped_on_ring(ring));
        if (auto lost = watch.settle(ring, dropped, now)) order.push(ring, std::move(*lost));
      }
      UPROF_TRY(order.pass_ended(write, watch.horizon()));
      return sink.flush();
    };
    UPROF_ASSIGN(DrainLoopResult loop,
                 run_drain_loop(events_.rings(), stop, on_record, [&] { return events_.disable(); }, dopts));
    UPROF_TRY(order.flush_all(write));

    CaptureResult r;
    r.stop_reason = loop.reason;
    r.samples = converter_.samples();
    r.missing_values = converter_.missing_values();
    r.late = order.late();
    r.unwinding = unwinder_.counts();
    r.per_probe.resize(plan_.probes.size());
    for (std::size_t i = 0; i < r.per_probe.size(); i++) {
      r.per_probe[i].recorded = converter_.recorded()[i];
      r.per_probe[i].dropped = converter_.lost_records()[i];
    }
    UPROF_ASSIGN(auto counts, events_.counts());
    uint64_t counted = 0;
    for (const KernelCounts& c : counts) {
      if (c.probe >= r.per_probe.size()) continue;
      r.per_probe[c.probe].hits = c.hits;
      // The counter's figure when the kernel has one: PERF_RECORD_LOST misses the
      // drops at the end (the ring was still full when the workload ended).
      if (c.lost) r.per_probe[c.probe].dropped = *c.lost;
      counted += c.lost.value_or(0);
    }
    if (auto trailing = unreported_loss(counted, watch.said(), monotonic_ns()))
      UPROF_TRY(sink.write(*trailing));
    return r;
  }

 private:
  const CapturePlan& plan_;
  EventSet events_;
  bool explicit_start_;
  PerfRecordConverter converter_;
  ProbeBackend backend_;
  std::size_t drain_budget_ = kDefaultDrainBudget;
  StackUnwinder unwinder_{plan_.call_graph.method};  // record -g
};

}  // namespace

Result<std::unique_ptr<CaptureEngine>> open_perf_engine(const CapturePlan& plan, const CaptureTarget& target,
                                                        const PerfEngineOptions& options) {
  for (const ProbeCapture& p : plan.probes)
    if (p.offcpu != OffCpuRole::None) return err("perf engine: ", kPerfNoOffCpu);
  std::string tracefs_dir;
  if (options.backend == ProbeBackend::Tracefs) {
    UPROF_ASSIGN(tracefs_dir, find_tracefs());
    auto cleaned = remove_stale_uprof_probes(tracefs_dir);
    if (options.on_note) {
      if (!cleaned) options.on_note(cleaned.error().message);
      else for (const auto& line : describe_cleanup(*cleaned, tracefs_dir)) options.on_note(line);
    }
  }
  EventSetOptions eo;
  eo.backend = options.backend;
  eo.tracefs_dir = tracefs_dir;
  eo.pmu_dir = uprobe_pmu_dir();
  const bool on_exec = target.start_on_exec && !target.system_wide;
  eo.start = on_exec ? StartMode::OnExec : StartMode::Explicit;
  eo.ring_data_pages = target.ring_pages ? target.ring_pages : kPerfDefaultRingPages;
  eo.track_tasks = true;
  // record -g: a stack is unwound with its process's mappings, read from /proc/PID/maps
  // when the process's first stack is read. By default samples wait in the ring until a
  // quarter of it is full or the next pass (100 ms): a process that ends before that
  // loses every stack (the 30 of a 5 ms why_slow run, the 10 of an 11 ms one). Woken once
  // a stack's worth of bytes waits, the reader reads the first stack while the process
  // runs; the cost is a wakeup per stack while the reader sleeps. (The BPF engine wakes
  // its reader at a process's first stack only; perf events have no such choice.)
  if (plan.call_graph.on) eo.wakeup_watermark = plan.call_graph.stack_bytes;
  // Values in memory become tracefs fetch arguments, decoded from each sample's raw data.
  std::vector<std::vector<FetchArg>> fetch(plan.probes.size());
  for (std::size_t i = 0; i < plan.probes.size(); i++) {
    UPROF_ASSIGN(fetch[i], perf_fetch_args(plan.probes[i], arch_info(plan.arch)));
    eo.fetch_args.push_back(fetch_arg_definitions(fetch[i]));
  }
  UPROF_ASSIGN(EventSet events, EventSet::open(plan.probes, target.system_wide ? -1 : target.pid, eo));
  auto engine = std::make_unique<PerfEngine>(plan, std::move(events), !on_exec, options.start_time, options.backend);
  for (std::size_t i = 0; i < plan.probes.size(); i++) {
    if (fetch[i].empty()) continue;
    UPROF_ASSIGN(std::vector<RawSlot> layout, raw_layout(fetch[i], engine->raw_fields(i), plan.probes[i]));
    engine->set_raw_layout(static_cast<uint32_t>(i), std::move(layout));
  }
  engine->set_drain_budget(target.drain_budget);
  return std::unique_ptr<CaptureEngine>(std::move(engine));
}

}  // namespace uprof
