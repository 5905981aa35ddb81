// uprof record: run a program (or attach to one) with probes on, write uprof.data.
#include <signal.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <variant>

#include "command.h"
#include "uprof/analyse/duration_format.h"
#include "uprof/attach/privilege.h"
#include "uprof/calibrate/record_costs.h"
#include "uprof/engine/bpf/bpf_attach.h"
#include "uprof/engine/engine_table.h"
#include "uprof/engine/perf/perf_engine.h"
#include "uprof/present/download_progress.h"
#include "uprof/present/interval_text.h"
#include "uprof/record/call_stacks.h"
#include "uprof/record/engine_resolution.h"
#include "uprof/record/private_libraries.h"
#include "uprof/record/probe_table.h"
#include "uprof/record/recording_plan.h"
#include "uprof/record/recording_session.h"
#include "uprof/record/value_binding.h"
#include "uprof/util/byte_size.h"

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
                                                 "-m", "--mmap-pages", "--debug-dir", "--backend", "--engine", "--attach", "--private-libs",
                                                 "--string-size", "--pair-by", "--interval", "--buffer-size",
                                                 "--call-graph", "--stack-min"};
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

po::options_description record_options() {
  po::options_description opts(
      "usage: uprof record -e SPEC [-e SPEC...] [OPTIONS] [--] CMD [ARGS...]\n"
      "       uprof record -e SPEC -p PID [--duration SEC]\n\n"
      "Runs CMD (or attaches to PID) with an entry and a return probe on every function the specs name,\n"
      "and writes every hit to a data file for 'uprof report'.\n\n"
      "SPEC: FUNC[%return] [VALUE...], e.g. 'add', 'add(a)', 'add %di %si $retval', 'libc:malloc', 'sql*', BIN:0xOFF,\n"
      "      usdt:[BIN:]PROVIDER:NAME (a USDT probe: 'usdt:python:gc__*')\n"
      "VALUE: a parameter's name, p->member, $params, $retval (typed by DWARF when there is debug info),\n"
      "       %REG, $argN, $stackN, $comm, @GLOBAL, +OFF(VALUE), VALUE:string; NAME=VALUE to name it. With no\n"
      "       VALUE, every parameter and the return value DWARF describes (a USDT probe: its arguments)\n\n"
      "options");
  opts.add_options()("help,h", "show this help")(
      "event,e", po::value<std::vector<std::string>>()->composing(), "probe spec; repeatable")(
      "output,o", po::value<std::string>()->default_value("uprof.data"), "data file to write")(
      "pid,p", po::value<int>(), "attach to a running process and all its threads")(
      "all,a", "every process that runs the probed code (specs name their file: BIN:FUNC)")(
      "duration", po::value<double>(), "stop after SEC seconds")(
      "exit-with-command", "end the recording when the command's first process exits (as perf record does), not "
      "when the last process it started has (a daemon's child)")(
      "interval", po::value<double>(),
      "every SEC seconds while recording, print per function the calls, p50, p99 and max latency of that "
      "interval and the events lost (stderr); the data file is still whole")(
      "interval-hist", "with --interval: each function's log2 latency histogram of the interval too")(
      "mmap-pages,m", po::value<std::size_t>()->default_value(256),
      "ring buffer pages, a power of two: per CPU with --engine perf (default 256); the BPF engine's one "
      "ring for all CPUs (default 2048)")(
      "buffer-size", po::value<std::string>()->default_value("32M"),
      "the most memory uprof holds between the ring buffer and the data file (B, K, M or G, like -m in perf), "
      "at least 1M: when the file cannot keep up, the ring fills and the kernel drops new events and counts "
      "them (\"N lost\"); uprof never queues more")(
      "call-graph", po::value<std::string>(),
      "record each call's user call stack: dwarf[,SIZE] (the registers and SIZE bytes of the user stack, default "
      "8192, copied at the hit and unwound with the files' call frame information, as perf's --call-graph dwarf: "
      "right without frame pointers and through libraries) or fp (the same copy, unwound by frame pointers)")(
      ",g", "the same as --call-graph dwarf")(
      "stack-min", po::value<std::string>(),
      "with -g: keep the stack only of calls that took at least this long (250us, 2ms): decided at the return, in "
      "the kernel with the BPF engine, where the stack is taken (its caller chain is the entry's); the perf engine "
      "copies every stack and drops the short calls' in uprof")(
      "string-size", po::value<unsigned>()->default_value(64),
      "the most bytes a string value keeps, 1 to 1024 (a longer string is cut, and shown cut)")(
      "pair-by", po::value<std::string>(),
      "the USDT arguments that tie a start probe to its done probe, e.g. arg1 or arg1,arg2 (default: none, "
      "and arg1,arg2 for python's function__entry/function__return: the file and the function)")(
      "off-cpu", "split each call's time into on-CPU and off-CPU time, the latter by kind: runnable (waiting for "
      "a CPU), lock, io, sleep, another system call, or other (a page fault); the BPF engine follows the "
      "scheduler only for threads inside a probed call (Linux 5.18+)")(
      "entry-only", "no return probes")("no-args", "capture no arguments or return values by default (calls and latency only)")("return-only", "no entry probes")(
      "engine", po::value<std::string>()->default_value("auto"),
      "bpf (a BPF program on each uprobe writes into one BPF ring buffer; follows threads and children), "
      "perf (perf samples of registers; the fallback), or auto: bpf where the kernel runs it")(
      "backend", po::value<std::string>()->default_value("tracefs"),
      "the perf engine's probes: tracefs (follows threads and children) or pmu (the uprobe PMU; follows only "
      "the exec'd main thread); implies --engine perf")(
      "attach", po::value<std::string>()->default_value("auto"),
      "how the BPF engine's probes go on: links (multi-uprobe links, one per file: thousands of probes in a "
      "fraction of a second; with uprobe sessions, Linux 6.13+, processes uprof does not follow keep their "
      "return addresses), events (one uprobe-PMU event per probe: ~5 ms to open and ~100 ms to close each), "
      "or auto: links where the kernel has them (Linux 6.6+)")(
      "debug-dir", po::value<std::vector<std::string>>()->composing(),
      "where to look for separate debug files (default /usr/lib/debug; see 'uprof probe --help'); "
      "then $DEBUGINFOD_URLS, when set")(
      "exact-site", "probe each function at its symbol; by default an entry probe moves past first instructions "
      "the kernel single-steps (endbr64, test, mov...) to one it emulates, when that cannot change what it sees")(
      "force", "take FUNC+OFF as given, even where OFF is not an instruction boundary (data in text)")(
      "unsafe-returns", "return probes also where a C++ exception could unwind through (C++ code, and under the C++ "
      "runtime C code, that calls out) and in a process that switches stacks (swapcontext): by default those "
      "functions are measured at their exits, a plain probe on each ret or tail-call jump, with the same calls "
      "and latency (see README). Never on the entry point, code that never returns, or the "
      "setjmp/swapcontext/longjmp family")(
      "no-calibrate", "when 'uprof bench' has no figure for a probed instruction's class on this kernel and boot, "
      "do not measure one (about half a second a class, once per boot): the report then has no "
      "'probe dominates' note and no --compensate for it");
  return opts;
}

