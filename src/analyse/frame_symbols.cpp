#include "uprof/analyse/frame_symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <cstdlib>

#include "uprof/resolve/elf/cxx_name.h"
#include "uprof/resolve/elf/offset.h"
#include "uprof/util/hex.h"

namespace uprof {

namespace {

struct DwarfEnd {
  void operator()(Dwarf* d) const { dwarf_end(d); }
};

// A scope's name as the function table would show it: the demangled linkage name (C++,
// Rust), else DW_AT_name, following the abstract origin and specification (an inlined
// copy, an out-of-line method) to where they are.
std::string scope_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, at, &attr)) {
      if (const char* s = dwarf_formstring(&attr)) {
        std::string d = demangle(s);
        if (!d.empty()) return d;
      }
    }
  }
  if (dwarf_attr_integrate(die, DW_AT_name, &attr))
    if (const char* s = dwarf_formstring(&attr)) return s;
  return {};
}

}  // namespace

struct FrameSymbolizer::Object {
  std::string path;
  std::string build_id;
  bool tried = false;
  std::unique_ptr<Image> image;                 // null: not readable (problems_ says why)
  std::unique_ptr<Dwarf, DwarfEnd> dwarf;       // null: no DWARF
};

std::string_view file_name_of(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

FrameSymbolizer::FrameSymbolizer(DebugSearch search) : search_(std::move(search)) {}
FrameSymbolizer::~FrameSymbolizer() = default;

void FrameSymbolizer::add_object(uint32_t object, std::string path, std::string build_id) {
  auto o = std::make_unique<Object>();
  o->path = std::move(path);
  o->build_id = std::move(build_id);
  objects_[object] = std::move(o);
  // A number named again (a second process mapped another file under it) names new frames.
  for (auto it = cache_.lower_bound({object, 0}); it != cache_.end() && it->first.first == object;)
    it = cache_.erase(it);
}

FrameSymbolizer::Object* FrameSymbolizer::object(uint32_t number) {
  auto it = objects_.find(number);
  if (it == objects_.end()) return nullptr;
  Object& o = *it->second;
  if (o.tried) return &o;
  o.tried = true;
  auto img = Image::load(o.path, search_);
  if (!img) {
    problems_.push_back(img.error().message + ": its frames are left unnamed");
    return &o;
  }
  const std::string& now = (*img)->elf.build_id();
  if (!o.build_id.empty() && !now.empty() && now != o.build_id) {
    problems_.push_back(o.path + ": build-id " + now + " is not the recording's (" + o.build_id +
                        "): its frames are left unnamed");
    return &o;
  }
  o.image = std::move(img).value();
  if (const ElfFile* d = o.image->dwarf_file()) o.dwarf.reset(dwarf_begin_elf(d->elf(), DWARF_C_READ, nullptr));
  return &o;
}

const FrameName& FrameSymbolizer::name(const StackFrame& frame) {
  const auto key = std::make_pair(frame.object, frame.offset);
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, lookup(frame)).first;
  return it->second;
}

FrameName FrameSymbolizer::lookup(const StackFrame& frame) {
  Object* o = frame.object ? object(frame.object) : nullptr;
  if (!o) return {.functions = {"[unknown] " + hex(frame.offset)}, .named = false};
  const std::string unnamed = std::string(file_name_of(o->path)) + "+" + hex(frame.offset);
  if (!o->image) return {.functions = {unnamed}, .named = false};
  const auto vaddr = offset_to_vaddr(o->image->elf.loads(), frame.offset);
  if (!vaddr || *vaddr == 0) return {.functions = {unnamed}, .named = false};
  // A return address: the call is the instruction before it.
  const uint64_t pc = *vaddr - 1;
  FrameName out;
  if (o->dwarf) {
    Dwarf_Die cu;
    if (dwarf_addrdie(o->dwarf.get(), pc, &cu)) {
      Dwarf_Die* scopes = nullptr;
      int n = dwarf_getscopes(&cu, pc, &scopes);
      // dwarf_getscopes follows an inlined copy to its abstract origin and goes on from
      // where that is declared, so it never reaches the functions the copy was inlined
      // into. At a call in Basket::add (g++ -O2), where std::operator+ was inlined and
      // string::append in it: {lexical block, append, the CU}: operator+ and add missing,
      // and the caller of _M_append named "append" with add's frame gone. The scopes that
      // contain the innermost DIE in the tree are the whole chain: {block, append,
      // operator+, add, CU}.
      if (n > 0) {
        Dwarf_Die innermost = scopes[0];
        free(scopes);
        scopes = nullptr;
        n = dwarf_getscopes_die(&innermost, &scopes);
      }
      for (int i = 0; i < n; ++i) {
        const int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
        std::string s = scope_name(&scopes[i]);
        if (!s.empty()) out.functions.push_back(std::move(s));
      }
      free(scopes);
    }
  }
  // Without DWARF at the address, the symbol table names the function it is in.
  if (out.functions.empty()) {
    if (const Function* f = o->image->functions.containing(pc)) out.functions.push_back(f->source);
  }
  if (out.functions.empty()) return {.functions = {unnamed}, .named = false};
  out.named = true;
  return out;
}

}  // namespace uprof
