// The resolver's sites in one file: the functions a FUNC spec names (their clones, their
// IFUNC choice, their inlined copies) and the statements a FILE:LINE or FUNC:LINE names,
// with the messages for a name the file does not have or has twice.
#include <elf.h>

#include <algorithm>
#include <iterator>
#include <sstream>

#include "uprof/resolve/dwarf/source_lines.h"
#include "uprof/resolve/elf/rust_name.h"
#include "uprof/resolve/resolver.h"
#include "uprof/util/hex.h"

namespace uprof {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); i++) s += (i ? sep : "") + v[i];
  return s;
}

const char* bind_name(uint8_t b) {
  return b == STB_GLOBAL ? "global" : b == STB_WEAK ? "weak" : b == STB_LOCAL ? "local" : "other";
}

// When `name` is imported by `img` (an undefined dynamic symbol, by its own or its
// demangled name), the library among its DT_NEEDED that defines it: "libc.so.6" at
// "/lib/x86_64-linux-gnu/libc.so.6".
std::optional<NeededLibrary> importer_of(const Image& img, const std::string& name, const LibrarySearchOptions& libs) {
  const bool with_params = name.find('(') != std::string::npos;
  auto names = [&](const std::string& symbol) {
    if (symbol == name) return true;
    const std::string d = demangle(symbol);
    return !d.empty() && cxx_name_matches(name, with_params ? d : strip_cxx_parameters(d));
  };
  const auto symbols = img.elf.symbols();
  auto imported = std::find_if(symbols.begin(), symbols.end(), [&](const ElfSymbol& s) {
    return s.shndx == SHN_UNDEF && s.from_dynsym && !s.name.empty() && names(s.name);
  });
  if (imported == symbols.end()) return std::nullopt;
  for (const NeededLibrary& lib : needed_libraries(img.elf, libs)) {
    if (lib.path.empty()) continue;
    auto elf = ElfFile::open(lib.path);
    if (!elf) continue;
    for (const ElfSymbol& s : elf->symbols())
      if (s.name == imported->name && s.shndx != SHN_UNDEF && (s.type == STT_FUNC || s.type == STT_GNU_IFUNC))
        return lib;
  }
  return NeededLibrary{.soname = "", .path = ""};
}

Error no_symbol(const Image& img, const FunctionRef& ref, const LibrarySearchOptions& libs) {
  std::ostringstream os;
  if (!ref.is_glob && !ref.offset) {
    if (auto lib = importer_of(img, ref.name, libs)) {
      os << "elf: " << img.elf.path() << ": '" << ref.name << "' is imported, not defined there";
      if (lib->soname.empty()) {
        os << " (no library it needs defines it)";
      } else {
        const std::string short_name = lib->soname.substr(0, lib->soname.find(".so"));
        const std::string spec = short_name + ":" + ref.name;
        const bool quote = spec.find_first_of(" *?&()<>") != std::string::npos;
        os << ": it is " << lib->soname << "'s (" << lib->path << "): probe " << (quote ? "'" : "") << spec
           << (quote ? "'" : "");
      }
      return Error{os.str()};
    }
  }
  os << "elf: " << img.elf.path() << ": no " << (ref.is_glob ? "function matches '" : "symbol '")
     << name_with_version(ref) << "'";
  if (!ref.is_glob) {
    auto near = img.functions.suggest(ref.name);
    if (!near.empty()) os << " (did you mean '" << join(near, "', '") << "'?)";
  }
  if (img.stripped() && !img.debug) {
    os << ": the file is stripped and no debug file was found";
    if (!img.debug_lookup.looked_in.empty()) os << " (looked in " << join(img.debug_lookup.looked_in, ", ") << ")";
    else os << " (it has no build-id and no .gnu_debuglink)";
  }
  return Error{os.str()};
}

