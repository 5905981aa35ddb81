// uprof bench: what a probe hit costs on this kernel, per class of first instruction;
// cached per kernel and boot for `uprof record` to store in its data files.
#include <boost/program_options.hpp>
#include <iostream>

#include "command.h"
#include "uprof/calibrate/probe_bench.h"

namespace po = boost::program_options;

namespace uprof::cli {

int cmd_bench(int argc, char** argv) {
  po::options_description opts(
      "usage: uprof bench [OPTIONS]\n\n"
      "Measures, on the running kernel, what uprof's probes add per hit: an entry probe, a return probe and\n"
      "both, for each class of first instruction the kernel treats differently (single-stepped, emulated,\n"
      "optimized), by recording functions inside uprof itself. Takes a few seconds; needs root. The result\n"
      "is cached per kernel and boot; 'uprof record' then stores the figure in its data files, for the\n"
      "report's \"the probe dominates\" note and 'uprof report --compensate'.\n\n"
      "options");
  opts.add_options()("help,h", "show this help")("runs,r", po::value<int>()->default_value(3),
                                                  "runs; each figure is the median")(
      "quick", "one run with fewer calls (a rough figure in about a second)")(
      "show", "print the cached figures for this kernel, measure nothing")(
      "no-cache", "do not write the cache")("verbose,v", "one line per recording");
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
  std::string cache = probe_cost_cache_path();
  if (vm.count("show")) {
    auto t = load_cached_probe_costs();
    if (!t) return fail("bench: no figures for this kernel and boot in " + cache + " (run 'uprof bench')");
    std::cout << render_probe_costs(*t) << "(cached in " << cache << ")\n";
    return 0;
  }

  ProbeBenchOptions o;
  o.runs = vm["runs"].as<int>();
  if (vm.count("quick")) o.quick();
  if (vm.count("verbose")) o.progress = [](std::string_view line) { std::cerr << "uprof bench: " << line << "\n"; };
  auto table = run_probe_bench(o);
  if (!table) return fail(table.error().message);
  std::cout << render_probe_costs(*table);
  if (!vm.count("no-cache")) {
    auto st = save_probe_costs(*table, cache);
    if (!st) std::cerr << "uprof: warning: " << st.error().message << "\n";
    else std::cout << "(cached in " << cache << "; 'uprof record' stores these figures in its data files)\n";
  }
  return 0;
}

}  // namespace uprof::cli