// The request the options describe, or the exit status of a usage error or a spec that
// does not parse (already said on stderr).
std::variant<RecordRequest, int> read_request(const po::variables_map& vm, const std::vector<std::string>& cmd) {
  RecordRequest req;
  if (!vm.count("event")) return usage_error("record", "no probe given (-e SPEC)");
  for (const auto& text : vm["event"].as<std::vector<std::string>>()) {
    auto spec = parse_probe_spec(text);
    if (!spec) return fail(spec.error().message);
    req.specs.push_back(std::move(*spec));
  }
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
  req.ring_pages = vm["mmap-pages"].defaulted() ? 0 : vm["mmap-pages"].as<std::size_t>();
  if (!vm["mmap-pages"].defaulted() && (req.ring_pages == 0 || (req.ring_pages & (req.ring_pages - 1))))
    return usage_error("record", "--mmap-pages must be a power of two");
  auto budget = parse_byte_size(vm["buffer-size"].as<std::string>());
  if (!budget || *budget < (1u << 20))
    return usage_error("record", "--buffer-size is a size of at least 1M, e.g. 64M (B, K, M or G)");
  req.drain_budget = static_cast<std::size_t>(*budget);
  if (vm.count("duration")) req.duration_s = vm["duration"].as<double>();
  req.exit_with_command = vm.count("exit-with-command") > 0;
  if (vm.count("interval")) {
    req.interval_s = vm["interval"].as<double>();
    if (!(*req.interval_s >= 0.01 && *req.interval_s <= 86400))
      return usage_error("record", "--interval takes 0.01 to 86400 seconds");
  }
  req.interval_hist = vm.count("interval-hist") > 0;
  if (req.interval_hist && !req.interval_s) return usage_error("record", "--interval-hist goes with --interval SEC");
  req.plan.entry_only = vm.count("entry-only") > 0;
  req.plan.return_only = vm.count("return-only") > 0;
  req.capture_args = vm.count("no-args") == 0;
  auto choice = parse_engine_choice(vm["engine"].as<std::string>(), !vm["backend"].defaulted());
  if (!choice) return usage_error("record", choice.error().message);
  req.engine = *choice;
  std::string backend = vm["backend"].as<std::string>();
  if (backend == "pmu") req.backend = ProbeBackend::UprobePmu;
  else if (backend == "tracefs") req.backend = ProbeBackend::Tracefs;
  else return usage_error("record", "--backend is tracefs or pmu");
  auto attach = bpf_attach_from_name(vm["attach"].as<std::string>());
  if (!attach) return usage_error("record", "--attach is auto, links or events");
  if (*attach != BpfAttach::Auto && req.engine == EngineChoice::Perf)
    return usage_error("record", "--attach is the BPF engine's (the perf engine's is --backend)");
  req.bpf_attach = *attach;
  req.offcpu = vm.count("off-cpu") > 0;
  if (req.offcpu && req.engine == EngineChoice::Perf) return usage_error("record", kPerfNoOffCpu);
  req.resolve.debug.debuginfod = true;
  if (vm.count("debug-dir")) req.resolve.debug.debug_dirs = vm["debug-dir"].as<std::vector<std::string>>();
  req.resolve.force_offset = vm.count("force") > 0;
  req.exact_site = vm.count("exact-site") > 0;
  req.plan.unsafe_returns = vm.count("unsafe-returns") > 0;
  const unsigned string_size = vm["string-size"].as<unsigned>();
  if (string_size < 1 || string_size > kMaxStringMax) return usage_error("record", "--string-size is 1 to 1024");
  req.plan.string_max = static_cast<uint16_t>(string_size);
  if (vm.count("call-graph")) {
    auto call_graph = parse_call_graph(vm["call-graph"].as<std::string>());
    if (!call_graph) return usage_error("record", call_graph.error().message);
    req.call_graph = *call_graph;
  } else if (vm.count("-g")) {  // a short-only option's key
    req.call_graph = CallGraphPlan{.on = true};
  }
  if (vm.count("stack-min")) {
    if (!req.call_graph.on) return usage_error("record", "--stack-min goes with -g or --call-graph");
    auto min = parse_duration(vm["stack-min"].as<std::string>());
    if (!min || *min == 0)
      return usage_error("record", "--stack-min takes a duration above 0, such as 250us or 2ms, not '" +
                                       vm["stack-min"].as<std::string>() + "'");
    req.call_graph.stack_min_ns = *min;
  }
  if (vm.count("pair-by")) {
    auto keys = parse_pair_by(vm["pair-by"].as<std::string>());
    if (!keys) return usage_error("record", keys.error().message);
    req.plan.pair_by = std::move(*keys);
  }
  return req;
}

