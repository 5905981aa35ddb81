#include "uprof/present/report_formats.h"

#include "uprof/model/string_value.h"

#include <sstream>

#include "uprof/present/json_writer.h"
#include "uprof/present/value_text.h"

namespace uprof {
namespace {

void histogram_json(JsonWriter& w, const std::vector<HistBucket>& buckets) {
  w.begin_array();
  for (const auto& b : buckets) {
    w.begin_object();
    w.field("lo_ns", b.lo);
    w.field("hi_ns", b.hi);
    w.field("count", b.count);
    w.end_object();
  }
  w.end_array();
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

}  // namespace

// Values in JSON: signed ones as numbers may exceed 2^53; keep them exact as
// numbers anyway (JSON has no limit) and let readers choose.
void value_json(JsonWriter& w, uint64_t v, const ValueSpec& s) {
  if (s.is_string()) w.value(recorded_strings().text(v).bytes);  // the bytes kept, without quotes
  else if (s.is_signed) w.value(static_cast<int64_t>(v));
  else w.value(v);
}

void recording_json(JsonWriter& w, const ReportModel& m) {
  w.begin_object();
  w.field("file", m.path);
  w.key("command");
  w.begin_array();
  for (const auto& a : m.meta.command) w.value(a);
  w.end_array();
  w.field("arch", arch_info(m.meta.arch).name);
  w.field("kernel", m.meta.kernel);
  w.field("hostname", m.meta.hostname);
  if (!m.meta.engine.empty()) w.field("engine", m.meta.engine);
  if (!m.meta.attach.empty()) w.field("attach", m.meta.attach);
  w.field("start_realtime_ns", m.meta.start_realtime_ns);
  w.field("duration_s", recording_seconds(m));
  w.field("samples", m.samples);
  w.field("lost", m.lost);
  w.field("cut_by_loss", m.pairing.cut_by_loss());
  w.field("complete", m.trailer.has_value());
  if (m.trailer) {
    uint64_t k = 0;
    for (auto& c : m.trailer->counts) k += c.kernel;
    w.field("kernel_count", k);
    w.field("exit_status", static_cast<int64_t>(m.trailer->exit_status));
  }
  w.field("probe_cost_ns", m.meta.probe_cost_ns);
  w.field("compensated_ns", m.options.compensate_ns);
  w.field("compensated_nested", m.options.compensate_nested);
  w.key("problems");
  w.begin_array();
  for (const auto& p : m.problems) w.value(p);
  w.end_array();
  w.end_object();
}

void latency_json(JsonWriter& w, const LatencyHistogram& h, const LinearHistogram* linear,
                  const std::function<bool(double)>& hidden) {
  w.begin_object();
  w.field("count", h.count());
  w.field("total", h.total());
  w.field("mean", h.mean());
  // null where --compensate took everything off the calls at that rank (below_compensation).
  auto pct = [&](const char* name, double p) {
    w.key(name);
    if (hidden && hidden(p)) w.null();
    else w.value(h.percentile(p));
  };
  pct("min", 0);
  pct("p50", 50);
  pct("p90", 90);
  pct("p99", 99);
  pct("p99_9", 99.9);
  pct("max", 100);
  w.field("relative_error", LatencyHistogram::kRelativeError);
  w.key("log2");
  histogram_json(w, h.log2_buckets());
  if (linear) {
    w.key("linear");
    w.begin_object();
    w.field("underflow", linear->underflow());
    w.field("overflow", linear->overflow());
    w.key("buckets");
    histogram_json(w, linear->buckets());
    w.end_object();
  }
  w.end_object();
}

namespace {

// record --off-cpu: a row's on and off-CPU time; null when its calls carried none.
void cpu_split_json(JsonWriter& w, const CpuSplit& s) {
  if (!s.recorded()) {
    w.null();
    return;
  }
  w.begin_object();
  w.field("calls", s.calls);
  w.field("on_cpu_ns", s.on_cpu_ns);
  w.field("off_cpu_ns", s.off_cpu_ns());
  w.field("runnable_ns", s.runnable_ns());
  w.field("blocked_ns", s.blocked_ns());
  w.key("off_cpu_by_kind_ns");
  w.begin_object();
  for (std::size_t k = 0; k < kOffCpuKinds; ++k) w.field(to_string(static_cast<OffCpuKind>(k)), s.off[k]);
  w.end_object();
  w.end_object();
}

// One group's captured values: name, count, min and max, the most frequent.
void group_values_json(JsonWriter& w, const GroupStats& g, const FunctionInfo& f, const TextReportOptions& o) {
  w.begin_array();
  for (std::size_t v = 0; v < g.values.size() && v < f.values.size(); v++) {
    const ValueStats& vs = g.values[v];
    const ValueSpec& spec = f.values[v];
    if (!has_value_stats(spec)) continue;
    w.begin_object();
    w.field("name", spec.name);
    w.field("return", v >= f.return_values_at);
    w.field("count", vs.count);
    if (vs.count && !spec.is_string()) {  // a string's id says nothing of its order
      w.key("min");
      value_json(w, vs.min, spec);
      w.key("max");
      value_json(w, vs.max, spec);
    }
    w.key("top");
    w.begin_array();
    for (const auto& e : vs.top.top(o.top_values)) {
      w.begin_object();
      w.key("value");
      value_json(w, e.value, spec);
      w.field("count", e.count);
      w.field("count_error", e.error);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
}

// One row of the "functions" array: a function, or one of its --by / per-thread groups.
void group_json(JsonWriter& w, const ReportModel& m, const GroupStats& g, const TextReportOptions& o) {
  const FunctionInfo& f = m.functions.functions[g.function];
  const auto& h = g.latency;
  w.begin_object();
  w.field("name", f.name);
  w.field("path", f.path);
  w.field("label", group_label(m, g));
  if (g.pid) w.field("pid", g.pid);
  if (g.tid) w.field("tid", g.tid);
  if (g.goroutine) w.field(g.goroutine_is_id ? "goroutine" : "g", g.goroutine);
  if (g.pid) w.field("comm", g.comm);
  if (g.has_by_value) {
    for (const auto& v : f.values)
      if (v.name == m.options.by_value) {
        w.key("by_value");
        value_json(w, g.by_value, v);
      }
  }
  w.field("paired", f.paired());
  w.field("calls", g.calls);
  w.field("probe_cost_ns", g.function < m.probe_cost.size() ? m.probe_cost[g.function] : 0);
  w.field("compensated_ns", m.options.compensate ? m.options.compensation_for(g.function) : 0);
  w.key("latency_ns");
  if (f.paired() && h.count()) {
    latency_json(w, h, g.linear ? &*g.linear : nullptr, [&](double p) { return g.compensation_hides(p); });
  } else {
    w.null();
  }
  w.key("unmatched");
  w.begin_object();
  for (std::size_t r = 0; r < kUnmatchedReasons; r++)
    w.field(to_string(static_cast<UnmatchedReason>(r)), g.unmatched[r]);
  w.end_object();
  w.field("cut_by_loss", g.cut_by_loss());
  w.field("below_compensation", g.below_compensation);
  w.field("nested_probe_ns", g.nested_probe_ns);
  if (m.options.by == GroupBy::Caller) {
    w.key("caller");
    if (g.has_caller) w.value(g.caller);
    else w.null();
  }
  if (m.offcpu) {
    w.key("cpu");
    cpu_split_json(w, g.cpu);
  }
  if (m.stacks && m.options.by == GroupBy::Function && m.options.by_value.empty()) {
    w.key("callers");
    w.begin_array();
    for (std::size_t i : m.stacks->callers_of(g.function)) {
      const CallerStats& c = m.stacks->callers[i];
      w.begin_object();
      w.field("caller", c.caller);
      w.field("calls", c.w.calls);
      w.field("total_ns", c.w.latency_ns);
      w.field("p50_ns", c.latency.percentile(50));
      w.field("p99_ns", c.latency.percentile(99));
      if (m.offcpu) {
        w.key("cpu");
        cpu_split_json(w, c.w.cpu);
      }
      w.end_object();
    }
    w.end_array();
  }
  w.key("values");
  group_values_json(w, g, f, o);
  w.end_object();
}

}  // namespace

std::string render_json_report(const ReportModel& m, const TextReportOptions& o) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", kReportSchema);
  w.key("recording");
  recording_json(w, m);

  w.key("functions");
  w.begin_array();
  for (std::size_t i : sorted_groups(m, o.sort)) group_json(w, m, m.groups[i], o);
  w.end_array();
  w.end_object();
  return w.take() + "\n";
}

std::string render_csv_report(const ReportModel& m, const TextReportOptions& o) {
  std::ostringstream os;
  // --compensate adds a column, so that a compensated table cannot pass for a raw one.
  bool comp = m.options.compensate_ns > 0;
  // So do --by caller (the caller's name) and record --off-cpu (each row's on and off-CPU
  // totals: empty cells for a row whose calls carried none).
  const bool by_caller = m.options.by == GroupBy::Caller;
  os << "function,label,pid,tid,calls,total_ns,mean_ns,min_ns,p50_ns,p90_ns,p99_ns,p99_9_ns,max_ns,unmatched,cut_by_loss"
     << (comp ? ",compensated_ns" : "") << (by_caller ? ",caller" : "")
     << (m.offcpu ? ",on_cpu_ns,off_cpu_ns,runnable_ns,blocked_ns" : "") << "\n";
  for (std::size_t i : sorted_groups(m, o.sort)) {
    const GroupStats& g = m.groups[i];
    const FunctionInfo& f = m.functions.functions[g.function];
    const auto& h = g.latency;
    os << csv_field(f.name) << "," << csv_field(group_label(m, g)) << "," << g.pid << "," << g.tid << "," << g.calls;
    if (f.paired() && h.count()) {
      // An empty cell where --compensate took everything off the calls at that rank.
      auto pct = [&](double p) { return g.compensation_hides(p) ? std::string() : std::to_string(h.percentile(p)); };
      os << "," << h.total() << "," << static_cast<uint64_t>(h.mean() + 0.5) << "," << pct(0) << "," << pct(50) << ","
         << pct(90) << "," << pct(99) << "," << pct(99.9) << "," << pct(100);
    } else {
      os << ",,,,,,,,";
    }
    os << "," << g.unmatched_total() << "," << g.cut_by_loss();
    if (comp) os << "," << m.options.compensation_for(g.function);
    if (by_caller) os << "," << (g.has_caller ? csv_field(g.caller) : std::string());
    if (m.offcpu) {
      if (g.cpu.recorded())
        os << "," << g.cpu.on_cpu_ns << "," << g.cpu.off_cpu_ns() << "," << g.cpu.runnable_ns() << "," << g.cpu.blocked_ns();
      else
        os << ",,,,";
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace uprof
