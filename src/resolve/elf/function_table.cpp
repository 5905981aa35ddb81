#include "uprof/resolve/elf/function_table.h"

#include <elf.h>
#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

#include "uprof/resolve/elf/rust_name.h"
#include "uprof/spec/name_glob.h"

namespace uprof {
namespace {

int bind_rank(uint8_t bind) {
  switch (bind) {
    case STB_GLOBAL: return 0;
    case STB_WEAK: return 1;
    case STB_GNU_UNIQUE: return 1;
    default: return 2;
  }
}

bool better_primary(const SymbolName& a, const SymbolName& b) {
  if (bind_rank(a.bind) != bind_rank(b.bind)) return bind_rank(a.bind) < bind_rank(b.bind);
  bool au = !a.name.empty() && a.name[0] == '_', bu = !b.name.empty() && b.name[0] == '_';
  if (au != bu) return !au;
  if (a.name.size() != b.name.size()) return a.name.size() < b.name.size();
  return a.name < b.name;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); j++) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); i++) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); j++)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

FunctionTable FunctionTable::build(const std::vector<ElfSymbol>& symbols) {
  std::map<uint64_t, Function> by_addr;
  for (const auto& s : symbols) {
    if (s.type != STT_FUNC && s.type != STT_GNU_IFUNC) continue;
    if (s.shndx == SHN_UNDEF || s.shndx == SHN_ABS || s.value == 0) continue;  // PLT stubs, imports
    if (!s.in_exec_section) continue;
    Function& f = by_addr[s.value];
    f.addr = s.value;
    f.size = std::max(f.size, s.size);
    f.is_ifunc |= s.type == STT_GNU_IFUNC;
    SymbolName n{s.name, s.version, s.version_default, s.bind};
    auto same = std::find_if(f.names.begin(), f.names.end(), [&](const SymbolName& o) {
      return o.name == n.name && o.version == n.version;
    });
    if (same == f.names.end()) f.names.push_back(std::move(n));
    else if (bind_rank(n.bind) < bind_rank(same->bind)) same->bind = n.bind;
  }
  FunctionTable t;
  t.functions_.reserve(by_addr.size());
  for (auto& [addr, f] : by_addr) {
    std::stable_sort(f.names.begin(), f.names.end(), better_primary);
    f.demangled = demangle(f.names.front().name);
    const std::string_view clone = f.clone();
    if (clone.empty()) {
      f.source = f.display_name();
    } else {
      const std::string base = f.name().substr(0, f.name().size() - clone.size());
      f.source = demangle(base);
      if (f.source.empty()) f.source = base;
    }
    t.functions_.push_back(std::move(f));
  }
  return t;
}

std::vector<const Function*> FunctionTable::find_exact(std::string_view name, const std::optional<std::string>& version,
                                                       bool default_only) const {
  std::vector<const Function*> hits, hidden;
  for (const auto& f : functions_) {
    bool hit = false, hit_hidden = false;
    for (const auto& n : f.names) {
      const std::string_view clone = clone_suffix(n.name);
      const bool clone_of_name = !clone.empty() && !version && n.name.size() - clone.size() == name.size() &&
                                 std::string_view(n.name).substr(0, name.size()) == name;
      if (n.name != name && !clone_of_name) continue;
      if (version) {
        if (n.version == *version && (!default_only || n.version_default)) hit = true;
      } else if (n.version_default) {
        hit = true;
      } else {
        hit_hidden = true;
      }
    }
    if (hit) hits.push_back(&f);
    else if (hit_hidden) hidden.push_back(&f);
  }
  return hits.empty() ? hidden : hits;
}

std::vector<const Function*> FunctionTable::find_cxx(std::string_view name) const {
  const bool with_params = name.find('(') != std::string_view::npos;
  auto find = [&](auto&& matches) {
    std::vector<const Function*> hits;
    for (const auto& f : functions_)
      if (!f.demangled.empty() && matches(f)) hits.push_back(&f);
    return hits;
  };
  // Strictest first: an ABI tag or the namespace __cxx11 tells two functions apart
  // ("std::locale::name() const" and "std::locale::name[abi:cxx11]() const" are both in
  // libstdc++), and so does a qualifier; a name without them finds a function with them
  // only when nothing else does.
  for (bool loose : {false, true}) {
    std::vector<const Function*> hits;
    if (!with_params) {
      // A Rust generic function's instances ("m::id::<u32>") answer to its path ("m::id").
      hits = find([&](const Function& f) {
        return cxx_name_matches(name, strip_cxx_parameters(f.demangled), loose) ||
               (is_rust_symbol(f.name()) && cxx_name_matches(name, rust_without_generic_args(f.demangled), loose));
      });
    } else {
      // The function as written, or its source function's name (a clone's).
      hits = find([&](const Function& f) {
        return cxx_name_matches(name, f.demangled, loose) || cxx_name_matches(name, f.source, loose);
      });
      if (hits.empty())
        hits = find([&](const Function& f) { return cxx_name_matches(name, strip_cxx_qualifiers(f.source), loose); });
    }
    if (!hits.empty()) return hits;
  }
  return {};
}

std::vector<const Function*> FunctionTable::find_glob(std::string_view pattern) const {
  // Only '*' and '?' are special: "operator[]" is a name, so is Go's "main.(*T).Run".
  const std::string p = fnmatch_pattern(pattern);
  auto match = [&](const std::string& s) { return fnmatch(p.c_str(), s.c_str(), 0) == 0; };
  std::vector<const Function*> hits;
  for (const auto& f : functions_) {
    bool hit = false;
    for (const auto& n : f.names) hit = hit || match(n.name);
    if (!hit && !f.demangled.empty())
      hit = match(f.demangled) || match(f.source) || match(strip_cxx_parameters(f.demangled));
    if (hit) hits.push_back(&f);
  }
  return hits;
}

const Function* FunctionTable::containing(uint64_t addr) const {
  auto it = std::upper_bound(functions_.begin(), functions_.end(), addr,
                             [](uint64_t a, const Function& f) { return a < f.addr; });
  if (it == functions_.begin()) return nullptr;
  --it;
  if (addr == it->addr || addr - it->addr < it->size) return &*it;
  return nullptr;
}

std::vector<std::string> FunctionTable::suggest(std::string_view name, std::size_t max) const {
  std::vector<std::pair<std::size_t, std::string>> scored;
  std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  for (const auto& f : functions_) {
    const std::string& shown = f.demangled.empty() ? f.name() : strip_cxx_parameters(f.demangled);
    std::size_t d = edit_distance(name, shown);
    if (d <= limit) scored.emplace_back(d, shown);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (auto& [d, n] : scored) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    if (out.size() == max) break;
  }
  return out;
}

}  // namespace uprof