// After the run: the summary, and a line for each thing that went missing.
int report_outcome(const RecordReport& rep, std::size_t ring_pages, EngineKind engine) {
  // A data file cut short by a full disk: its line instead of the counts it cannot vouch for.
  if (!rep.write_failure.empty()) std::cerr << rep.write_failure << "\n";
  else std::cerr << summary_line(rep) << "\n";
  if (rep.write_failure.empty() && !rep.accounted())
    std::cerr << "uprof: WARNING: recorded " << rep.recorded_total() << " + lost " << rep.lost
              << " != kernel count " << rep.kernel_total() << ": events are missing or duplicated\n";
  if (rep.lost)
    std::cerr << "uprof: " << rep.lost << " samples were dropped because a ring buffer was full: "
              << "try a larger -m (now "
              << (ring_pages ? std::to_string(ring_pages) : "the default")
              << engine_row(engine).ring_pages << ") or fewer values\n";
  if (rep.missing_values)
    std::cerr << "uprof: " << rep.missing_values
              << " captured values could not be read at their probe (the reports show <unreadable> or <unavailable>)\n";
  if (rep.unwinding.empty)
    std::cerr << "uprof: " << rep.unwinding.empty << " of " << rep.unwinding.stacks
              << " call stacks have no frame: their process exited before uprof read its mappings "
                 "(/proc/PID/maps), which a process that runs for less than about a millisecond can\n";
  if (rep.late) std::cerr << "uprof: " << rep.late << " events arrived out of time order\n";
  if (rep.task_dropped)
    std::cerr << "uprof: " << rep.task_dropped << " fork, exit or thread-name records were dropped (ring full): "
              << "threads and children may be named or ended wrongly in the report\n";
  if (rep.term_signal) {
    const char* abbrev = sigabbrev_np(rep.term_signal);
    std::string sig = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(rep.term_signal);
    std::cerr << "uprof: the workload was killed by " << sig << " (exit status " << rep.exit_status << ")\n";
  }
  return rep.exit_status;
}

}  // namespace

