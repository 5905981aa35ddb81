// uprof record: run a program (or attach to one) with probes on, write uprof.data.
#include <signal.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <cstring>
#include <iostream>
#include <set>

#include "command.h"
#include "uprof/analyse/duration_format.h"
#include "uprof/calibrate/probe_bench.h"
#include "uprof/calibrate/probe_sites.h"
#include "uprof/drain/recording_session.h"

namespace po = boost::program_options;

namespace uprof::cli {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<pid_t> g_workload{-1};

// Ctrl-C in a terminal reaches the whole foreground group, the workload included.
// A signal sent to uprof alone (kill) is passed on, so the workload sees it too.
// The first stops recording and waits for the workload to end; a second one means
// "stop now": the workload is killed, and the file is still finished and readable.
void on_stop_signal(int sig, siginfo_t* info, void*) {
  bool again = g_stop.exchange(true);
  pid_t w = g_workload.load();
  if (w <= 0) return;
  if (again) ::kill(w, SIGKILL);
  else if (info && (info->si_code == SI_USER || info->si_code == SI_QUEUE)) ::kill(w, sig);
}

void install_handlers() {
  struct sigaction sa {};
  sa.sa_sigaction = on_stop_signal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// Splits "uprof record [OPTIONS] [--] CMD ARGS..." at the workload's command:
// after "--", or at the first word that is neither an option nor an option's value.
std::pair<std::vector<std::string>, std::vector<std::string>> split_command(int argc, char** argv) {
  static const std::set<std::string> takes_value{"-e", "--event", "-o", "--output", "-p", "--pid", "--duration",
                                                 "-m", "--mmap-pages", "--debug-dir", "--backend"};
  std::vector<std::string> own{argv[0]}, cmd;
  int i = 1;
  for (; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--") {
      i++;
      break;
    }
    if (a.empty() || a[0] != '-') break;
    own.push_back(a);
    if (takes_value.count(a) && i + 1 < argc) own.push_back(argv[++i]);
  }
  for (; i < argc; i++) cmd.push_back(argv[i]);
  return {own, cmd};
}

}  // namespace