// True when `hits` are one source function's entry points: the function and its
// clones, or its clones alone ("ns::f(int)" and "ns::f(int) [clone .constprop.0]").
// Two functions of one name that are not clones (two `static int helper()` of two
// source files) are two functions.
bool one_source_function(const std::vector<const Function*>& hits) {
  const Function& first = *hits.front();
  const std::string_view base = std::string_view(first.name()).substr(0, first.name().size() - first.clone().size());
  std::size_t originals = 0;
  for (const Function* f : hits) {
    const std::string_view b = std::string_view(f->name()).substr(0, f->name().size() - f->clone().size());
    if (b != base) return false;
    originals += f->clone().empty();
  }
  return originals <= 1;
}

Error ambiguous(const Image& img, const ProbeSpec& spec, const std::vector<const Function*>& hits) {
  std::ostringstream os;
  os << "spec: '" << spec.text << "' is ambiguous in " << img.elf.path() << ": ";
  for (std::size_t i = 0; i < hits.size(); i++) {
    auto off = vaddr_to_offset(img.elf.loads(), hits[i]->addr);
    // A Rust generic's instances share a path ("m::id"): their symbols tell them apart.
    const bool rust = is_rust_symbol(hits[i]->name());
    os << (i ? ", " : "") << hits[i]->display_name() << (rust ? " (" + hits[i]->name() + ")" : "") << " at "
       << hex(hits[i]->addr) << " (" << bind_name(hits[i]->bind()) << (off ? ", file offset " + hex(*off) : "")
       << ")";
  }
  os << "; name one by file offset (BIN:0xOFF)";
  if (is_rust_symbol(hits.front()->name())) os << " or by its symbol";
  else if (!hits.front()->demangled.empty()) os << " or by its parameter list";
  return Error{os.str()};
}

// An IFUNC whose selected implementation is not known: `why` says why.
Error ifunc_error(const Image& img, const Function& f, const std::string& why) {
  std::ostringstream os;
  os << "elf: " << img.elf.path() << ": '" << f.name()
     << "' is an IFUNC: its symbol is the resolver the loader runs once to pick an implementation, so a probe there "
        "would not see the calls, and which one it picks is not known (" << why << "); probe an implementation instead";
  std::vector<std::string> impls;
  for (const auto& g : img.functions.functions())
    if (&g != &f && !g.is_ifunc && g.name() != f.name() && g.name().find(f.name()) != std::string::npos &&
        impls.size() < 8)
      impls.push_back(g.name());
  if (!impls.empty()) os << " (" << join(impls, ", ") << ")";
  else os << " (none is in the symbol table: install the library's debug symbols)";
  return Error{os.str()};
}

// The functions a FUNC spec names in a file, and the values a call's parameter list asks for.
struct FunctionHits {
  std::vector<const Function*> hits;
  std::vector<ValueRequest> call_values;  // "add(a, b)": a and b
  bool globbed = false;                   // found as a glob, not by name
};

FunctionHits find_functions(const Image& img, const FunctionRef& ref) {
  FunctionHits out;
  auto& hits = out.hits;
  // A name is looked up as written first, also when it has '*' or '?': "Vec::operator*"
  // and "f(char*)" name functions; "operator*" and "operator delete*", which no function
  // is named, are globs.
  hits = img.functions.find_exact(ref.name, ref.version, ref.default_version_only);
  if (hits.empty() && !ref.version) hits = img.functions.find_cxx(ref.name);
  out.globbed = hits.empty() && ref.is_glob;
  if (out.globbed) hits = img.functions.find_glob(ref.name);
  // "add(a, b)": not a C++ parameter list, so the parameters to capture.
  if (hits.empty() && !ref.is_glob) {
    if (auto call = parse_call_args(ref.name)) {
      hits = img.functions.find_exact(call->function, ref.version, ref.default_version_only);
      if (hits.empty() && !ref.version) hits = img.functions.find_cxx(call->function);
      if (!hits.empty()) out.call_values = call_values(*call);
    }
  }
  // A `.cold` fragment (the code gcc moved out of the function: `inner.cold`) is
  // entered by a jump from the function, never called: it is no entry point, so it
  // makes no spec ambiguous and no glob probes it, unless the spec names it.
  auto cold = [](const Function* f) { return is_cold_part(f->name()); };
  if (!names_cold_part(ref) && std::any_of(hits.begin(), hits.end(), [&](auto* f) { return !cold(f); }))
    hits.erase(std::remove_if(hits.begin(), hits.end(), cold), hits.end());
  return out;
}

