#include "uprof/present/probe_listing.h"

#include <fnmatch.h>

#include "uprof/present/text_table.h"

namespace uprof {

std::pair<std::string, std::size_t> render_function_list(const Image& img, const std::string& pattern,
                                                          const SignatureLookup& signature) {
  TextTable t({{"FUNCTION"}, {"ADDRESS", Align::Right}, {"OFFSET", Align::Right}, {"SIZE", Align::Right},
               {"SIGNATURE"}});
  // The same glob rules as a probe spec, so what --list shows is what -e probes.
  std::vector<const Function*> hits;
  if (pattern.empty()) {
    for (const auto& f : img.functions.functions()) hits.push_back(&f);
  } else {
    hits = img.functions.find_glob(pattern);
    if (hits.empty()) hits = img.functions.find_exact(pattern);
    if (hits.empty()) hits = img.functions.find_cxx(pattern);
  }
  for (const Function* f : hits) {
    std::string names = f->display_name();
    for (std::size_t i = 1; i < f->names.size(); i++)
      if (f->names[i].name != f->name()) names += " = " + f->names[i].name;
    if (f->is_ifunc) names += " [ifunc]";
    auto off = vaddr_to_offset(img.elf.loads(), f->addr);
    t.add_row({names, hex(f->addr), off ? hex(*off) : "-", std::to_string(f->size),
               signature ? signature(f->addr) : ""});
  }
  return {t.render(), hits.size()};
}

std::string render_resolved(const std::vector<ResolvedProbe>& probes, const std::vector<std::string>& first_insn) {
  std::vector<TextTable::Column> cols{{"SPEC"}, {"PROBE"}, {"FILE"}, {"OFFSET", Align::Right}, {"ADDRESS", Align::Right},
                                      {"BUILD-ID"}};
  bool with_insn = first_insn.size() == probes.size() && !probes.empty();
  if (with_insn) cols.push_back({"FIRST-INSN"});
  TextTable t(std::move(cols));
  for (std::size_t i = 0; i < probes.size(); i++) {
    const auto& p = probes[i];
    std::vector<std::string> row{p.spec, p.label(), p.path, hex(p.file_offset), hex(p.vaddr),
                                 p.build_id.empty() ? "-" : p.build_id};
    if (with_insn) row.push_back(first_insn[i]);
    t.add_row(std::move(row));
  }
  return t.render();
}

}  // namespace uprof