int cmd_record(int argc, char** argv) {
  const po::options_description opts = record_options();
  // Set by the first uprof when it runs itself again on private copies of its libraries.
  po::options_description hidden;
  hidden.add_options()("private-libs", po::value<std::string>(), "");
  po::options_description all;
  all.add(opts).add(hidden);
  auto [own, cmd] = split_command(argc, argv);
  std::vector<const char*> own_argv;
  for (auto& s : own) own_argv.push_back(s.c_str());
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(static_cast<int>(own_argv.size()), own_argv.data(), all), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error("record", e.what());
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }

  if (vm.count("private-libs")) {
    // The copies are mapped: their directory can go now (record/private_libraries.h).
    std::error_code ec;
    std::filesystem::remove_all(vm["private-libs"].as<std::string>(), ec);
  }
  auto request = read_request(vm, cmd);
  if (auto* status = std::get_if<int>(&request)) return *status;
  RecordRequest req = std::move(std::get<RecordRequest>(request));
  DownloadProgress downloads = DownloadProgress::on_stderr();  // debuginfod, for stripped files
  req.resolve.debug.listener = &downloads;
  auto note = [](const std::string& line) { std::cerr << "uprof: " << line << "\n"; };
  const bool measure = !vm.count("no-calibrate") && !req.plan.entry_only && !req.plan.return_only;
  // Without the privilege no probe can go on: say so first, before -o, the specs, the
  // engine's choice or a calibration that cannot run.
  if (auto st = check_probe_privilege("record"); !st) return fail(st.error().message);
  // Probes on a library uprof maps itself would trap in uprof too: run again on copies.
  if (!vm.count("private-libs")) {
    std::vector<std::string> objects;
    for (const auto& spec : req.specs) objects.push_back(spec.object);
    if (auto own_files = own_files_named(objects, read_maps(0)); !own_files.empty()) {
      auto st = run_on_private_libraries(own_files, std::vector<std::string>(argv, argv + argc));  // on failure only
      note("warning: uprof maps " + own_files.front().path + " itself, and each of its own calls there will "
           "take the probe's trap (" + st.error().message + ")");
    }
  }
  auto plan = plan_recording(std::move(req));
  if (!plan) {
    fail(plan.error().message);
    return plan.error().exit_status;  // 127 or 126 for a command that cannot be run
  }
  for (const auto& line : plan->notes) note(line);
  // The engine first, decided here once: the probe costs below are that engine's, and
  // the session opens the one decided here.
  auto engine_used = resolve_engine(plan->request);
  if (!engine_used) return fail(engine_used.error().message);
  if (!engine_used->note.empty()) note(engine_used->note);
  // auto fell back to perf (the note said why the BPF engine cannot run here).
  if (plan->request.offcpu && engine_used->engine == EngineKind::Perf) return fail(kPerfNoOffCpu);

  // One line before the run: what the kernel does at each probe (what a hit will cost),
  // and the cost measured for this kernel and engine, which goes into the file: `uprof bench`'s,
  // or measured now, quickly, for the classes it has no figure for (once per boot).
  const EngineKind recording_engine = engine_used->engine;
  auto announce = [recording_engine](std::span<const InsnClass> missing) {
    std::string names;
    for (InsnClass c : missing) names += (names.empty() ? "" : ", ") + std::string(to_string(c));
    std::cerr << "uprof: measuring what a probe costs on this kernel (" << names << ", "
              << to_string(recording_engine) << " engine; once per boot, cached; 'uprof bench' measures longer)\n";
  };
  RecordCosts costs = costs_for_recording(plan->probes, recording_engine, measure, announce, plan->moves);
  if (!costs.warning.empty()) std::cerr << "uprof: warning: " << costs.warning << "\n";
  if (!costs.sites_line.empty()) std::cerr << costs.sites_line << "\n";

  install_handlers();
  const IntervalTextOptions interval_text{.histograms = plan->request.interval_hist};
  auto on_interval = [&interval_text](const IntervalReport& block) {
    std::cerr << render_interval_block(block, interval_text) << std::flush;
  };
  auto rep = run_session(*plan, recording_engine, costs.costs,
                         SessionControl{.stop = &g_stop, .workload_pid = &g_workload, .on_note = note,
                                        .on_interval = on_interval});
  if (!rep) {
    fail(rep.error().message);
    return rep.error().exit_status;
  }
  return report_outcome(*rep, plan->request.ring_pages, recording_engine);
}

}  // namespace uprof::cli
