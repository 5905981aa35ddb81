#include "uprof/resolve/resolver.h"

#include <elf.h>
#include <fnmatch.h>

#include <algorithm>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "uprof/resolve/elf/global_values.h"
#include "uprof/resolve/ifunc_choice.h"
#include "uprof/resolve/insn/probe_placement.h"
#include "uprof/resolve/dwarf/source_lines.h"
#include "uprof/resolve/usdt/usdt_known.h"
#include "uprof/resolve/usdt/usdt_notes.h"
#include "uprof/util/file_path.h"
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
  os << "elf: " << img.elf.path() << ": no " << (ref.is_glob ? "function matches '" : "symbol '") << ref.name;
  if (ref.version) os << (ref.default_version_only ? "@@" : "@") << *ref.version;
  os << "'";
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
    os << (i ? ", " : "") << hits[i]->display_name() << " at " << hex(hits[i]->addr) << " ("
       << bind_name(hits[i]->bind()) << (off ? ", file offset " + hex(*off) : "") << ")";
  }
  os << "; name one by file offset (BIN:0xOFF)";
  if (!hits.front()->demangled.empty()) os << " or by its parameter list";
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

// The first line of `path` when it starts with "#!" (a script), else nullopt.
std::optional<std::string> script_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line) || line.rfind("#!", 0) != 0) return std::nullopt;
  if (line.size() > 80) line = line.substr(0, 77) + "...";
  return line;
}

}  // namespace

Result<const Image*> Resolver::image(const std::string& path) {
  const std::string key = canonical_path(path);
  auto it = images_.find(key);
  if (it != images_.end()) return static_cast<const Image*>(it->second.get());
  UPROF_ASSIGN(auto img, Image::load(path, opts_.debug));
  auto* raw = img.get();
  images_.emplace(key, std::move(img));
  return static_cast<const Image*>(raw);
}

Result<std::string> Resolver::object_path(const std::string& object, const std::string& target) {
  namespace fs = std::filesystem;
  // A workload that is a script (a pyenv shim, a shell wrapper) runs some other ELF
  // file: its functions cannot be named, but a library's can, found as without a program.
  const std::optional<std::string> script = target.empty() ? std::nullopt : script_line(target);
  if (object.empty()) {
    if (target.empty()) return err("spec: no program to resolve the function in: name it as BIN:FUNC");
    if (script)
      return err("spec: ", target, " is a script (", *script, "), not an ELF file: name the program it runs as ",
                 "BIN:FUNC, or probe a library as LIB:FUNC");
    return target;
  }
  std::error_code ec;
  if (object.find('/') != std::string::npos || fs::exists(object, ec)) return object;
  if (!target.empty() && fs::path(target).filename() == object) return target;
  for (const std::string& mapped : opts_.mapped_files)
    if (library_name_matches(fs::path(mapped).filename().string(), object)) return mapped;
  if (target.empty() || script) return find_system_library(object, host_arch(), opts_.libraries);
  UPROF_ASSIGN(const Image* t, image(target));
  return find_library(t->elf, object, opts_.libraries);
}