// The inlined copies a function's probes leave out or rename: none at the out-of-line
// copy's own entry (that copy's probe already); with a `.part` clone, none at all (gcc's
// partial inlining: the copies are the function's first test, in its callers, whose calls
// past it run the .part, counted already); the others take the function's name
// ("check(int)" for "check"), so that the report counts them on its row.
void add_inlined(std::vector<ResolvedProbe>& out, std::vector<ResolvedProbe> inlined,
                 const std::vector<const Function*>& hits) {
  if (std::any_of(hits.begin(), hits.end(), [](const Function* f) { return f->clone().find(".part") != std::string_view::npos; }))
    return;
  for (ResolvedProbe& q : inlined) {
    if (std::any_of(out.begin(), out.end(), [&](const ResolvedProbe& p) { return p.file_offset == q.file_offset; }))
      continue;
    q.function = out.front().function;
    out.push_back(std::move(q));
  }
}

// A site of a line or an inlined copy at `vaddr`, named `name`, placed in the function
// whose code holds it.
Result<ResolvedProbe> site_at(const ProbeSpec& spec, const Image& img, uint64_t vaddr, const std::string& name,
                              ProbePointKind kind) {
  const auto& loads = img.elf.loads();
  auto foff = vaddr_to_offset(loads, vaddr);
  if (!foff || !segment_for_vaddr(loads, vaddr)->executable)
    return err("elf: ", img.elf.path(), ": ", name, " at ", hex(vaddr), " is in no executable segment of the file");
  ResolvedProbe p;
  p.spec = spec.text;
  p.path = img.path;
  p.build_id = img.elf.build_id();
  p.arch = img.elf.arch();
  p.function = name;
  p.kind = std::move(kind);
  p.values = spec.values;
  p.vaddr = vaddr;
  p.file_offset = *foff;
  if (const Function* f = img.functions.containing(vaddr)) {
    p.symbol = f->name();
    p.function_addr = f->addr;
    p.function_size = f->size;
    p.offset_in_function = vaddr - f->addr;
  }
  return p;
}

}  // namespace

Result<std::vector<ResolvedProbe>> Resolver::resolve_function(const ProbeSpec& spec, const FunctionRef& ref,
                                                              const Image& img) {
  // The inlined copies of a function named plainly are probed with it: `-e sq` counts every call of sq.
  std::vector<ResolvedProbe> inlined;
  if (names_plain_function(spec)) {
    UPROF_ASSIGN(inlined, inlined_sites(spec, img, ref.name));
  }
  const FunctionHits found = find_functions(img, ref);
  const std::vector<const Function*>& hits = found.hits;
  if (hits.empty() && !inlined.empty()) return inlined;
  if (hits.empty()) return no_symbol(img, ref, opts_.libraries);
  if (!found.globbed && hits.size() > 1 && !one_source_function(hits)) return ambiguous(img, spec, hits);

  // An IFUNC is probed at the implementation its resolver selects (resolve/ifunc_choice.h).
  std::vector<const Function*> ifuncs;
  std::copy_if(hits.begin(), hits.end(), std::back_inserter(ifuncs), [](const Function* f) { return f->is_ifunc; });
  std::vector<IfuncSelection> selected;
  if (!ifuncs.empty()) {
    auto chosen = select_ifuncs(img, ifuncs, found.globbed ? std::string() : ref.version.value_or(""));
    if (!chosen && !found.globbed) return ifunc_error(img, *ifuncs.front(), chosen.error().message);
    if (chosen) selected = std::move(chosen).value();  // a glob without them probes the rest
  }

  std::vector<ResolvedProbe> out;
  for (const Function* f : hits) {
    // What is probed: the function, or the implementation its IFUNC selects.
    const Function* at = f;
    const IfuncSelection* choice = nullptr;
    if (f->is_ifunc) {
      const auto i = static_cast<std::size_t>(std::find(ifuncs.begin(), ifuncs.end(), f) - ifuncs.begin());
      if (i >= selected.size()) continue;
      choice = &selected[i];
      at = img.functions.containing(choice->vaddr);
      if (at && at->addr != choice->vaddr) at = nullptr;
      // A glob that matches the implementation too probes it once, under its own name.
      if (found.globbed && at && std::find(hits.begin(), hits.end(), at) != hits.end()) continue;
    }
    UPROF_ASSIGN(ResolvedProbe p, function_probe(spec, ref, img, *f, at, choice));
    p.values.insert(p.values.begin(), found.call_values.begin(), found.call_values.end());
    out.push_back(std::move(p));
  }
  if (out.empty())
    return err("spec: '", spec.text, "': every function it matches in ", img.elf.path(),
               " is an IFUNC resolver, and which implementation each selects is not known; probe an implementation");
  add_inlined(out, std::move(inlined), hits);
  return out;
}

