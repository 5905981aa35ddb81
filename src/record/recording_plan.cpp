#include "uprof/record/recording_plan.h"

#include <signal.h>

#include <cerrno>
#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>
#include <optional>

#include "uprof/attach/workload.h"
#include "uprof/record/call_stacks.h"
#include "uprof/record/offcpu_probes.h"
#include "uprof/record/process_traits.h"
#include "uprof/record/process_view.h"
#include "uprof/record/site_placement.h"
#include "uprof/record/site_refusals.h"
#include "uprof/record/unwind_risk.h"
#include "uprof/resolve/typed_values.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

// The program a spec without OBJECT refers to; with -p, as `view` reaches it.
Result<std::string> target_program(const RecordRequest& req, const ProcessView* view) {
  if (req.attach_pid > 0) {
    if (::kill(req.attach_pid, 0) != 0 && errno == ESRCH)
      return err("record: -p ", req.attach_pid, ": no such process");
    std::string exe = view->program();
    if (exe.empty()) return err("record: process ", req.attach_pid, ": its program cannot be read (/proc/",
                                req.attach_pid, "/exe)");
    return exe;
  }
  if (req.command.empty()) {
    if (req.system_wide) return std::string();  // specs must name their file: BIN:FUNC
    return err("record: no command to run (uprof record -e SPEC -- CMD ARGS...) and no -p PID");
  }
  return find_program(req.command.front());
}

// The functions at risk (record/unwind_risk.h), a line for each hazard: those measured at
// their exits, and those without a return probe, for the user before the run.
std::vector<std::string> return_notes(const std::vector<ResolvedProbe>& resolved, const ReturnRisks& risks) {
  struct Group {
    std::vector<std::string> names;
    std::string first_why;  // the first function's reason, in full
  };
  // By (hazard, measured at exits, the language that unwinds: C++ and Rust functions apart).
  std::map<std::tuple<ReturnHazard, bool, std::string>, Group> groups;
  for (const auto& p : resolved) {
    const ReturnRisk* risk = risks.of(p);
    if (!risk || p.is_return()) continue;
    Group& g = groups[{risk->hazard, !risk->exits.empty(), risk->runtime_language()}];
    if (std::find(g.names.begin(), g.names.end(), p.function) != g.names.end()) continue;
    g.names.push_back(p.function);
    if (g.first_why.empty())
      g.first_why = risk->overridable()                  ? p.function + ": " + risk->exits_blocker
                    : risk->hazard == ReturnHazard::GoCode ? risk->why(p.function) + ", and its exits cannot all "
                                                               "be probed: " + risk->exits_blocker
                                                           : risk->why(p.function);
  }
  // "2 C++ functions that call others (outer(int), inner(int))"
  auto list = [](const std::vector<std::string>& names, const std::string& noun, const std::string& which) {
    std::string s;
    for (std::size_t i = 0; i < names.size() && i < 3; i++) s += (i ? ", " : "") + names[i];
    if (names.size() > 3) s += ", ...";
    return std::to_string(names.size()) + " " + noun + (names.size() > 1 ? "s" : "") + which + " (" + s + ")";
  };
  std::vector<std::string> notes;
  for (const auto& [key, g] : groups) {
    const auto& [hazard, at_exits, language] = key;
    const std::string raised = language == "Rust" ? "a panic" : "an exception";
    const std::string trampoline = raised +
                                   " unwinding through a return probe aborts the program (the kernel's return "
                                   "trampoline has no unwind information)";
    const std::string at_exit_tail = "; a call " + raised +
                                     " leaves is counted as unwound, and one that ends in a tail call ends at the "
                                     "jump, without a return value";
    std::string noun = "function", which, why;
    switch (hazard) {
      case ReturnHazard::CxxCode:
        noun = language + " function";
        which = " that call others";
        why = trampoline;
        break;
      case ReturnHazard::CInCxxProcess:
        which = " that call others";
        why = "the process has the " + language + " runtime (" + risks.traits.cxx_runtime + "), a callback may " +
              (language == "Rust" ? "panic" : "throw") + ", and " + trampoline;
        break;
      case ReturnHazard::StackSwitching:
        why = "the process switches stacks (" + risks.traits.switches_stacks +
              "), and the kernel's pending returns follow one stack: a return probe can return to another stack's "
              "caller";
        break;
      case ReturnHazard::GoCode:
        noun = "Go function";
        why = "Go's runtime walks and copies goroutine stacks and kills the program on a return address it does "
              "not know, such as a return probe's trampoline; their entry probes are past the stack-growth check, "
              "and an entry pairs with the exit of the same goroutine, wherever it ran";
        break;
      default: break;
    }
    if (at_exits)
      notes.push_back("returns of " + list(g.names, noun, which) +
                      " are measured at their exit instructions, not by return probes: " + why + at_exit_tail);
    else if (hazard == ReturnHazard::GoCode)
      notes.push_back("no return probes on " + list(g.names, noun, which) + ": " + g.first_why +
                      "; their calls are counted and their latency is not");
    else if (!why.empty())
      notes.push_back("no return probes on " + list(g.names, noun, which) + ": " + why + ", and their exits cannot all be "
                      "probed (" + g.first_why + "), so their calls are counted and their latency is not; "
                      "--unsafe-returns probes them anyway");
    else
      notes.push_back("no return probes on " + list(g.names, noun, which) + ": " + g.first_why +
                      "; their calls are counted and their latency is not");
  }
  return notes;
}

}  // namespace

