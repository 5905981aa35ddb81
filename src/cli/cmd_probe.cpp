// uprof probe: resolve specs without probing, or list a binary's functions.
#include <signal.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "command.h"
#include "uprof/attach/stale_uprobes.h"
#include "uprof/attach/tracefs_uprobe.h"
#include "uprof/present/download_progress.h"
#include "uprof/present/probe_listing.h"
#include "uprof/present/usdt_listing.h"
#include "uprof/record/process_view.h"
#include "uprof/record/site_placement.h"
#include "uprof/record/site_refusals.h"
#include "uprof/record/unwind_risk.h"
#include "uprof/resolve/typed_values.h"
#include "uprof/resolve/dwarf/dwarf_index.h"
#include "uprof/resolve/insn/insn_class.h"
#include "uprof/resolve/resolver.h"
#include "uprof/resolve/usdt/usdt_notes.h"

namespace po = boost::program_options;

namespace uprof::cli {

namespace {

// --list-usdt BIN: its USDT notes.
int list_usdt(const std::string& bin) {
  auto elf = ElfFile::open(bin);
  if (!elf) return fail(elf.error().message);
  auto probes = read_usdt_probes(*elf);
  if (!probes) return fail(probes.error().message);
  std::cout << render_usdt_list(bin, *probes);
  return 0;
}

// Every spec's probes, in the order given.
Result<std::vector<ResolvedProbe>> resolve_all(Resolver& resolver, const std::vector<std::string>& specs,
                                               const std::string& bin) {
  std::vector<ResolvedProbe> all;
  for (const auto& a : specs) {
    UPROF_ASSIGN(ProbeSpec spec, parse_probe_spec(a));
    UPROF_ASSIGN(std::vector<ResolvedProbe> probes, resolver.resolve(spec, bin));
    all.insert(all.end(), probes.begin(), probes.end());
  }
  return all;
}

// --cleanup: the tracefs probes that killed uprofs left.
int cleanup() {
  auto dir = find_tracefs();
  if (!dir) return fail(dir.error().message);
  auto cleaned = remove_stale_uprof_probes(*dir);
  if (!cleaned) return fail(cleaned.error().message);
  for (const auto& line : describe_cleanup(*cleaned, *dir)) std::cout << line << "\n";
  if (cleaned->removed_groups.empty() && cleaned->busy_events.empty())
    std::cout << "no stale uprof probes in " << *dir << "/uprobe_events\n";
  return cleaned->busy_events.empty() ? 0 : 1;
}

// --list BIN [GLOB]: the functions, with their signatures from DWARF when the file (or
// its debug file) has it; a listing without them is still useful, so a DWARF problem is
// only a warning.
int list_functions(Resolver& resolver, const std::string& bin, const std::string& pattern) {
  auto img = resolver.image(bin);
  if (!img) return fail(img.error().message);
  std::optional<DwarfIndex> dwarf;
  if (const ElfFile* df = (*img)->dwarf_file()) {
    auto idx = DwarfIndex::build(df->elf(), df->path());
    if (idx) dwarf.emplace(std::move(idx).value());
    else std::cerr << "uprof: warning: " << idx.error().message << "\n";
  }
  SignatureLookup sig;
  if (dwarf) sig = [&](uint64_t addr) {
    const DwarfFunction* f = dwarf->at_entry(addr);
    return f ? f->signature() : std::string();
  };
  auto [text, n] = render_function_list(**img, pattern, sig);
  if (n == 0) return fail("elf: " + bin + ": no function matches '" + pattern + "'");
  std::cout << text;
  return 0;
}

// --vars: each probe's parameters and return value, typed, and where they live.
int show_vars(Resolver& resolver, const std::vector<ResolvedProbe>& probes) {
  TypedValueResolver dwarf;
  for (const auto& p : probes) {
    auto img = resolver.image(p.path);
    if (!img) return fail(img.error().message);
    auto params = dwarf.params(**img, p);
    if (!params) return fail(params.error().message);
    if (!*params) return fail("dwarf: " + p.path + ": no DWARF describes " + p.label() + " (install debug info)");
    std::cout << render_vars(p, **params);
  }
  return 0;
}

// What each spec resolves to, as record would probe it: how each function's returns
// are measured, where its entry probe goes (its values bound as record binds them), and
// what the kernel will do with the instruction there: what a hit costs, or, below the
// table, why a site is refused (record/site_refusals.h) or was moved past a refusal.
int show_resolved(Resolver& resolver, std::vector<ResolvedProbe> probes, bool exact_site, const std::string& program,
                  const std::vector<std::string>& mapped) {
  // As record would decide for this program (or process); with neither, as for -a.
  auto traits = run_traits(program, mapped, probes, false);
  if (!traits) return fail(traits.error().message);
  auto risks = unwind_risks(resolver, probes, *traits);
  if (!risks) return fail(risks.error().message);
  std::vector<Placement> placements(probes.size());
  std::vector<std::string> lines;
  if (!exact_site) {
    TypedValueResolver dwarf;
    std::vector<std::string> notes;
    for (auto& p : probes) {
      auto img = resolver.image(p.path);
      if (img) (void)apply_typed_values(dwarf, **img, p, true, notes);  // a DWARF problem: raw values only
    }
    std::vector<SiteMove> moves;
    placements.clear();
    if (auto s = place_sites(resolver, probes, PlanOptions{}, *risks, moves, lines, &placements); !s)
      return fail(s.error().message);
  }
  std::set<std::pair<std::string, uint64_t>> told;  // a site once, for its entry and its return
  for (const auto& p : probes) {
    auto refused = refusal_of(resolver, p);
    if (!refused) return fail(refused.error().message);
    if (*refused && told.insert({p.path, p.file_offset}).second) lines.push_back(refusal_line(**refused));
  }
  drop_exits_at_entry(probes, *risks);
  std::vector<std::string> first_insn, returns;
  for (const auto& p : probes) returns.push_back(describe_returns(p, risks->of(p)));
  for (std::size_t i = 0; i < probes.size(); i++) {
    const auto& p = probes[i];
    auto info = classify_probe_site(p.path, p.arch, p.file_offset);
    std::string text = info ? describe(*info) : "?";
    if (placements[i].moved()) text = describe_move(placements[i]) + " " + text;
    else if (!placements[i].kept_because.empty()) text += "; stays: " + placements[i].kept_because;
    first_insn.push_back(std::move(text));
  }
  std::cout << render_resolved(probes, first_insn, returns);
  for (const auto& line : resolution_notes(probes)) std::cout << line << "\n";
  for (const auto& line : lines) std::cout << line << "\n";
  return 0;
}

}  // namespace

// Long for its option table (20 lines of help) and the order of its modes; each mode is a
// function above.
int cmd_probe(int argc, char** argv) {
  po::options_description opts(
      "usage: uprof probe [--list | --list-usdt] BIN [SPEC... | PATTERN]\n"
      "       uprof probe LIB:FUNC...      (specs that name their file: a library through ld.so.cache)\n"
      "       uprof probe -p PID SPEC...   (as record -p resolves them: the files PID maps, its IFUNC choices)\n\n"
      "  uprof probe BIN SPEC...        print what each spec resolves to (file, offset), without probing\n"
      "  uprof probe --list BIN [GLOB]  list BIN's functions: name, address, file offset, size, signature\n"
      "  uprof probe --list-usdt BIN    list BIN's USDT (SystemTap SDT) probes: offset, semaphore, arguments\n"
      "  uprof probe --vars BIN SPEC... each parameter's type and where it lives at the probe (DWARF)\n"
      "  uprof probe --cleanup          remove the tracefs probes that killed uprofs left (record does it too)\n\n"
      "SPEC: FUNC | FUNC+0xOFF | BIN:FUNC | LIB:FUNC | BIN:0xOFF | 'glob*' | 'ns::Klass::method(int)'\n\n"
      "options");
  opts.add_options()("help,h", "show this help")("list,l", "list functions instead of resolving specs")(
      "list-usdt", "list the USDT probes of BIN (its .note.stapsdt notes)")(
      "vars", "show the parameters and return value of each probed function, typed, and where they live")(
      "cleanup", "remove the tracefs groups uprof_<pid> whose uprof is gone")(
      "exact-site", "show each function's probe at its symbol, as record --exact-site probes it")(
      "force", "take FUNC+OFF as given, even where OFF is not an instruction boundary")(
      "pid,p", po::value<int>(), "resolve as record -p PID does: the libraries the process maps, and the IFUNC "
      "implementations its loader bound")(
      "debug-dir", po::value<std::vector<std::string>>()->composing(),
      "where to look for separate debug files (default /usr/lib/debug): DIR/.build-id/ab/cdef.debug,\n"
      "DIR/<binary's dir>/<debuglink>, DIR/<debuglink>; repeatable. Then $DEBUGINFOD_URLS, when set");
  po::options_description hidden;
  hidden.add_options()("binary", po::value<std::string>())("args", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("binary", 1).add("args", -1);
  po::options_description all;
  all.add(opts).add(hidden);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error("probe", e.what());
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  if (vm.count("cleanup")) {
    if (vm.count("binary")) return usage_error("probe", "--cleanup takes no binary or spec");
    return cleanup();
  }
  if (!vm.count("binary")) return usage_error("probe", "no binary given");
  std::string bin = vm["binary"].as<std::string>();
  const int pid = vm.count("pid") ? vm["pid"].as<int>() : 0;
  if (vm.count("pid") && pid <= 0) return usage_error("probe", "-p takes a process id");
  auto args = vm.count("args") ? vm["args"].as<std::vector<std::string>>() : std::vector<std::string>{};
  // `uprof probe libc:malloc`: no program, only specs that name their file (a library
  // is then found through ld.so.cache, as with record -a).
  if (std::error_code ec; !vm.count("list") && !vm.count("list-usdt") && !std::filesystem::exists(bin, ec)) {
    if (auto first = parse_probe_spec(bin); first && (!first->object.empty() || pid > 0)) {
      args.insert(args.begin(), bin);
      bin.clear();
    }
  }
  // -p PID: its files as it sees them (record/process_view.h); its program is the one a
  // spec without a file means.
  std::optional<ProcessView> view;
  if (pid > 0) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return fail("probe: -p " + std::to_string(pid) + ": no such process");
    view = ProcessView::of(pid);
    if (bin.empty()) bin = view->program();
    if (bin.empty()) return fail("probe: process " + std::to_string(pid) + ": its program cannot be read (/proc/" +
                                 std::to_string(pid) + "/exe)");
  }

  if (vm.count("list-usdt")) {
    if (!args.empty()) return usage_error("probe", "--list-usdt takes one binary and nothing else");
    return list_usdt(bin);
  }

  // A stripped file's debug file may come from debuginfod ($DEBUGINFOD_URLS): its
  // download is drawn on stderr.
  DownloadProgress downloads = DownloadProgress::on_stderr();
  ResolveOptions ropts;
  ropts.debug.debuginfod = true;
  ropts.debug.listener = &downloads;
  if (vm.count("debug-dir")) ropts.debug.debug_dirs = vm["debug-dir"].as<std::vector<std::string>>();
  ropts.force_offset = vm.count("force") > 0;
  if (pid > 0) {
    ropts.pid = pid;
    ropts.mapped_files = view->mapped_paths();
  }
  Resolver resolver(ropts);

  if (vm.count("list")) {
    if (args.size() > 1) return usage_error("probe", "--list takes one pattern");
    return list_functions(resolver, bin, args.empty() ? "" : args[0]);
  }

  if (args.empty()) return usage_error("probe", "no probe spec given (or use --list)");
  auto all_probes = resolve_all(resolver, args, bin);
  if (!all_probes) return fail(all_probes.error().message);
  if (vm.count("vars")) return show_vars(resolver, *all_probes);
  return show_resolved(resolver, std::move(all_probes).value(), vm.count("exact-site") > 0, bin, ropts.mapped_files);
}

}  // namespace uprof::cli