Result<ResolvedProbe> Resolver::function_probe(const ProbeSpec& spec, const FunctionRef& ref, const Image& img,
                                               const Function& f, const Function* at, const IfuncSelection* choice) {
  const auto& loads = img.elf.loads();
  const uint64_t at_addr = at ? at->addr : choice->vaddr, at_size = at ? at->size : 0;
  const std::string at_name = at ? at->display_name() : f.display_name() + " -> " + hex(at_addr);
  uint64_t off = ref.offset.value_or(0);
  if (off && at_size && off >= at_size)
    return err("spec: '", spec.text, "': offset ", hex(off), " is outside ", at_name, " (size ", hex(at_size), ")");
  uint64_t vaddr = at_addr + off;
  UPROF_TRY(check_alignment(spec, img, vaddr, at_name + (off ? "+" + hex(off) : "")));
  auto foff = vaddr_to_offset(loads, vaddr);
  if (!foff)
    return err("elf: ", img.elf.path(), ": ", at_name, " at ", hex(vaddr), " is in no loadable segment of the file");
  if (!segment_for_vaddr(loads, vaddr)->executable)
    return err("elf: ", img.elf.path(), ": ", at_name, " at ", hex(vaddr), " is not in an executable segment");
  // The clones of a function are probed under its name ("scale", not
  // "scale.constprop.0"), unless the spec names a clone.
  const bool source_names = !names_a_clone(ref.name);
  ResolvedProbe p = probe_base(spec, img);
  auto& point = std::get<FunctionPoint>(p.kind);
  p.function = source_names ? f.source : f.display_name();
  if (source_names && !choice) point.clone = std::string(f.clone());
  if (choice) point.ifunc_choice = choice->how;
  p.symbol = at ? at->name() : hex(at_addr);
  p.function_addr = at_addr;
  p.function_size = at_size;
  p.offset_in_function = off;
  p.vaddr = vaddr;
  p.file_offset = *foff;
  UPROF_TRY(check_offset(img, p));
  return p;
}

Result<std::vector<ResolvedProbe>> Resolver::inlined_sites(const ProbeSpec& spec, const Image& img,
                                                           const std::string& name) {
  std::vector<ResolvedProbe> out;
  if (!img.dwarf_file()) return out;
  UPROF_ASSIGN(const InlinedCopies* copies, inlined_copies(img));
  for (const InlinedCopy* c : copies->named(name)) {
    if (std::any_of(out.begin(), out.end(), [&](const ResolvedProbe& p) { return p.vaddr == c->entry; })) continue;
    const Function* f = img.functions.containing(c->entry);
    InlinedSite site{.into = f ? f->display_name() : hex(c->entry), .die = c->die_offset};
    UPROF_ASSIGN(ResolvedProbe p, site_at(spec, img, c->entry, InlinedCopies::display_name(*c), std::move(site)));
    out.push_back(std::move(p));
  }
  return out;
}