int cmd_record(int argc, char** argv) {
  po::options_description opts(
      "usage: uprof record -e SPEC [-e SPEC...] [OPTIONS] [--] CMD [ARGS...]\n"
      "       uprof record -e SPEC -p PID [--duration SEC]\n\n"
      "Runs CMD (or attaches to PID) with an entry and a return probe on every function the specs name,\n"
      "and writes every hit to a data file for 'uprof report'.\n\n"
      "SPEC: FUNC[%return] [VALUE...], e.g. 'add', 'add(a)', 'add %di %si $retval', 'libc:malloc', 'sql*', BIN:0xOFF\n"
      "VALUE: a parameter's name, $params, $retval (typed by DWARF when there is debug info),\n"
      "       %REG, $argN, $stackN, $comm; NAME=VALUE to name it. With no VALUE, every parameter and the\n"
      "       return value DWARF describes are captured\n\n"
      "options");
  opts.add_options()("help,h", "show this help")(
      "event,e", po::value<std::vector<std::string>>()->composing(), "probe spec; repeatable")(
      "output,o", po::value<std::string>()->default_value("uprof.data"), "data file to write")(
      "pid,p", po::value<int>(), "attach to a running process and all its threads")(
      "all,a", "every process that runs the probed code (specs name their file: BIN:FUNC)")(
      "duration", po::value<double>(), "stop after SEC seconds")(
      "mmap-pages,m", po::value<std::size_t>()->default_value(256), "ring buffer pages per CPU (a power of two)")(
      "entry-only", "no return probes")("no-args", "capture no arguments or return values by default (calls and latency only)")("return-only", "no entry probes")(
      "backend", po::value<std::string>()->default_value("tracefs"),
      "tracefs (follows threads and children) or pmu (the uprobe PMU; follows only the exec'd main thread)")(
      "debug-dir", po::value<std::vector<std::string>>()->composing(), "where to look for separate debug files")(
      "no-calibrate", "when 'uprof bench' has no figure for a probed instruction's class on this kernel and boot, "
      "do not measure one (about half a second a class, once per boot): the report then has no "
      "'probe dominates' note and no --compensate for it");

  auto [own, cmd] = split_command(argc, argv);
  std::vector<const char*> own_argv;
  for (auto& s : own) own_argv.push_back(s.c_str());
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(static_cast<int>(own_argv.size()), own_argv.data(), opts), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error("record", e.what());
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }

  RecordRequest req;
  if (vm.count("event")) req.specs = vm["event"].as<std::vector<std::string>>();
  if (req.specs.empty()) return usage_error("record", "no probe given (-e SPEC)");
  req.command = cmd;
  if (vm.count("pid")) {
    req.attach_pid = vm["pid"].as<int>();
    if (req.attach_pid <= 0) return usage_error("record", "-p takes a process id greater than 0");
    if (!cmd.empty()) return usage_error("record", "give either -p PID or a command, not both");
  } else if (vm.count("all")) {
    req.system_wide = true;
    if (cmd.empty() && !vm.count("duration"))
      std::cerr << "uprof: recording every process until Ctrl-C\n";
  } else if (cmd.empty()) {
    return usage_error("record", "no command to run and no -p PID");
  }
  req.output = vm["output"].as<std::string>();
  req.ring_pages = vm["mmap-pages"].as<std::size_t>();
  if (req.ring_pages == 0 || (req.ring_pages & (req.ring_pages - 1)))
    return usage_error("record", "--mmap-pages must be a power of two");
  if (vm.count("duration")) req.duration_s = vm["duration"].as<double>();
  req.plan.entry_only = vm.count("entry-only") > 0;
  req.plan.return_only = vm.count("return-only") > 0;
  req.capture_args = vm.count("no-args") == 0;
  req.on_note = [](const std::string& note) { std::cerr << "uprof: " << note << "\n"; };
  std::string backend = vm["backend"].as<std::string>();
  if (backend == "pmu") req.backend = ProbeBackend::UprobePmu;
  else if (backend == "tracefs") req.backend = ProbeBackend::Tracefs;
  else return usage_error("record", "--backend is tracefs or pmu");
  if (vm.count("debug-dir")) req.resolve.debug.debug_dirs = vm["debug-dir"].as<std::vector<std::string>>();

  // One line before the run: what the kernel does at each probe (what a hit will cost),
  // and the cost measured for this kernel, which goes into the file: `uprof bench`'s,
  // or measured now, quickly, for the classes it has no figure for (once per boot).
  const bool measure = !vm.count("no-calibrate") && !req.plan.entry_only && !req.plan.return_only;
  req.on_planned = [measure](const std::vector<ProbeInfo>& probes) -> PlannedProbeCosts {
    auto sites = classify_probe_sites(probes, host_arch());
    std::vector<InsnClass> classes;
    for (const auto& site : sites) classes.push_back(site.info.cls);
    auto cal = calibrate_for_record(classes, measure, [](std::span<const InsnClass> missing) {
      std::string names;
      for (InsnClass c : missing) names += (names.empty() ? "" : ", ") + std::string(to_string(c));
      std::cerr << "uprof: measuring what a probe costs on this kernel (" << names
                << "; once per boot, cached; 'uprof bench' measures longer)\n";
    });
    if (!cal.why.empty()) std::cerr << "uprof: warning: " << cal.why << "\n";
    const auto& costs = cal.table;
    PlannedProbeCosts out;
    if (costs) {
      out.inside_ns = probe_costs_for(*costs, probes, sites);
      out.hit_ns = probe_hit_costs_for(*costs, probes, sites);
      add_site_costs(sites, probes, out.hit_ns);
    }
    std::string line = render_probe_sites(sites);
    if (!line.empty()) std::cerr << line << "\n";
    return out;
  };
  install_handlers();
  auto rep = run_recording(req, g_stop, g_workload);
  if (!rep) {
    fail(rep.error().message);
    return rep.error().exit_status;
  }
  std::cerr << summary_line(*rep) << "\n";
  if (!rep->accounted())
    std::cerr << "uprof: WARNING: recorded " << rep->recorded_total() << " + lost " << rep->lost
              << " != kernel count " << rep->kernel_total() << ": events are missing or duplicated\n";
  if (rep->lost)
    std::cerr << "uprof: " << rep->lost << " samples were dropped because a ring buffer was full: "
              << "try a larger -m (now " << req.ring_pages << " pages per CPU) or fewer values\n";
  if (rep->missing_values)
    std::cerr << "uprof: " << rep->missing_values << " captured values were unavailable (stored as 0)\n";
  if (rep->late) std::cerr << "uprof: " << rep->late << " events arrived out of time order\n";
  if (rep->term_signal) {
    const char* abbrev = sigabbrev_np(rep->term_signal);
    std::string sig = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(rep->term_signal);
    std::cerr << "uprof: the workload was killed by " << sig << " (exit status " << rep->exit_status << ")\n";
  }
  return rep->exit_status;
}

}  // namespace uprof::cli