Result<std::vector<ResolvedProbe>> Resolver::resolve_usdt(const ProbeSpec& spec, const UsdtRef& ref,
                                                          const std::string& target) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  if (!spec.object.empty()) {
    UPROF_ASSIGN(std::string path, object_path(spec.object, target));
    files.push_back(path);
  } else {
    if (target.empty())
      return err("spec: '", spec.text, "': no program to look for the probe in: name the file as usdt:BIN:",
                 ref.provider, ":", ref.name);
    files.push_back(target);
    UPROF_ASSIGN(ElfFile t, ElfFile::open(target));
    for (const auto& lib : needed_libraries(t, opts_.libraries))
      if (!lib.path.empty()) files.push_back(lib.path);
  }
  auto matches = [&](const std::string& pattern, const std::string& s) {
    return ref.is_glob ? ::fnmatch(pattern.c_str(), s.c_str(), 0) == 0 : pattern == s;
  };
  std::vector<ResolvedProbe> out;
  std::vector<std::string> seen;  // "provider:name" of the notes that did not match, for the message
  for (const std::string& file : files) {
    UPROF_ASSIGN(ElfFile elf, ElfFile::open(file));
    UPROF_ASSIGN(std::vector<UsdtProbe> probes, read_usdt_probes(elf));
    const std::string abs = canonical_path(fs::absolute(file).string());
    for (const UsdtProbe& u : probes) {
      std::string full = u.note.provider + ":" + u.note.name;
      if (!matches(ref.provider, u.note.provider) || !matches(ref.name, u.note.name)) {
        if (std::find(seen.begin(), seen.end(), full) == seen.end()) seen.push_back(full);
        continue;
      }
      auto args = parse_usdt_args(elf.arch(), u.note.args);
      if (!args)
        return err("usdt: ", file, ": ", full, " (note at file offset ", hex(u.note.note_offset),
                   "): ", args.error().message);
      ResolvedProbe p;
      p.spec = spec.text;
      p.path = abs;
      p.build_id = elf.build_id();
      p.arch = elf.arch();
      p.function = full;
      p.function_addr = u.vaddr;
      p.vaddr = u.vaddr;
      p.file_offset = u.file_offset;
      p.usdt = true;
      p.usdt_args = std::move(*args);
      p.semaphore_offset = u.semaphore_offset.value_or(0);
      p.values = spec.values;
      // No values named: the provider's documented arguments (resolve/usdt/usdt_known.h),
      // else every argument the note has, as a number.
      if (p.values.empty())
        for (std::string_view token : known_usdt_values(u.note.provider, u.note.name, p.usdt_args.size())) {
          auto v = parse_value_request(token);
          if (v) p.values.push_back(std::move(*v));
        }
      if (p.values.empty())
        for (unsigned i = 1; i <= p.usdt_args.size(); i++)
          p.values.push_back({.text = "$arg" + std::to_string(i), .label = {}, .target = ArgumentRef{i}, .type = {}});
      out.push_back(std::move(p));
    }
  }
  if (out.empty()) {
    std::ostringstream os;
    os << "spec: '" << spec.text << "': no USDT probe " << (ref.is_glob ? "matches " : "") << ref.provider << ":"
       << ref.name << " in " << files.front();
    if (files.size() > 1) os << " or the " << files.size() - 1 << " libraries it loads";
    if (!seen.empty()) {
      os << " (there are " << seen.size() << ": ";
      for (std::size_t i = 0; i < seen.size() && i < 6; i++) os << (i ? ", " : "") << seen[i];
      os << (seen.size() > 6 ? ", ...)" : ")");
    } else {
      os << " (none has USDT notes)";
    }
    return Error{os.str()};
  }
  return out;
}

Result<std::vector<ResolvedProbe>> Resolver::resolve(const ProbeSpec& spec, const std::string& target) {
  UPROF_ASSIGN(std::vector<ResolvedProbe> out, resolve_sites(spec, target));
  const bool globals = std::any_of(spec.values.begin(), spec.values.end(),
                                   [](const ValueRequest& v) { return std::holds_alternative<GlobalRef>(v.target); });
  if (!globals) return out;
  for (ResolvedProbe& p : out) {
    UPROF_ASSIGN(const Image* img, image(p.path));
    std::vector<ElfSymbol> symbols = img->elf.symbols();
    if (img->debug) {
      std::vector<ElfSymbol> more = img->debug->symbols();
      symbols.insert(symbols.end(), more.begin(), more.end());
    }
    UPROF_TRY(resolve_globals(p.values, symbols, p.path));
  }
  return out;
}