Result<RecordingPlan> plan_recording(RecordRequest request) {
  if (request.specs.empty()) return err("record: no probe given (-e SPEC)");
  // A bad -o is refused first: before anything is resolved, measured or run.
  UPROF_TRY(check_output_path(request.output));
  RecordingPlan plan;
  // -p: the process's files as it sees them, also from another mount namespace.
  std::optional<ProcessView> view;
  if (request.attach_pid > 0) view = ProcessView::of(request.attach_pid);
  UPROF_ASSIGN(plan.target, target_program(request, view ? &*view : nullptr));
  if (view) {
    request.resolve.mapped_files = view->mapped_paths();
    request.resolve.pid = request.attach_pid;  // its IFUNC choices (resolve/ifunc_choice.h)
    // A path in a spec names a file of the process: "/srv/app:main" is its /srv/app.
    for (ProbeSpec& spec : request.specs)
      if (!spec.object.empty() && spec.object.front() == '/') spec.object = view->path(spec.object);
    if (view->foreign())
      plan.notes.push_back("process " + std::to_string(request.attach_pid) +
                           " has a mount namespace or root of its own: its files are reached through /proc/" +
                           std::to_string(request.attach_pid) + "/root");
  }
  Resolver resolver(request.resolve);
  TypedValueResolver dwarf;
  std::vector<ResolvedProbe> resolved;
  for (const auto& spec : request.specs) {
    UPROF_ASSIGN(auto probes, resolver.resolve(spec, plan.target));
    for (auto& p : probes) {
      if (p.arch != host_arch())
        return err("record: ", p.path, " is an ", arch_info(p.arch).name, " file; this machine runs ",
                   arch_info(host_arch()).name, " (report works on any architecture's data file, record does not)");
      // A USDT probe's values are its note's arguments, not DWARF's.
      if (!p.is_usdt()) {
        UPROF_ASSIGN(const Image* img, resolver.image(p.path));
        UPROF_TRY(apply_typed_values(dwarf, *img, p, request.capture_args, plan.notes));
      }
      resolved.push_back(std::move(p));
    }
  }
  // How the specs resolved comes first: "strlen -> __strlen_evex (IFUNC, ...)".
  const auto resolution = resolution_notes(resolved);
  plan.notes.insert(plan.notes.begin(), resolution.begin(), resolution.end());
  // What the processes followed may do (record/process_traits.h): -a follows processes
  // it cannot see.
  UPROF_ASSIGN(const ProcessTraits traits,
               run_traits(plan.target, request.resolve.mapped_files, resolved, request.system_wide,
                          request.resolve.libraries));
  UPROF_ASSIGN(ReturnRisks risks, unwind_risks(resolver, resolved, traits));
  if (!request.exact_site) UPROF_TRY(place_sites(resolver, resolved, request.plan, risks, plan.moves, plan.notes));
  UPROF_TRY(refuse_sites(resolver, resolved, request.specs, plan.notes));
  drop_exits_at_entry(resolved, risks);
  if (!request.plan.unsafe_returns && !request.plan.entry_only) {
    const auto lines = return_notes(resolved, risks);
    plan.notes.insert(plan.notes.end(), lines.begin(), lines.end());
  }
  UPROF_ASSIGN(ProbeTable table, plan_probes(resolved, request.plan, risks));
  const auto stack_notes = plan_call_stacks(table.probes, table.capture, request.call_graph);
  plan.notes.insert(plan.notes.end(), stack_notes.begin(), stack_notes.end());
  if (request.offcpu) {
    mark_offcpu_probes(table);
    if (std::none_of(table.probes.begin(), table.probes.end(), [](const ProbeInfo& p) { return p.offcpu; }))
      return err("record: --off-cpu splits a call's time, and no probed function is measured at both its entry "
                 "and its return (or exits)", request.plan.entry_only || request.plan.return_only
                                                  ? ": drop --entry-only / --return-only" : "");
  }
  plan.probes = std::move(table.probes);
  plan.capture = std::move(table.capture);
  plan.notes.insert(plan.notes.end(), table.notes.begin(), table.notes.end());
  plan.request = std::move(request);
  return plan;
}

}  // namespace uprof
