#include "uprof/analyse/report_model.h"

#include <algorithm>

namespace uprof {

namespace {

// The report's Aggregator, and what else hears the same calls: an observer of them
// (the HTML page's timelines), the stacks of a recording made with -g, the files their
// frames name. The Aggregator is final: its calls here are direct, so the wrapper adds
// one virtual call per event, and build_report uses it only when there is more to feed.
class ReportSink final : public EventSink {
 public:
  ReportSink(Aggregator& agg, CallObserver* observer, StackCollector* stacks, FrameSymbolizer& names,
             const AggregateOptions& options, const ProbeFunctions& functions)
      : agg_(agg), observer_(observer), stacks_(stacks), names_(names), options_(options), functions_(functions) {}
  void on_call(const Call& c, std::string_view comm) override {
    agg_.on_call(c, comm);
    if (observer_) observer_->on_call(c, comm);
    if (stacks_ && agg_.selected(c.function)) {
      // A clone's calls count in its row's function, as the Aggregator counts them.
      const uint32_t row = functions_.functions[c.function].row;
      stacks_->add(row != kNoFunction && agg_.selected(row) ? row : c.function, c, options_.duration_of(c));
    }
  }
  void on_unmatched(const Unmatched& u, std::string_view comm) override { agg_.on_unmatched(u, comm); }
  void on_hit(const Hit& h, std::string_view comm) override { agg_.on_hit(h, comm); }
  void on_sample(const Event& e, uint32_t function, std::optional<uint64_t> d, std::string_view comm) override {
    agg_.on_sample(e, function, d, comm);
  }
  void on_lost(const Event& e) override { agg_.on_lost(e); }
  void on_thread(uint32_t pid, uint32_t tid, std::string_view comm) override { agg_.on_thread(pid, tid, comm); }
  void on_paired() override { agg_.on_paired(); }
  void on_object(uint32_t object, std::string_view path, std::string_view build_id) override {
    names_.add_object(object, std::string(path), std::string(build_id));
  }

 private:
  Aggregator& agg_;
  CallObserver* observer_;
  StackCollector* stacks_;
  FrameSymbolizer& names_;
  const AggregateOptions& options_;
  const ProbeFunctions& functions_;
};

}  // namespace

std::vector<uint64_t> probe_cost_by_function(const RecordingMeta& meta, const ProbeFunctions& functions) {
  auto of_probe = [&](uint32_t probe) -> uint64_t {
    return probe < meta.probe_costs_ns.size() ? meta.probe_costs_ns[probe] : 0;
  };
  std::vector<uint64_t> out;
  out.reserve(functions.functions.size());
  for (const auto& f : functions.functions) {
    uint64_t c = of_probe(f.entry_probe);
    if (!c) c = of_probe(f.return_probe);
    out.push_back(c ? c : meta.probe_cost_ns);
  }
  return out;
}

void resolve_by_caller(const ProbeFunctions& functions, AggregateOptions& options) {
  if (options.by_value != "caller") return;
  const auto selected = select_functions(functions.functions, options.filter);
  for (std::size_t i = 0; i < functions.functions.size(); ++i)
    if (selected[i])
      for (const ValueSpec& v : functions.functions[i].values)
        if (v.name == "caller") return;
  options.by_value.clear();
  options.by = GroupBy::Caller;
}

Result<ReportModel> build_report(const std::string& path, const AggregateOptions& options, CallObserver* calls) {
  UPROF_ASSIGN(DataFileReader reader, DataFileReader::open(path));
  ReportModel m;
  m.path = path;
  m.meta = reader.meta();
  m.probes = reader.probes();
  m.file_size = reader.file_size();
  m.functions = group_probes(m.probes);
  m.options = options;
  m.options.start_time = m.meta.start_monotonic_ns;
  m.probe_cost = probe_cost_by_function(m.meta, m.functions);
  if (m.options.compensate) {
    if (std::none_of(m.probe_cost.begin(), m.probe_cost.end(), [](uint64_t c) { return c != 0; }))
      return err("report: ", path, " holds no probe cost to compensate for (it was recorded with "
                 "--no-calibrate, or by a uprof before 'uprof bench'; record it again)");
    m.options.compensate_by_function = m.probe_cost;
    m.options.compensate_ns = 0;
    for (uint64_t c : m.probe_cost)
      if (c && (!m.options.compensate_ns || c < m.options.compensate_ns)) m.options.compensate_ns = c;
  }
  resolve_by_caller(m.functions, m.options);
  const bool stacks = std::any_of(m.probes.begin(), m.probes.end(), [](const ProbeInfo& p) { return p.stack; });
  m.offcpu = std::any_of(m.probes.begin(), m.probes.end(), [](const ProbeInfo& p) { return p.offcpu; });
  if (m.options.by == GroupBy::Caller && !stacks)
    return err("report: ", path, " holds no call stacks to tell callers apart (record it with -g)");
  UPROF_TRY(check_aggregate_options(m.functions, m.options));

  // When the file says what a hit costs, each call learns what the probe hits inside
  // it cost: the report notes a function whose time is mostly that, and --compensate
  // takes it off.
  std::span<const uint64_t> hit_costs;
  if (m.meta.probe_hit_costs_ns.size() == m.probes.size()) {
    hit_costs = m.meta.probe_hit_costs_ns;
    m.options.compensate_nested = m.options.compensate;
  }
  Aggregator agg(m.functions, m.options);
  if (calls) calls->begin(m);
  FrameSymbolizer names;
  std::optional<StackCollector> collector;
  if (stacks) collector.emplace();
  std::optional<ReportSink> wrapped;
  if (calls || stacks) wrapped.emplace(agg, calls, collector ? &*collector : nullptr, names, m.options, m.functions);
  EventSink& sink = wrapped ? static_cast<EventSink&>(*wrapped) : agg;
  EventLoop loop(m.functions, m.options.filter, m.options.start_time, sink, hit_costs);
  const ReadCounts read = read_events(reader, loop);
  m.events = read.events;
  m.samples = read.samples;
  m.lost = read.lost;
  m.first_time = read.first_time;
  m.last_time = read.last_time;
  m.trailer = reader.trailer();
  // The recorder's counters see drops that no PERF_RECORD_LOST reported.
  if (m.trailer) m.lost = std::max(m.lost, m.trailer->lost);
  m.problems = reader.problems();
  m.pairing = loop.pairing();
  m.groups = agg.groups();
  if (m.options.by == GroupBy::Caller) name_caller_groups(m.groups, names);
  if (collector) m.stacks = collector->finish(names);
  m.totals = agg.function_totals();
  m.selected.resize(m.functions.functions.size());
  for (std::size_t i = 0; i < m.selected.size(); i++) m.selected[i] = agg.selected(static_cast<uint32_t>(i));
  m.filtered_out = loop.filtered_out();
  return m;
}

}  // namespace uprof