Result<std::vector<ResolvedProbe>> Resolver::resolve_sites(const ProbeSpec& spec, const std::string& target) {
  if (auto* u = std::get_if<UsdtRef>(&spec.what)) return resolve_usdt(spec, *u, target);
  UPROF_ASSIGN(std::string path, object_path(spec.object, target));
  UPROF_ASSIGN(const Image* img, image(path));
  const ArchInfo& arch = arch_info(img->elf.arch());
  const auto& loads = img->elf.loads();

  auto base = [&] {
    ResolvedProbe p;
    p.spec = spec.text;
    p.path = img->path;
    p.build_id = img->elf.build_id();
    p.arch = img->elf.arch();
    p.is_return = spec.is_return;
    p.values = spec.values;
    return p;
  };
  auto check_alignment = [&](uint64_t vaddr, const std::string& where) -> Status {
    if (vaddr % arch.insn_align)
      return err("spec: '", spec.text, "': ", where, " (", hex(vaddr), ") is not ", arch.insn_align,
                 "-byte aligned, as every ", arch.name, " instruction is");
    return ok();
  };

  if (auto* raw = std::get_if<RawOffset>(&spec.what)) {
    if (raw->offset >= img->elf.file_size())
      return err("spec: '", spec.text, "': offset ", hex(raw->offset), " is beyond the end of ", img->elf.path(),
                 " (", img->elf.file_size(), " bytes)");
    auto vaddr = offset_to_vaddr(loads, raw->offset);
    if (!vaddr) return err("spec: '", spec.text, "': offset ", hex(raw->offset), " of ", img->elf.path(),
                           " is in no loadable segment");
    if (!segment_for_vaddr(loads, *vaddr)->executable)
      return err("spec: '", spec.text, "': offset ", hex(raw->offset), " of ", img->elf.path(),
                 " is not in an executable segment");
    UPROF_TRY(check_alignment(*vaddr, "offset " + hex(raw->offset)));
    auto p = base();
    p.vaddr = *vaddr;
    p.file_offset = raw->offset;
    if (const Function* f = img->functions.containing(*vaddr)) {
      p.function = f->display_name();
      p.symbol = f->name();
      p.function_addr = f->addr;
      p.function_size = f->size;
      p.offset_in_function = *vaddr - f->addr;
    }
    UPROF_TRY(check_offset(*img, p));
    return std::vector<ResolvedProbe>{std::move(p)};
  }

  if (std::holds_alternative<SourceLine>(spec.what) || std::holds_alternative<FunctionLine>(spec.what))
    return resolve_line(spec, *img);

  const auto& ref = std::get<FunctionRef>(spec.what);
  // The inlined copies of a function named plainly (no glob, +OFF or %return, which an
  // inlined copy has none of) are probed with it: `-e sq` counts every call of sq.
  std::vector<ResolvedProbe> inlined;
  if (!ref.is_glob && !ref.offset && !ref.version && !spec.is_return) {
    UPROF_ASSIGN(inlined, inlined_sites(spec, *img, ref.name));
  }
  std::vector<const Function*> hits;
  std::vector<ValueRequest> call_names;
  // A name is looked up as written first, also when it has '*' or '?': "Vec::operator*"
  // and "f(char*)" name functions; "operator*" and "operator delete*", which no function
  // is named, are globs.
  hits = img->functions.find_exact(ref.name, ref.version, ref.default_version_only);
  if (hits.empty() && !ref.version) hits = img->functions.find_cxx(ref.name);
  const bool globbed = hits.empty() && ref.is_glob;
  if (globbed) hits = img->functions.find_glob(ref.name);
  // "add(a, b)": not a C++ parameter list, so the parameters to capture.
  if (hits.empty() && !ref.is_glob) {
    if (auto call = parse_call_args(ref.name)) {
      hits = img->functions.find_exact(call->function, ref.version, ref.default_version_only);
      if (hits.empty() && !ref.version) hits = img->functions.find_cxx(call->function);
      if (!hits.empty()) {
        for (const auto& n : call->names) call_names.push_back({.text = n, .label = {}, .target = ParamRef{n}, .type = {}});
        // "add()": the return value only
        if (call_names.empty()) call_names.push_back({.text = "$retval", .label = {}, .target = ReturnValueRef{}, .type = {}});
      }
    }
  }
  // A `.cold` fragment (the code gcc moved out of the function: `inner.cold`) is
  // entered by a jump from the function, never called: it is no entry point, so it
  // makes no spec ambiguous and no glob probes it, unless the spec names it.
  auto cold = [](const Function* f) { return is_cold_part(f->name()); };
  if (ref.name.find(".cold") == std::string::npos && std::any_of(hits.begin(), hits.end(), [&](auto* f) { return !cold(f); }))
    hits.erase(std::remove_if(hits.begin(), hits.end(), cold), hits.end());
  if (hits.empty() && !inlined.empty()) return inlined;
  if (hits.empty()) return no_symbol(*img, ref, opts_.libraries);
  if (!globbed && hits.size() > 1 && !one_source_function(hits)) return ambiguous(*img, spec, hits);
  // The clones of a function are probed under its name ("scale", not
  // "scale.constprop.0"), unless the spec names a clone.
  const bool source_names = !names_a_clone(ref.name);

  // An IFUNC is probed at the implementation its resolver selects (resolve/ifunc_choice.h).
  std::vector<const Function*> ifuncs;
  std::copy_if(hits.begin(), hits.end(), std::back_inserter(ifuncs), [](const Function* f) { return f->is_ifunc; });
  std::vector<IfuncSelection> selected;
  if (!ifuncs.empty()) {
    auto chosen = select_ifuncs(*img, ifuncs, globbed ? std::string() : ref.version.value_or(""));
    if (!chosen && !globbed) return ifunc_error(*img, *ifuncs.front(), chosen.error().message);
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
      at = img->functions.containing(choice->vaddr);
      if (at && at->addr != choice->vaddr) at = nullptr;
      // A glob that matches the implementation too probes it once, under its own name.
      if (globbed && at && std::find(hits.begin(), hits.end(), at) != hits.end()) continue;
    }
    const uint64_t at_addr = at ? at->addr : choice->vaddr, at_size = at ? at->size : 0;
    const std::string at_name = at ? at->display_name() : f->display_name() + " -> " + hex(at_addr);
    uint64_t off = ref.offset.value_or(0);
    if (off && at_size && off >= at_size)
      return err("spec: '", spec.text, "': offset ", hex(off), " is outside ", at_name, " (size ", hex(at_size), ")");
    uint64_t vaddr = at_addr + off;
    UPROF_TRY(check_alignment(vaddr, at_name + (off ? "+" + hex(off) : "")));
    auto foff = vaddr_to_offset(loads, vaddr);
    if (!foff)
      return err("elf: ", img->elf.path(), ": ", at_name, " at ", hex(vaddr), " is in no loadable segment of the file");
    if (!segment_for_vaddr(loads, vaddr)->executable)
      return err("elf: ", img->elf.path(), ": ", at_name, " at ", hex(vaddr), " is not in an executable segment");
    auto p = base();
    p.function = source_names ? f->source : f->display_name();
    if (source_names && !choice) p.clone = std::string(f->clone());
    if (choice) p.ifunc_choice = choice->how;
    p.symbol = at ? at->name() : hex(at_addr);
    p.function_addr = at_addr;
    p.function_size = at_size;
    p.offset_in_function = off;
    p.vaddr = vaddr;
    p.file_offset = *foff;
    p.values.insert(p.values.begin(), call_names.begin(), call_names.end());
    UPROF_TRY(check_offset(*img, p));
    out.push_back(std::move(p));
  }
  if (out.empty())
    return err("spec: '", spec.text, "': every function it matches in ", img->elf.path(),
               " is an IFUNC resolver, and which implementation each selects is not known; probe an implementation");
  // gcc's partial inlining (a `.part` clone): the inlined copies are the function's first
  // test, in its callers, whose calls past it run the .part, counted already; they stay out.
  if (std::any_of(hits.begin(), hits.end(), [](const Function* f) { return f->clone().find(".part") != std::string_view::npos; }))
    inlined.clear();
  // An inlined copy at the out-of-line copy's own entry is that copy's probe already; the
  // others take its name ("check(int)" for "check"), so that the report counts them on its row.
  for (ResolvedProbe& q : inlined) {
    if (std::any_of(out.begin(), out.end(), [&](const ResolvedProbe& p) { return p.file_offset == q.file_offset; }))
      continue;
    q.function = out.front().function;
    out.push_back(std::move(q));
  }
  return out;
}

