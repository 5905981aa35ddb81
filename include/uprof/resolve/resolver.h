// Spec -> resolved probes. Picks the file a spec names (the target program, a
// path, or a library short name found as the loader would), finds the function(s)
// in it, and turns each address into the file offset the kernel takes, refusing
// whatever would corrupt the traced program or never fire.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "uprof/resolve/insn/branch_targets.h"
#include "uprof/resolve/dwarf/dwarf_index.h"
#include "uprof/resolve/dwarf/inlined_copies.h"
#include "uprof/resolve/image.h"
#include "uprof/resolve/insn/insn_decode.h"
#include "uprof/resolve/find/library_search.h"
#include "uprof/resolve/resolved_probe.h"
#include "uprof/spec/probe_spec.h"

namespace uprof {

struct ResolveOptions {
  DebugSearch debug;
  LibrarySearchOptions libraries;
  // --force: take FUNC+OFF as given even where it is not an instruction boundary.
  bool force_offset = false;
  // -p PID: the files the process maps (/proc/PID/maps). A library spec names the one
  // it loaded, dlopen'ed ones included, before the program's DT_NEEDED are searched.
  std::vector<std::string> mapped_files{};
  // -p PID: an IFUNC is probed at the implementation this process's loader bound it to
  // (resolve/ifunc_choice.h); 0: the one the loader selects on this machine.
  int pid = 0;
};

// The implementation an IFUNC resolves to, at its link-time address, and how that is
// known ("IFUNC, selected for this CPU", "IFUNC, as process 1234 bound it").
struct IfuncSelection {
  uint64_t vaddr = 0;
  std::string how;
};

class Resolver {
 public:
  explicit Resolver(ResolveOptions opts = {}) : opts_(std::move(opts)) {}

  // `target` is the program a spec without OBJECT refers to ("" when there is none).
  Result<std::vector<ResolvedProbe>> resolve(const ProbeSpec& spec, const std::string& target);
  // Loads (once) and returns the image of a file.
  Result<const Image*> image(const std::string& path);
  // The file a spec's OBJECT names, for the given target.
  Result<std::string> object_path(const std::string& object, const std::string& target);
  // An instruction decoder for the architecture (made once).
  Result<const InsnDecoder*> decoder(Arch arch);
  // The direct branch targets of a loaded file's code (scanned once).
  Result<const BranchTargets*> branch_targets(const Image& img);
  // The bytes of a function, from its symbol (at most `max` of them).
  Result<std::vector<uint8_t>> function_bytes(const Image& img, uint64_t vaddr, uint64_t size, uint64_t max = 1 << 20);

 private:
  // resolve(), before the globals its values read are placed in each probe's file: one of
  // the four below by the spec's kind.
  Result<std::vector<ResolvedProbe>> resolve_sites(const ProbeSpec& spec, const std::string& target);
  // BIN:0xOFF[%return]: the instruction at that file offset, in the function that holds it.
  Result<std::vector<ResolvedProbe>> resolve_raw_offset(const ProbeSpec& spec, const RawOffset& raw, const Image& img);
  // FUNC[@VER][+OFF][%return] and globs (resolver_sites.cpp): each function it names, at the
  // implementation an IFUNC selects, under its source name for a clone; with a plain name,
  // its inlined copies too.
  Result<std::vector<ResolvedProbe>> resolve_function(const ProbeSpec& spec, const FunctionRef& ref, const Image& img);
  // One function `f` of those: at `at` (f itself, or the implementation `choice` selects;
  // nullptr when no symbol starts there).
  Result<ResolvedProbe> function_probe(const ProbeSpec& spec, const FunctionRef& ref, const Image& img,
                                       const Function& f, const Function* at, const IfuncSelection* choice);
  // usdt:[BIN:]PROVIDER:NAME: the matching notes of BIN, or of the target and the
  // libraries it loads.
  Result<std::vector<ResolvedProbe>> resolve_usdt(const ProbeSpec& spec, const UsdtRef& ref,
                                                  const std::string& target);
  // The implementation each of `ifuncs` (IFUNC symbols of `img`) selects: in process
  // opts_.pid where it has bound one, else as the loader selects it here. Asked once
  // per file and name.
  Result<std::vector<IfuncSelection>> select_ifuncs(const Image& img, const std::vector<const Function*>& ifuncs,
                                                    const std::string& version);
  // FILE:LINE and FUNC:LINE: every statement start of the line (resolve/dwarf/source_lines.h).
  Result<std::vector<ResolvedProbe>> resolve_line(const ProbeSpec& spec, const Image& img);
  // The line a FUNC:LINE means ("loop_sum:3": 3 below loop_sum's declaration, in
  // lines.c) and the address ranges of the function's copies, where it is looked for.
  struct LineQuery {
    std::string file;
    uint32_t line = 0;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // empty: anywhere
  };
  Result<LineQuery> function_line(const ProbeSpec& spec, const FunctionLine& fl, const Image& img,
                                  const DwarfIndex& index);
  // The inlined copies of `name` in `img`, as entry-only sites (resolve/dwarf/inlined_copies.h).
  Result<std::vector<ResolvedProbe>> inlined_sites(const ProbeSpec& spec, const Image& img, const std::string& name);
  // The DWARF of a loaded file (its debug file's when separate), indexed once.
  Result<const DwarfIndex*> dwarf_index(const Image& img);
  Result<const InlinedCopies*> inlined_copies(const Image& img);
  // Refuses a probe inside a function at an offset that is not an instruction boundary.
  Status check_offset(const Image& img, const ResolvedProbe& p);
  // What every probe of `spec` in `img` shares: the spec, the file, the values asked for;
  // a function point (a return when the spec says %return) until its kind says otherwise.
  static ResolvedProbe probe_base(const ProbeSpec& spec, const Image& img);
  // Refuses an address that is not instruction-aligned ("add+0x2" on arm64); `where` names it.
  static Status check_alignment(const ProbeSpec& spec, const Image& img, uint64_t vaddr, const std::string& where);

  ResolveOptions opts_;
  std::map<std::string, std::unique_ptr<Image>> images_;
  std::map<Arch, InsnDecoder> decoders_;
  std::map<std::string, BranchTargets> branch_targets_;
  std::map<std::string, IfuncSelection> ifunc_choices_;  // by "path\nname@version"
  std::map<std::string, DwarfIndex> dwarf_;
  std::map<std::string, InlinedCopies> inlined_;
};

}  // namespace uprof
