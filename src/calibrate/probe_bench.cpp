#include "uprof/calibrate/probe_bench.h"
#include "uprof/util/self_exe.h"

#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "uprof/analyse/report_model.h"
#include "uprof/calibrate/bench_targets.h"
#include "uprof/engine/bpf/bpf_engine.h"
#include "uprof/record/engine_resolution.h"
#include "uprof/record/recording_session.h"
#include "uprof/util/hex.h"

namespace uprof {
namespace {

enum class Mode { Entry, Return, Both };
constexpr Mode kModes[] = {Mode::Entry, Mode::Return, Mode::Both};
constexpr std::string_view mode_name(Mode m) {
  return m == Mode::Entry ? "entry" : m == Mode::Return ? "return" : "entry+return";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct ChildResult {
  uint64_t calls = 0, cpu_ns = 0, wall_ns = 0;
};

Result<ChildResult> read_child_result(const std::string& path) {
  std::ifstream in(path);
  ChildResult r;
  std::string k1, k2, k3;
  if (!(in >> k1 >> r.calls >> k2 >> r.cpu_ns >> k3 >> r.wall_ns) || k1 != "calls" || k2 != "cpu_ns")
    return err("bench: ", path, ": the target child wrote no result");
  return r;
}

struct RunFigures {
  double per_hit_ns = 0;     // CPU added per hit
  uint64_t median_call_ns = 0;  // Both only
};

Result<RunFigures> record_once(const ProbeBenchOptions& o, const BenchTarget& t, EngineKind engine, Mode mode,
                               uint64_t calls, double unprobed_cpu_ns, int run) {
  std::string data = o.work_dir + "/" + std::string(t.short_name) + "-" + std::string(to_string(engine)) + "-" +
                     std::to_string(static_cast<int>(mode)) + ".data";
  std::string result = data + ".result";
  RecordRequest req;
  req.engine = engine_choice(engine);  // named: the figures are this engine's, never a fallback's
  // Every hit must be recorded: 40,002 samples of an entry + return run, ~4 MB with the
  // perf engine, filled faster than a drain thread starved on a loaded machine empties
  // perf's default 1 MiB per CPU (25,205 recorded, 14,797 lost, here at load 3.5). The
  // BPF engine's default ring for both: 8 MiB, per CPU with perf.
  req.ring_pages = kBpfDefaultRingPages;
  // By file offset, not by symbol: a stripped uprof has no symbols.
  UPROF_ASSIGN(CodeLocation at, locate_own_code(reinterpret_cast<const void*>(t.fn)));
  auto value = [](std::string text, ValueTarget what) {
    return ValueRequest{.text = std::move(text), .label = {}, .target = std::move(what), .type = {}};
  };
  ProbeSpec spec{.text = at.path + ":" + hex(at.file_offset), .object = at.path,
                 .what = RawOffset{at.file_offset}, .is_return = false, .values = {}};
  if (mode != Mode::Return) {
    ProbeSpec entry = spec;
    entry.values = {value("$arg1", ArgumentRef{1}), value("$arg2", ArgumentRef{2})};
    req.specs.push_back(std::move(entry));
  }
  if (mode != Mode::Entry) {
    ProbeSpec ret = spec;
    ret.text += "%return";
    ret.is_return = true;
    ret.values = {value("$retval", ReturnValueRef{})};
    req.specs.push_back(std::move(ret));
  }
  req.command = {o.self_exe, "bench", "--run-target", std::string(t.short_name), std::to_string(calls), result};
  req.output = data;
  req.plan.entry_only = mode == Mode::Entry;
  UPROF_ASSIGN(RecordingPlan plan, plan_recording(std::move(req)));
  UPROF_ASSIGN(RecordReport rep, run_session(plan, engine, ProbeCosts{}, SessionControl{}));
  if (rep.exit_status != 0) return err("bench: the target child exited with status ", rep.exit_status);
  if (rep.engine != to_string(engine))
    return err("bench: asked for the ", to_string(engine), " engine, recorded with ", rep.engine);
  UPROF_ASSIGN(ChildResult cr, read_child_result(result));
  uint64_t hits_per_call = mode == Mode::Both ? 2 : 1;
  uint64_t expected = (calls + 1) * hits_per_call;  // + the warm-up call
  if (rep.samples != expected || rep.lost)
    return err("bench: ", t.symbol, " ", mode_name(mode), " (", to_string(engine), " engine): recorded ", rep.samples,
               " samples, ", rep.lost, " lost; expected ", expected);
  RunFigures f;
  f.per_hit_ns = (static_cast<double>(cr.cpu_ns) - unprobed_cpu_ns) / static_cast<double>(calls * hits_per_call);
  if (mode == Mode::Both) {
    UPROF_ASSIGN(ReportModel m, build_report(data, AggregateOptions{}));
    for (const auto& g : m.groups)
      if (g.latency.count()) f.median_call_ns = g.latency.percentile(50);
  }
  if (o.progress) {
    char line[200];
    std::snprintf(line, sizeof line, "run %d  %-5s %-4s %-13s %7.0f ns/hit%s", run + 1,
                  std::string(t.short_name).c_str(), std::string(to_string(engine)).c_str(),
                  std::string(mode_name(mode)).c_str(), f.per_hit_ns,
                  mode == Mode::Both ? (", call measured as " + std::to_string(f.median_call_ns) + " ns").c_str() : "");
    o.progress(line);
  }
  std::filesystem::remove(data);
  std::filesystem::remove(result);
  return f;
}

}  // namespace

Status run_bench_target(std::string_view short_name, uint64_t calls, const std::string& result_path) {
  const BenchTarget* t = find_bench_target(short_name);
  if (!t) return err("bench: no target '", short_name, "' in this build");
  LoopTiming lt = run_target_loop(*t, calls);
  std::ofstream out(result_path, std::ios::trunc);
  out << "calls " << lt.calls << " cpu_ns " << lt.cpu_ns << " wall_ns " << lt.wall_ns << " sum " << lt.sum << "\n";
  if (!out.flush()) return err("bench: cannot write ", result_path);
  return ok();
}

Result<BenchEngines> bench_engines(std::span<const EngineKind> wanted, const Status& bpf_supported) {
  auto asked = [&](EngineKind e) { return std::find(wanted.begin(), wanted.end(), e) != wanted.end(); };
  BenchEngines out;
  if (wanted.empty()) {
    if (bpf_supported) out.engines = {EngineKind::Bpf, EngineKind::Perf};
    else {
      out.engines = {EngineKind::Perf};
      out.note = "not measuring the bpf engine: " + bpf_supported.error().message;
    }
    return out;
  }
  if (asked(EngineKind::Bpf) && !bpf_supported) return err("bench: the bpf engine: ", bpf_supported.error().message);
  for (EngineKind e : kEngineKindList)
    if (asked(e)) out.engines.push_back(e);
  return out;
}

namespace {

// One target's per-hit costs on one engine, a list per mode (entry, return, both),
// and the median call as the probed program saw it.
struct BenchSamples {
  std::vector<double> per_hit[3];
  std::vector<double> inside;
};
using WantedClass = std::function<bool(InsnClass)>;

// Runs every wanted target `o.runs` times, unprobed here and under each engine's probes
// in a child; samples[target][engine] gets the figures, `unprobed` the bare loop's.
Status measure_targets(const ProbeBenchOptions& o, const BenchEngines& engines, const WantedClass& wanted,
                       std::vector<std::array<BenchSamples, kEngineKinds>>& samples, std::vector<double>& unprobed) {
  for (int run = 0; run < o.runs; run++) {
    for (std::size_t i = 0; i < bench_targets().size(); i++) {
      const BenchTarget& t = bench_targets()[i];
      if (!wanted(t.cls)) continue;
      uint64_t calls = t.cls == InsnClass::SingleStepped ? o.calls_step : o.calls_fast;
      // The same loop without probes, in this process: its CPU time is what the child's
      // would be (the loop is a few ns per call; the probes add microseconds).
      LoopTiming base = run_target_loop(t, calls);
      double base_cpu = static_cast<double>(base.cpu_ns);
      unprobed.push_back(base_cpu / static_cast<double>(calls));
      for (EngineKind e : engines.engines) {
        BenchSamples& s = samples[i][static_cast<std::size_t>(e)];
        for (std::size_t m = 0; m < 3; m++) {
          UPROF_ASSIGN(RunFigures f, record_once(o, t, e, kModes[m], calls, base_cpu, run));
          s.per_hit[m].push_back(f.per_hit_ns);
          if (kModes[m] == Mode::Both) s.inside.push_back(static_cast<double>(f.median_call_ns));
        }
      }
    }
  }
  return ok();
}

// The table's rows: per target class and engine, the medians of its samples.
void fill_costs(ProbeCostTable& table, const BenchEngines& engines, const WantedClass& wanted,
                const std::vector<std::array<BenchSamples, kEngineKinds>>& samples) {
  for (std::size_t i = 0; i < bench_targets().size(); i++) {
    const BenchTarget& t = bench_targets()[i];
    if (!wanted(t.cls)) continue;
    std::vector<uint8_t> code(reinterpret_cast<const uint8_t*>(t.fn), reinterpret_cast<const uint8_t*>(t.fn) + 16);
    std::string insn = classify_insn(table.arch, code, reinterpret_cast<uintptr_t>(t.fn)).insn;
    for (EngineKind e : engines.engines) {
      const BenchSamples& s = samples[i][static_cast<std::size_t>(e)];
      ClassCost& cc = table.of(e, t.cls);
      cc.measured = true;
      cc.insn = insn;
      cc.entry_ns = std::max(0.0, median(s.per_hit[0]));
      cc.return_ns = std::max(0.0, median(s.per_hit[1]));
      cc.call_ns = std::max(0.0, 2 * median(s.per_hit[2]));
      cc.inside_ns = static_cast<uint64_t>(median(s.inside) + 0.5);
    }
  }
}

}  // namespace

Result<ProbeCostTable> run_probe_bench(const ProbeBenchOptions& opts) {
  if (bench_targets().empty()) return err("bench: this build has no target functions for its architecture");
  if (opts.runs < 1) return err("bench: at least one run");
  ProbeBenchOptions o = opts;
  // The kernel is asked about BPF only when it matters: perf alone needs no answer.
  const bool perf_only = !o.engines.empty() && std::all_of(o.engines.begin(), o.engines.end(),
                                                           [](EngineKind e) { return e == EngineKind::Perf; });
  UPROF_ASSIGN(BenchEngines engines, bench_engines(o.engines, perf_only ? ok() : bpf_engine_supported()));
  if (!engines.note.empty()) {
    if (o.note) o.note(engines.note);
    else if (o.progress) o.progress(engines.note);
  }
  std::error_code ec;
  if (o.self_exe.empty()) {
    o.self_exe = self_exe();
  }
  // The work directory goes when this returns, whatever it returns.
  struct RemoveDir {
    std::string path;
    ~RemoveDir() {
      std::error_code e;
      if (!path.empty()) std::filesystem::remove_all(path, e);
    }
  } own_dir;
  if (o.work_dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path(ec) / "uprof-bench-XXXXXX").string();
    if (ec || !mkdtemp(tmpl.data())) return err("bench: cannot make a directory like ", tmpl);
    o.work_dir = own_dir.path = tmpl;
  }
  auto wanted = [&](InsnClass c) {
    return o.classes.empty() || std::find(o.classes.begin(), o.classes.end(), c) != o.classes.end();
  };
  ProbeCostTable table;
  KernelIdentity k = current_kernel();
  table.kernel = k.release;
  table.boot_id = k.boot_id;
  table.arch = host_arch();