Result<const DwarfIndex*> Resolver::dwarf_index(const Image& img) {
  auto it = dwarf_.find(img.path);
  if (it == dwarf_.end()) {
    const ElfFile* dw = img.dwarf_file();
    DwarfIndex index;
    if (dw) {
      UPROF_ASSIGN(index, DwarfIndex::build(dw->elf(), dw->path()));
    }
    it = dwarf_.emplace(img.path, std::move(index)).first;
  }
  return &it->second;
}

Result<const InlinedCopies*> Resolver::inlined_copies(const Image& img) {
  auto it = inlined_.find(img.path);
  if (it == inlined_.end()) {
    UPROF_ASSIGN(const DwarfIndex* index, dwarf_index(img));
    UPROF_ASSIGN(InlinedCopies copies, InlinedCopies::build(index->dwarf(), img.path));
    it = inlined_.emplace(img.path, std::move(copies)).first;
  }
  return &it->second;
}

// A site of a line or an inlined copy at `vaddr`, named `name`, placed in the function
// whose code holds it.
namespace {
Result<ResolvedProbe> site_at(const ProbeSpec& spec, const Image& img, uint64_t vaddr, const std::string& name) {
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
  p.site = true;
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

Result<std::vector<ResolvedProbe>> Resolver::inlined_sites(const ProbeSpec& spec, const Image& img,
                                                           const std::string& name) {
  std::vector<ResolvedProbe> out;
  if (!img.dwarf_file()) return out;
  UPROF_ASSIGN(const InlinedCopies* copies, inlined_copies(img));
  for (const InlinedCopy* c : copies->named(name)) {
    if (std::any_of(out.begin(), out.end(), [&](const ResolvedProbe& p) { return p.vaddr == c->entry; })) continue;
    UPROF_ASSIGN(ResolvedProbe p, site_at(spec, img, c->entry, InlinedCopies::display_name(*c)));
    const Function* f = img.functions.containing(c->entry);
    p.inlined_into = f ? f->display_name() : hex(c->entry);
    p.inlined_die = c->die_offset;
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<ResolvedProbe>> Resolver::resolve_line(const ProbeSpec& spec, const Image& img) {
  auto fail = [&](const std::string& why) { return err("spec: '", spec.text, "': ", why, " (", img.path, ")"); };
  if (!img.dwarf_file()) return fail("no DWARF: the file has no line table (build it with -g or install its debug file)");
  UPROF_ASSIGN(const DwarfIndex* index, dwarf_index(img));
  UPROF_ASSIGN(std::vector<LineRow> rows, read_line_rows(index->dwarf(), img.path));
  std::string file, label;
  uint32_t line = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  if (auto* s = std::get_if<SourceLine>(&spec.what)) {
    file = s->file;
    line = s->line;
    label = s->file + ":" + std::to_string(s->line);
  } else {
    const auto& fl = std::get<FunctionLine>(spec.what);
    std::vector<const DwarfFunction*> fns = index->named(fl.function);
    if (fns.empty())
      for (const Function* f : img.functions.find_exact(fl.function))
        if (const DwarfFunction* d = index->at_entry(f->addr)) fns.push_back(d);
    if (fns.size() > 1) return fail("'" + fl.function + "' is " + std::to_string(fns.size()) + " functions: name the line as FILE:LINE");
    // As perf probe's FUNC:RLN, the line is looked for in the out-of-line copy and in
    // every inlined copy of the function (those declared where it is: one source function).
    UPROF_ASSIGN(const InlinedCopies* copies, inlined_copies(img));
    const std::vector<const InlinedCopy*> inl = copies->named(fl.function);
    if (fns.empty() && inl.empty()) {
      const FunctionRef ref{.name = fl.function, .version = {}, .default_version_only = false, .offset = {}, .is_glob = false};
      return no_symbol(img, ref, opts_.libraries);
    }
    auto decl = decl_line(index->dwarf(), fns.empty() ? inl.front()->die_offset : fns.front()->die_offset);
    if (!decl) return fail(fl.function + ": " + decl.error().message);
    file = decl->file;
    line = decl->line + fl.line;
    if (!fns.empty()) ranges = fns.front()->ranges;
    for (const InlinedCopy* c : inl) {
      auto d = decl_line(index->dwarf(), c->die_offset);
      if (d && d->file == decl->file && d->line == decl->line) ranges.insert(ranges.end(), c->ranges.begin(), c->ranges.end());
    }
    if (ranges.empty()) return fail(fl.function + ": DWARF gives none of its copies an address range");
    label = fl.function + ":" + std::to_string(fl.line);
  }
  auto sites = pick_line_sites(rows, file, line, ranges);
  if (!sites) return fail(sites.error().message);
  std::vector<ResolvedProbe> out;
  for (uint64_t vaddr : sites->addresses) {
    UPROF_ASSIGN(ResolvedProbe p, site_at(spec, img, vaddr, label));
    if (p.symbol.empty()) continue;  // code of a dropped COMDAT copy (address 0) or outside every function
    out.push_back(std::move(p));
  }
  if (out.empty()) return fail("line " + std::to_string(line) + " of " + sites->file + " has code in no function of the file");
  return out;
}

Result<const InsnDecoder*> Resolver::decoder(Arch arch) {
  auto it = decoders_.find(arch);
  if (it == decoders_.end()) {
    UPROF_ASSIGN(InsnDecoder d, InsnDecoder::open(arch));
    it = decoders_.emplace(arch, std::move(d)).first;
  }
  return &it->second;
}

Result<const BranchTargets*> Resolver::branch_targets(const Image& img) {
  auto it = branch_targets_.find(img.path);
  if (it == branch_targets_.end()) {
    UPROF_ASSIGN(const InsnDecoder* d, decoder(img.elf.arch()));
    UPROF_ASSIGN(BranchTargets t, BranchTargets::scan(img.elf, img.functions, *d));
    it = branch_targets_.emplace(img.path, std::move(t)).first;
  }
  return &it->second;
}

Result<std::vector<uint8_t>> Resolver::function_bytes(const Image& img, uint64_t vaddr, uint64_t size, uint64_t max) {
  auto off = vaddr_to_offset(img.elf.loads(), vaddr);
  if (!off) return err("elf: ", img.elf.path(), ": ", hex(vaddr), " is in no loadable segment of the file");
  uint64_t n = std::min(size ? size : 16, max);
  n = std::min<uint64_t>(n, img.elf.file_size() - std::min(*off, img.elf.file_size()));
  return img.elf.read_bytes(*off, n);
}

Status Resolver::check_offset(const Image& img, const ResolvedProbe& p) {
  if (p.offset_in_function == 0 || p.function.empty() || opts_.force_offset ||
      arch_info(img.elf.arch()).fixed_insn_size)  // fixed width: an aligned offset is a boundary
    return ok();
  UPROF_ASSIGN(const InsnDecoder* d, decoder(img.elf.arch()));
  UPROF_ASSIGN(std::vector<uint8_t> code, function_bytes(img, p.function_addr, p.offset_in_function + 16));
  Status s = check_boundary(*d, code, p.offset_in_function, p.function);
  if (!s.ok()) return err("spec: '", p.spec, "': ", s.error().message, " (", img.elf.path(), ")");
  return ok();
}

}  // namespace uprof
