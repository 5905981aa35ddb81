#include "uprof/present/probe_listing.h"

#include <fnmatch.h>

#include "uprof/analyse/probe_functions.h"
#include "uprof/present/text_table.h"
#include "uprof/util/hex.h"

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

namespace {
// A USDT probe has no return; one half of a start/done pair is said to be one.
std::string auto_pair_note(const ResolvedProbe& p) {
  auto half = usdt_pair_half(p.function);
  if (!half) return "- (USDT)";
  return std::string(half->second ? "closes " : "opens ") + half->first + " (a USDT pair, when both halves are probed)";
}
}  // namespace

std::string describe_returns(const ResolvedProbe& p, const ReturnRisk* risk) {
  if (p.offset_in_function != 0 || p.function.empty() || p.is_site()) return "-";
  if (p.is_usdt()) return auto_pair_note(p);
  if (!risk) return "return probe";
  if (risk->exits.empty()) return "none: " + risk->exits_blocker;
  std::size_t tail = 0;
  for (const auto& x : risk->exits) tail += x.tail_call;
  std::string s = "at " + std::to_string(risk->exits.size()) + " exit" + (risk->exits.size() > 1 ? "s" : "");
  if (tail) s += " (" + std::to_string(tail) + " tail call" + (tail > 1 ? "s" : "") + ")";
  return s;
}

std::string render_resolved(const std::vector<ResolvedProbe>& probes, const std::vector<std::string>& first_insn,
                            const std::vector<std::string>& returns) {
  std::vector<TextTable::Column> cols{{"SPEC"}, {"PROBE"}, {"FILE"}, {"OFFSET", Align::Right}, {"ADDRESS", Align::Right},
                                      {"BUILD-ID"}};
  bool with_insn = first_insn.size() == probes.size() && !probes.empty();
  bool with_returns = returns.size() == probes.size() && !probes.empty();
  if (with_returns) cols.push_back({"RETURNS"});
  if (with_insn) cols.push_back({"FIRST-INSN"});
  TextTable t(std::move(cols));
  for (std::size_t i = 0; i < probes.size(); i++) {
    const auto& p = probes[i];
    std::vector<std::string> row{p.spec, p.describe(), p.path, hex(p.file_offset), hex(p.vaddr),
                                 p.build_id.empty() ? "-" : p.build_id};
    if (with_returns) row.push_back(returns[i]);
    if (with_insn) row.push_back(first_insn[i]);
    t.add_row(std::move(row));
  }
  return t.render();
}

std::string describe_location(Arch arch, const std::vector<LocationPiece>& pieces) {
  const ArchInfo& a = arch_info(arch);
  auto reg = [&](uint16_t idx) {
    const RegInfo* r = find_reg_by_perf_index(a, idx);
    return "%" + std::string(r ? r->name : "?");
  };
  auto offset = [](int64_t off) { return off ? (off > 0 ? "+" : "") + std::to_string(off) : std::string(); };
  std::string s;
  for (const auto& p : pieces) {
    std::string one;
    switch (p.where) {
      case LocationPiece::Where::Register:
        one = p.deref ? "[" + reg(p.perf_reg) + offset(p.deref_offset) + "]" : reg(p.perf_reg);
        break;
      case LocationPiece::Where::Stack:
        one = "[sp" + offset(p.stack_offset) + "]";
        if (p.deref) one = "[" + one + offset(p.deref_offset) + "]";
        break;
      case LocationPiece::Where::Constant:
        one = "= " + std::to_string(p.constant) + " (constant)";
        break;
    }
    s += (s.empty() ? "" : ":") + one;
  }
  if (pieces.size() == 1 && pieces[0].where != LocationPiece::Where::Constant && pieces[0].size != 8)
    s += " (" + std::to_string(pieces[0].size) + " bytes)";
  return s;
}

std::string render_vars(const ResolvedProbe& probe, const FunctionParams& params) {
  const std::string name = probe.is_site() ? probe.describe() : probe.label();
  std::string out = name + (probe.offset_in_function || probe.is_site() ? "" : " at entry") + " (" + probe.path +
                    ", file offset " + hex(probe.file_offset) + "):\n";
  std::size_t width = 8;
  for (const auto& p : params.params) width = std::max(width, p.type.name.size() + 1 + p.name.size());
  width = std::max(width, params.return_type.name.size() + 8);
  auto line = [&](const std::string& left, const std::string& where) {
    out += "  " + left + std::string(width + 2 - std::min(width + 1, left.size()), ' ') + where + "\n";
  };
  for (const auto& p : params.params)
    line(p.type.name + " " + p.name,
         p.available ? describe_location(probe.arch, p.pieces) : "<unavailable: " + p.reason + ">");
  // A source line or an inlined copy has no return of its own.
  if (!probe.is_site() && !(params.return_type.kind == ValueType::Kind::Unknown && params.return_type.name == "void"))
    line("returns " + params.return_type.name,
         params.return_value.empty() ? "<not in a sample: " +
                                           std::string(params.return_type.kind == ValueType::Kind::Float
                                                           ? "a floating-point register"
                                                           : "memory the caller chose") + ">"
                                     : describe_location(probe.arch, params.return_value) + " at the return");
  if (params.clone) out += "  (a compiler clone: its parameters may differ from the source's)\n";
  return out;
}

}  // namespace uprof
