// uprof bench: what a probe hit costs on this kernel, per capture engine and class of
// first instruction; cached per kernel and boot for `uprof record` to store the figures
// of the engine it records with in its data files.
#include <boost/program_options.hpp>
#include <iostream>
#include <optional>

#include "command.h"
#include "uprof/calibrate/attach_bench.h"
#include "uprof/calibrate/table_check.h"
#include "uprof/calibrate/probe_bench.h"

namespace po = boost::program_options;

namespace uprof::cli {

// Long: a third of it is the options table and its help text; the rest wires them to
// run_probe_bench and the cache, in the order the help describes.
int cmd_bench(int argc, char** argv) {
  po::options_description opts(
      "usage: uprof bench [OPTIONS]\n\n"
      "Measures, on the running kernel, what uprof's probes add per hit: an entry probe, a return probe and\n"
      "both, for each class of first instruction the kernel treats differently (single-stepped, emulated,\n"
      "optimized) and each capture engine (bpf, perf), by recording functions inside uprof itself. Takes a\n"
      "minute or two (--quick: seconds); needs root. The result is cached per kernel and boot; 'uprof record'\n"
      "then stores the figures of the engine it records with in its data files, for the report's \"the probe\n"
      "dominates\" note and 'uprof report --compensate'.\n\n"
      "options");
  opts.add_options()("help,h", "show this help")("runs,r", po::value<int>()->default_value(3),
                                                  "runs; each figure is the median")(
      "quick", "one run with fewer calls (rough figures in seconds)")(
      "show", "print the cached figures for this kernel, measure nothing")(
      "engine", po::value<std::string>(), "bpf or perf: measure (or --show) that engine alone; default: both, or "
      "perf alone where the kernel does not run the BPF engine")(
      "no-cache", "do not write the cache")("verbose,v", "one line per recording")(
      "attach-cost", "measure instead what putting probes on and taking them off costs per probe, on each of the "
      "BPF engine's attach paths (multi-uprobe links, uprobe-PMU events), on a private copy of libc");
  po::options_description hidden;
  hidden.add_options()("run-target", po::value<std::vector<std::string>>()->multitoken(), "");
  po::options_description all;
  all.add(opts).add(hidden);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error("bench", e.what());
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  // The child side: `uprof bench --run-target CLASS N FILE`, recorded by the parent.
  if (vm.count("run-target")) {
    auto a = vm["run-target"].as<std::vector<std::string>>();
    if (a.size() != 3) return usage_error("bench", "--run-target CLASS N FILE");
    auto st = run_bench_target(a[0], std::stoull(a[1]), a[2]);
    return st ? 0 : fail(st.error().message);
  }
  std::optional<EngineKind> only;
  if (vm.count("engine")) {
    only = engine_kind_from_name(vm["engine"].as<std::string>());
    if (!only) return usage_error("bench", "--engine is bpf or perf");
  }
  std::string cache = probe_cost_cache_path();
  std::string read_from = cache;
  auto cached = load_cached_probe_costs(&read_from);
  if (vm.count("show")) {
    if (!cached || (only && !cached->engine(*only).any())) {
      std::string looked;
      for (const auto& p : probe_cost_read_paths(current_kernel().release, std::getenv("XDG_CACHE_HOME"),
                                                 std::getenv("HOME"), geteuid() == 0))
        looked += (looked.empty() ? "" : " or ") + p;
      return fail("bench: no " + (only ? std::string(to_string(*only)) + " engine " : std::string()) +
                  "figures for this kernel and boot in " + looked + " (run 'uprof bench')");
    }
    std::cout << render_probe_costs(*cached, only) << "(cached in " << read_from << ")\n";
    return 0;
  }

  if (vm.count("attach-cost")) {
    AttachBenchOptions a;
    a.runs = vm.count("quick") ? 1 : vm["runs"].as<int>();
    auto b = bench_attach(a);
    if (!b) return fail(b.error().message);
    std::cout << render_attach_bench(*b);
    return 0;
  }

  ProbeBenchOptions o;
  o.runs = vm["runs"].as<int>();
  if (vm.count("quick")) o.quick();
  if (only) o.engines = {*only};
  auto say = [](std::string_view line) { std::cerr << "uprof bench: " << line << "\n"; };
  o.note = say;
  if (vm.count("verbose")) o.progress = say;
  auto table = run_probe_bench(o);
  if (!table) return fail(table.error().message);
  std::cout << render_probe_costs(*table);
  // What was measured against what the classifier's table says this kernel does.
  if (TableCheck check = check_kernel_table(*table); !check.line.empty()) std::cout << check.line << "\n";
  if (!vm.count("no-cache")) {
    // Into what is cached: the figures of an engine (or class) not measured now stay.
    ProbeCostTable merged = cached.value_or(ProbeCostTable{});
    merge_probe_costs(merged, *table);
    auto st = save_probe_costs(merged, cache);
    if (!st) std::cerr << "uprof: warning: " << st.error().message << "\n";
    else std::cout << "(cached in " << cache << "; 'uprof record' stores the figures of its engine in its data files)\n";
  }
  return 0;
}

}  // namespace uprof::cli
