#include "uprof/resolve/function_table.h"

#include <cxxabi.h>
#include <elf.h>
#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

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

std::string squeeze_spaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out += c;
  return out;
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

std::string demangle(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return "";
  int status = 0;
  std::string n(name);
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(n.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : "";
}

std::string strip_cxx_parameters(std::string_view d) {
  // Find the '(' that opens the parameter list: the last top-level one, scanning
  // back from the end over qualifiers such as " const" and "&&".
  int depth = 0;
  std::size_t open = std::string_view::npos;
  for (std::size_t i = d.size(); i-- > 0;) {
    char c = d[i];
    if (c == ')') depth++;
    else if (c == '(') {
      if (--depth == 0) { open = i; break; }
    }
  }
  std::string_view head = open == std::string_view::npos ? d : d.substr(0, open);
  // Template functions carry their return type: "int ns::twice<int>(int)". Drop a
  // leading type, i.e. everything up to the last top-level space.
  int angle = 0;
  std::size_t cut = 0;
  for (std::size_t i = 0; i < head.size(); i++) {
    char c = head[i];
    if (c == '<' || c == '(') angle++;
    else if ((c == '>' || c == ')') && angle > 0) angle--;
    else if (c == ' ' && angle == 0 && head.substr(0, i).find("operator") == std::string_view::npos)
      cut = i + 1;
  }
  return std::string(head.substr(cut));
}

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
      if (n.name != name) continue;
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
  std::vector<const Function*> hits;
  bool with_params = name.find('(') != std::string_view::npos;
  std::string want = squeeze_spaces(name);
  for (const auto& f : functions_) {
    if (f.demangled.empty()) continue;
    std::string have = with_params ? squeeze_spaces(f.demangled) : squeeze_spaces(strip_cxx_parameters(f.demangled));
    if (have == want) hits.push_back(&f);
  }
  return hits;
}

std::vector<const Function*> FunctionTable::find_glob(std::string_view pattern) const {
  std::string p(pattern);
  std::vector<const Function*> hits;
  for (const auto& f : functions_) {
    bool hit = false;
    for (const auto& n : f.names) hit = hit || fnmatch(p.c_str(), n.name.c_str(), 0) == 0;
    if (!hit && !f.demangled.empty())
      hit = fnmatch(p.c_str(), f.demangled.c_str(), 0) == 0 ||
            fnmatch(p.c_str(), strip_cxx_parameters(f.demangled).c_str(), 0) == 0;
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