// FUNC:LINE: the line counted from the function's declaration, and the address ranges
// of its out-of-line copy and of every inlined copy declared where it is.
Result<Resolver::LineQuery> Resolver::function_line(const ProbeSpec& spec, const FunctionLine& fl, const Image& img,
                                                    const DwarfIndex& index) {
  auto fail = [&](const std::string& why) { return err("spec: '", spec.text, "': ", why, " (", img.path, ")"); };
  std::vector<const DwarfFunction*> fns = index.named(fl.function);
  if (fns.empty())
    for (const Function* f : img.functions.find_exact(fl.function))
      if (const DwarfFunction* d = index.at_entry(f->addr)) fns.push_back(d);
  if (fns.size() > 1) return fail("'" + fl.function + "' is " + std::to_string(fns.size()) + " functions: name the line as FILE:LINE");
  // As perf probe's FUNC:RLN, the line is looked for in the out-of-line copy and in
  // every inlined copy of the function (those declared where it is: one source function).
  UPROF_ASSIGN(const InlinedCopies* copies, inlined_copies(img));
  const std::vector<const InlinedCopy*> inl = copies->named(fl.function);
  if (fns.empty() && inl.empty()) {
    const FunctionRef ref{.name = fl.function, .version = {}, .default_version_only = false, .offset = {}, .is_glob = false};
    return no_symbol(img, ref, opts_.libraries);
  }
  auto decl = decl_line(index.dwarf(), fns.empty() ? inl.front()->die_offset : fns.front()->die_offset);
  if (!decl) return fail(fl.function + ": " + decl.error().message);
  LineQuery q{.file = decl->file, .line = decl->line + fl.line, .ranges = {}};
  if (!fns.empty()) q.ranges = fns.front()->ranges;
  for (const InlinedCopy* c : inl) {
    auto d = decl_line(index.dwarf(), c->die_offset);
    if (d && d->file == decl->file && d->line == decl->line) q.ranges.insert(q.ranges.end(), c->ranges.begin(), c->ranges.end());
  }
  if (q.ranges.empty()) return fail(fl.function + ": DWARF gives none of its copies an address range");
  return q;
}

Result<std::vector<ResolvedProbe>> Resolver::resolve_line(const ProbeSpec& spec, const Image& img) {
  auto fail = [&](const std::string& why) { return err("spec: '", spec.text, "': ", why, " (", img.path, ")"); };
  if (!img.dwarf_file()) return fail("no DWARF: the file has no line table (build it with -g or install its debug file)");
  UPROF_ASSIGN(const DwarfIndex* index, dwarf_index(img));
  UPROF_ASSIGN(std::vector<LineRow> rows, read_line_rows(index->dwarf(), img.path));
  LineQuery q;
  std::string label;
  if (auto* s = std::get_if<SourceLine>(&spec.what)) {
    q = LineQuery{.file = s->file, .line = s->line, .ranges = {}};
    label = line_text(*s);
  } else {
    const auto& fl = std::get<FunctionLine>(spec.what);
    UPROF_ASSIGN(q, function_line(spec, fl, img, *index));
    label = line_text(fl);
  }
  auto sites = pick_line_sites(rows, q.file, q.line, q.ranges);
  if (!sites) return fail(sites.error().message);
  std::vector<ResolvedProbe> out;
  for (uint64_t vaddr : sites->addresses) {
    UPROF_ASSIGN(ResolvedProbe p, site_at(spec, img, vaddr, label, LineSite{}));
    if (p.symbol.empty()) continue;  // code of a dropped COMDAT copy (address 0) or outside every function
    out.push_back(std::move(p));
  }
  if (out.empty()) return fail("line " + std::to_string(q.line) + " of " + sites->file + " has code in no function of the file");
  return out;
}

}  // namespace uprof