  // [target][engine]
  std::vector<std::array<BenchSamples, kEngineKinds>> samples(bench_targets().size());
  std::vector<double> unprobed;
  UPROF_TRY(measure_targets(o, engines, wanted, samples, unprobed));
  table.unprobed_ns = median(unprobed);
  fill_costs(table, engines, wanted, samples);
  return table;
}

RecordCalibration calibrate_for_record(std::span<const InsnClass> needed, EngineKind engine, bool measure,
                                       const std::function<void(std::span<const InsnClass>)>& before_measuring) {
  RecordCalibration out;
  out.table = load_cached_probe_costs();
  if (!measure) return out;
  std::vector<InsnClass> missing;
  for (InsnClass c : unmeasured_classes(out.table ? &*out.table : nullptr, engine, needed))
    for (const BenchTarget& t : bench_targets())
      if (t.cls == c) missing.push_back(c);
  if (missing.empty()) return out;
  if (before_measuring) before_measuring(missing);
  ProbeBenchOptions o;
  o.quick();
  o.classes = missing;
  o.engines = {engine};
  auto fresh = run_probe_bench(o);
  if (!fresh) {
    out.why = fresh.error().message;
    return out;
  }
  ProbeCostTable merged = out.table.value_or(ProbeCostTable{});
  merge_probe_costs(merged, *fresh);
  out.table = merged;
  if (auto st = save_probe_costs(merged, probe_cost_cache_path()); !st) out.why = st.error().message;
  return out;
}

}  // namespace uprof
