#include "uprof/resolve/resolver.h"

#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <iterator>
#include <filesystem>
#include <sstream>

#include "uprof/resolve/elf/global_values.h"
#include "uprof/resolve/ifunc_choice.h"
#include "uprof/resolve/insn/probe_placement.h"
#include "uprof/resolve/dwarf/source_lines.h"
#include "uprof/resolve/usdt/usdt_known.h"
#include "uprof/resolve/usdt/usdt_notes.h"
#include "uprof/util/file_path.h"
#include "uprof/util/hex.h"
#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

// The first line of `path` when it starts with "#!" (a script), else nullopt. At most
// a page is read, as the kernel reads a "#!" line: a 2 GB file without a newline (or
// anything that is not a regular file) is not a script, and is not read through.
std::optional<std::string> script_line(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  char buf[4096];
  ssize_t n;
  while ((n = ::pread(fd.get(), buf, sizeof buf, 0)) < 0 && errno == EINTR) {
  }
  if (n < 2 || buf[0] != '#' || buf[1] != '!') return std::nullopt;
  std::string line(buf, static_cast<std::size_t>(n));
  line.resize(std::min(line.find('\n'), line.size()));
  if (line.size() > 80) line = line.substr(0, 77) + "...";
  return line;
}

// No values named at a USDT probe: the provider's documented arguments
// (resolve/usdt/usdt_known.h), else every argument the note has, as a number; in
// both, only the arguments uprof can read (resolution_notes names the others).
std::vector<ValueRequest> usdt_default_values(const UsdtNote& note, const std::vector<UsdtArg>& args) {
  auto readable = [&](const ValueRequest& v) {
    const auto* a = std::get_if<ArgumentRef>(&v.target);
    return !a || a->n == 0 || a->n > args.size() || !usdt_arg_unreadable(args[a->n - 1]);
  };
  std::vector<ValueRequest> values;
  bool known = false;
  for (std::string_view token : known_usdt_values(note.provider, note.name, args.size())) {
    auto v = parse_value_request(token);
    if (!v) continue;
    known = true;
    if (readable(*v)) values.push_back(std::move(*v));
  }
  if (!known)
    for (unsigned i = 1; i <= args.size(); i++) {
      ValueRequest v{.text = "$arg" + std::to_string(i), .label = {}, .target = ArgumentRef{i}, .type = {}};
      if (readable(v)) values.push_back(std::move(v));
    }
  return values;
}

// No note matches: where it looked, and the notes there are (`seen`, "provider:name").
Error no_usdt(const ProbeSpec& spec, const UsdtRef& ref, const std::vector<std::string>& files,
              const std::vector<std::string>& seen) {
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
      // An argument uprof cannot read is kept, to be named (resolution_notes) or refused
      // when a spec names it; the probe records the others.
      std::vector<UsdtArg> args = read_usdt_args(elf.arch(), u.note.args);
      ResolvedProbe p;
      p.spec = spec.text;
      p.path = abs;
      p.build_id = elf.build_id();
      p.arch = elf.arch();
      p.function = full;
      p.function_addr = u.vaddr;
      p.vaddr = u.vaddr;
      p.file_offset = u.file_offset;
      p.values = spec.values.empty() ? usdt_default_values(u.note, args) : spec.values;
      p.kind = UsdtPoint{.args = std::move(args), .semaphore_offset = u.semaphore_offset.value_or(0),
                         .default_values = spec.values.empty()};
      out.push_back(std::move(p));
    }
  }
  if (out.empty()) return no_usdt(spec, ref, files, seen);
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
  if (auto* raw = std::get_if<RawOffset>(&spec.what)) return resolve_raw_offset(spec, *raw, *img);
  if (auto* ref = std::get_if<FunctionRef>(&spec.what)) return resolve_function(spec, *ref, *img);
  return resolve_line(spec, *img);  // SourceLine, FunctionLine
}

ResolvedProbe Resolver::probe_base(const ProbeSpec& spec, const Image& img) {
  ResolvedProbe p;
  p.spec = spec.text;
  p.path = img.path;
  p.build_id = img.elf.build_id();
  p.arch = img.elf.arch();
  p.kind = FunctionPoint{.is_return = spec.is_return};
  p.values = spec.values;
  return p;
}

Status Resolver::check_alignment(const ProbeSpec& spec, const Image& img, uint64_t vaddr, const std::string& where) {
  const ArchInfo& arch = arch_info(img.elf.arch());
  if (vaddr % arch.insn_align)
    return err("spec: '", spec.text, "': ", where, " (", hex(vaddr), ") is not ", arch.insn_align,
               "-byte aligned, as every ", arch.name, " instruction is");
  return ok();
}

Result<std::vector<ResolvedProbe>> Resolver::resolve_raw_offset(const ProbeSpec& spec, const RawOffset& raw,
                                                                const Image& img) {
  const auto& loads = img.elf.loads();
  if (raw.offset >= img.elf.file_size())
    return err("spec: '", spec.text, "': offset ", hex(raw.offset), " is beyond the end of ", img.elf.path(), " (",
               img.elf.file_size(), " bytes)");
  auto vaddr = offset_to_vaddr(loads, raw.offset);
  if (!vaddr)
    return err("spec: '", spec.text, "': offset ", hex(raw.offset), " of ", img.elf.path(), " is in no loadable segment");
  if (!segment_for_vaddr(loads, *vaddr)->executable)
    return err("spec: '", spec.text, "': offset ", hex(raw.offset), " of ", img.elf.path(),
               " is not in an executable segment");
  UPROF_TRY(check_alignment(spec, img, *vaddr, "offset " + hex(raw.offset)));
  ResolvedProbe p = probe_base(spec, img);
  p.vaddr = *vaddr;
  p.file_offset = raw.offset;
  if (const Function* f = img.functions.containing(*vaddr)) {
    p.function = f->display_name();
    p.symbol = f->name();
    p.function_addr = f->addr;
    p.function_size = f->size;
    p.offset_in_function = *vaddr - f->addr;
  }
  UPROF_TRY(check_offset(img, p));
  return std::vector<ResolvedProbe>{std::move(p)};
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
