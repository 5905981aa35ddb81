#include "uprof/resolve/resolver.h"

#include <elf.h>

#include <filesystem>
#include <sstream>

namespace uprof {
namespace {

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); i++) s += (i ? sep : "") + v[i];
  return s;
}

const char* bind_name(uint8_t b) {
  return b == STB_GLOBAL ? "global" : b == STB_WEAK ? "weak" : b == STB_LOCAL ? "local" : "other";
}

Error no_symbol(const Image& img, const FunctionRef& ref) {
  std::ostringstream os;
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

Error ifunc_error(const Image& img, const Function& f) {
  std::ostringstream os;
  os << "elf: " << img.elf.path() << ": '" << f.name()
     << "' is an IFUNC: its symbol is the resolver the loader runs once to pick an implementation, so a "
        "probe there would not see the calls; probe an implementation instead";
  std::vector<std::string> impls;
  for (const auto& g : img.functions.functions())
    if (&g != &f && !g.is_ifunc && g.name() != f.name() && g.name().find(f.name()) != std::string::npos &&
        impls.size() < 8)
      impls.push_back(g.name());
  if (!impls.empty()) os << " (" << join(impls, ", ") << ")";
  else os << " (none is in the symbol table: install the library's debug symbols)";
  return Error{os.str()};
}

}  // namespace

Result<const Image*> Resolver::image(const std::string& path) {
  std::error_code ec;
  auto canon = std::filesystem::canonical(path, ec);
  std::string key = ec ? path : canon.string();
  auto it = images_.find(key);
  if (it != images_.end()) return static_cast<const Image*>(it->second.get());
  UPROF_ASSIGN(auto img, Image::load(path, opts_.debug));
  auto* raw = img.get();
  images_.emplace(key, std::move(img));
  return static_cast<const Image*>(raw);
}

Result<std::string> Resolver::object_path(const std::string& object, const std::string& target) {
  namespace fs = std::filesystem;
  if (object.empty()) {
    if (target.empty()) return err("spec: no program to resolve the function in: name it as BIN:FUNC");
    return target;
  }
  std::error_code ec;
  if (object.find('/') != std::string::npos || fs::exists(object, ec)) return object;
  if (!target.empty() && fs::path(target).filename() == object) return target;
  if (target.empty()) return err("spec: library '", object, "' needs a program to be looked up for");
  UPROF_ASSIGN(const Image* t, image(target));
  return find_library(t->elf, object, opts_.libraries);
}

Result<std::vector<ResolvedProbe>> Resolver::resolve(const ProbeSpec& spec, const std::string& target) {
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
    return std::vector<ResolvedProbe>{std::move(p)};
  }

  const auto& ref = std::get<FunctionRef>(spec.what);
  std::vector<const Function*> hits;
  std::vector<std::string> call_names;
  if (ref.is_glob) {
    hits = img->functions.find_glob(ref.name);
  } else {
    hits = img->functions.find_exact(ref.name, ref.version, ref.default_version_only);
    if (hits.empty() && !ref.version) hits = img->functions.find_cxx(ref.name);
    // "add(a, b)": not a C++ parameter list, so the parameters to capture.
    if (hits.empty()) {
      if (auto call = parse_call_args(ref.name)) {
        hits = img->functions.find_exact(call->function, ref.version, ref.default_version_only);
        if (hits.empty() && !ref.version) hits = img->functions.find_cxx(call->function);
        if (!hits.empty()) {
          call_names = call->names;
          if (call_names.empty()) call_names.push_back("$retval");  // "add()": the return value only
        }
      }
    }
  }
  if (hits.empty()) return no_symbol(*img, ref);
  if (!ref.is_glob && hits.size() > 1) return ambiguous(*img, spec, hits);

  std::vector<ResolvedProbe> out;
  for (const Function* f : hits) {
    if (f->is_ifunc) {
      if (ref.is_glob) continue;  // a glob skips resolvers; naming one gets the explanation
      return ifunc_error(*img, *f);
    }
    uint64_t off = ref.offset.value_or(0);
    if (off && off >= f->size)
      return err("spec: '", spec.text, "': offset ", hex(off), " is outside ", f->display_name(), " (size ",
                 hex(f->size), ")");
    uint64_t vaddr = f->addr + off;
    UPROF_TRY(check_alignment(vaddr, f->display_name() + (off ? "+" + hex(off) : "")));
    auto foff = vaddr_to_offset(loads, vaddr);
    if (!foff)
      return err("elf: ", img->elf.path(), ": ", f->display_name(), " at ", hex(vaddr),
                 " is in no loadable segment of the file");
    if (!segment_for_vaddr(loads, vaddr)->executable)
      return err("elf: ", img->elf.path(), ": ", f->display_name(), " at ", hex(vaddr),
                 " is not in an executable segment");
    auto p = base();
    p.function = f->display_name();
    p.symbol = f->name();
    p.function_addr = f->addr;
    p.function_size = f->size;
    p.offset_in_function = off;
    p.vaddr = vaddr;
    p.file_offset = *foff;
    p.values.insert(p.values.begin(), call_names.begin(), call_names.end());
    out.push_back(std::move(p));
  }
  if (out.empty())
    return err("spec: '", spec.text, "': every function it matches in ", img->elf.path(),
               " is an IFUNC resolver; probe an implementation");
  return out;
}

}  // namespace uprof
