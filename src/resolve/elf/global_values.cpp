#include "uprof/resolve/elf/global_values.h"

#include <elf.h>

#include <algorithm>
#include <sstream>

namespace uprof {

Status resolve_globals(std::vector<ValueRequest>& values, const std::vector<ElfSymbol>& symbols,
                       const std::string& file) {
  for (ValueRequest& v : values) {
    auto* g = std::get_if<GlobalRef>(&v.target);
    if (!g || g->symbol.empty()) continue;
    const ElfSymbol* found = nullptr;
    for (const ElfSymbol& s : symbols) {
      if (s.name != g->symbol || s.shndx == SHN_UNDEF) continue;
      if (!found || (found->from_dynsym && !s.from_dynsym)) found = &s;
    }
    if (!found) {
      bool imported = std::any_of(symbols.begin(), symbols.end(),
                                  [&](const ElfSymbol& s) { return s.name == g->symbol && s.shndx == SHN_UNDEF; });
      if (imported)
        return err("spec: value '", v.text, "': '", g->symbol, "' is imported by ", file,
                   ", not defined there: probe a function of the file that defines it");
      std::ostringstream os;
      os << "spec: value '" << v.text << "': no global '" << g->symbol << "' in " << file;
      std::vector<std::string> objects;
      for (const ElfSymbol& s : symbols)
        if (s.type == STT_OBJECT && s.shndx != SHN_UNDEF && s.size > 0 &&
            std::find(objects.begin(), objects.end(), s.name) == objects.end())
          objects.push_back(s.name);
      std::sort(objects.begin(), objects.end());
      if (objects.empty()) os << " (it has no data symbols)";
      else {
        os << " (data objects: ";
        for (std::size_t i = 0; i < objects.size() && i < 6; i++) os << (i ? ", " : "") << objects[i];
        os << (objects.size() > 6 ? ", ...)" : ")");
      }
      return Error{os.str()};
    }
    if (found->type == STT_TLS)
      return err("spec: value '", v.text, "': '", g->symbol,
                 "' is thread-local: each thread has its own, which uprof cannot address yet");
    if (found->type == STT_FUNC || found->type == STT_GNU_IFUNC || found->in_exec_section)
      return err("spec: value '", v.text, "': '", g->symbol, "' is code, not data");
    g->address = found->value;
    const bool scalar = found->size == 1 || found->size == 2 || found->size == 4 || found->size == 8;
    g->size = g->offset == 0 && scalar ? static_cast<uint8_t>(found->size) : 0;
  }
  return ok();
}

}  // namespace uprof
