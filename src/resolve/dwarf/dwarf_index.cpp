#include "uprof/resolve/dwarf/dwarf_index.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "uprof/resolve/dwarf/dwarf_types.h"
#include "uprof/util/hex.h"

namespace uprof {
namespace {

// Nesting deeper than this is corrupt data, not code (a function in a class in
// a namespace in a lexical block is 5 levels).
constexpr int kMaxNesting = 256;

struct DwarfSections {
  bool info = false;   // .debug_info with contents
  bool types = false;  // DWARF 4 .debug_types with contents
};

DwarfSections find_dwarf_sections(Elf* elf) {
  DwarfSections found;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return found;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || sh.sh_size == 0) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name) continue;
    if (!std::strcmp(name, ".debug_info") || !std::strcmp(name, ".zdebug_info")) found.info = true;
    if (!std::strcmp(name, ".debug_types") || !std::strcmp(name, ".zdebug_types")) found.types = true;
  }
  return found;
}

// Where the file has code. DWARF of C++ inline functions and templates that
// the linker dropped as duplicate COMDAT copies is kept, with its addresses
// set to 0 (or a -1/-2 tombstone): such "functions" lie outside every
// executable section and are not indexed. A separate debug file keeps the
// section headers (as SHT_NOBITS), so this works there too.
class CodeAddresses {
 public:
  explicit CodeAddresses(Elf* elf) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size)
        ranges_.emplace_back(sh.sh_addr, sh.sh_addr + sh.sh_size);
    }
    if (!ranges_.empty()) return;
    size_t nph = 0;
    if (elf_getphdrnum(elf, &nph) != 0) return;
    for (size_t i = 0; i < nph; i++) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
        ranges_.emplace_back(ph.p_vaddr, ph.p_vaddr + ph.p_memsz);
    }
  }

  bool holds(uint64_t addr) const {
    if (ranges_.empty()) return addr != 0 && addr < ~uint64_t{1};  // nothing to go by: only tombstones
    return std::any_of(ranges_.begin(), ranges_.end(), [&](auto& r) { return addr >= r.first && addr < r.second; });
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
};

struct Candidate {
  Dwarf_Die die;  // a DW_TAG_subprogram with code
  Dwarf_Die cu;
};

bool has_code(Dwarf_Die* die) {
  return !dwarf_hasattr(die, DW_AT_declaration) &&
         (dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges) || dwarf_hasattr(die, DW_AT_entry_pc));
}

// One pass over the DIE trees: records the scopes (namespaces, classes) that
// names are qualified with and the subprograms that own code. Declarations,
// abstract instances of inline functions (DW_AT_inline, no pc) and inlined
// copies (DW_TAG_inlined_subroutine) are not functions one can probe.
class Walker {
 public:
  Walker(const std::string& path, DwarfScopes& scopes, std::vector<Candidate>& out)
      : path_(path), scopes_(scopes), out_(out) {}

  Status unit(Dwarf_Die* unit_die, uint64_t end_key) {
    cu_ = *unit_die;
    return children(unit_die, end_key, 0);
  }

  // "dwarf: ./app: corrupt DWARF at DIE 0x2a: invalid DWARF"
  Error corrupt(Dwarf_Die* at) const { return corrupt("DIE", dwarf_dieoffset(at)); }
  Error corrupt(const char* what, uint64_t offset) const {
    return err("dwarf: ", path_, ": corrupt DWARF at ", what, " ", hex(offset), ": ", dwarf_errmsg(-1));
  }

 private:
  Status children(Dwarf_Die* parent, uint64_t parent_end, int depth) {
    if (depth > kMaxNesting) return ok();
    Dwarf_Die child, next;
    int r = dwarf_child(parent, &child);
    if (r < 0) return corrupt(parent);
    if (r > 0) return ok();
    while (true) {
      int s = dwarf_siblingof(&child, &next);
      if (s < 0) return corrupt(&child);
      // A DIE's subtree ends where its next sibling starts, or where its
      // parent's does for the last child.
      uint64_t end = s == 0 ? dwarf_die_key(&next) : parent_end;
      UPROF_TRY(visit(&child, end, depth));
      if (s != 0) return ok();
      child = next;
    }
  }

  Status visit(Dwarf_Die* die, uint64_t end, int depth) {
    switch (dwarf_tag(die)) {
      case DW_TAG_namespace:
      case DW_TAG_structure_type:
      case DW_TAG_class_type:
      case DW_TAG_union_type:
      case DW_TAG_interface_type:
        if (!dwarf_haschildren(die)) return ok();
        scopes_.add(die, end);
        return children(die, end, depth + 1);
      case DW_TAG_subprogram:
        if (has_code(die)) out_.push_back({*die, cu_});
        // GNU C nested functions and local classes live inside.
        return dwarf_haschildren(die) ? children(die, end, depth + 1) : ok();
      case DW_TAG_lexical_block:
        return children(die, end, depth + 1);
      default:
        return ok();
    }
  }

  const std::string& path_;
  DwarfScopes& scopes_;
  std::vector<Candidate>& out_;
  Dwarf_Die cu_{};
};

// Walks the units of .debug_info, or of the DWARF 4 .debug_types section.
Status walk_section(Dwarf* dbg, bool types, Walker& walker) {
  Dwarf_Off off = 0, next = 0;
  size_t header = 0;
  uint64_t signature = 0;
  Dwarf_Off type_offset = 0;
  while (true) {
    int r = dwarf_next_unit(dbg, off, &next, &header, nullptr, nullptr, nullptr, nullptr,
                            types ? &signature : nullptr, types ? &type_offset : nullptr);
    if (r > 0) return ok();
    if (r < 0) return walker.corrupt("unit", off);
    Dwarf_Die unit;
    Dwarf_Die* got = types ? dwarf_offdie_types(dbg, off + header, &unit) : dwarf_offdie(dbg, off + header, &unit);
    if (!got) return walker.corrupt("unit", off);
    UPROF_TRY(walker.unit(&unit, next | (types ? kDwarfTypesSectionBit : 0)));
    off = next;
  }
}

// The DIEs a function's description is spread over: the DIE with the code,
// then what DW_AT_abstract_origin / DW_AT_specification lead to (the abstract
// instance of an inline function, the declaration inside its class).
std::vector<Dwarf_Die> origin_chain(Dwarf_Die* die) {
  std::vector<Dwarf_Die> chain{*die};
  for (int hop = 0; hop < 4; hop++) {
    Dwarf_Attribute a;
    Dwarf_Die next;
    Dwarf_Die* cur = &chain.back();
    if (!dwarf_attr(cur, DW_AT_abstract_origin, &a) && !dwarf_attr(cur, DW_AT_specification, &a)) break;
    if (!dwarf_formref_die(&a, &next)) break;
    chain.push_back(next);
  }
  return chain;
}

const char* string_attr(Dwarf_Die* die, unsigned attr) {
  Dwarf_Attribute a;
  return dwarf_attr_integrate(die, attr, &a) ? dwarf_formstring(&a) : nullptr;
}

DwarfParam read_param(Dwarf_Die* p, const DwarfScopes& scopes, TypeStyle style) {
  DwarfParam out;
  if (const char* n = string_attr(p, DW_AT_name)) out.name = n;
  out.type = dwarf_type_of(p, scopes, style, true);
  out.die_offset = dwarf_dieoffset(p);
  out.artificial = dwarf_flag_integrate(p, DW_AT_artificial);
  return out;
}

// Parameters come from the first DIE of the chain that lists any: the DIE
// with the code normally does (and its parameter DIEs are the ones with
// locations); a concrete copy that lists none falls back to its origin.
void read_params(std::vector<Dwarf_Die>& chain, const DwarfScopes& scopes, TypeStyle style, DwarfFunction& f) {
  bool have_params = false;
  for (auto& link : chain) {
    bool listed_here = false;
    Dwarf_Die child, next;
    if (dwarf_child(&link, &child) != 0) continue;
    while (true) {
      int tag = dwarf_tag(&child);
      if (tag == DW_TAG_unspecified_parameters) f.variadic = true;
      if (tag == DW_TAG_formal_parameter && !have_params) {
        f.params.push_back(read_param(&child, scopes, style));
        listed_here = true;
      }
      if (dwarf_siblingof(&child, &next) != 0) break;
      child = next;
    }
    have_params = have_params || listed_here;
  }
}

// The entry address: DW_AT_entry_pc (an address, or in DWARF 5 an offset from
// the function's base), else DW_AT_low_pc, else the first of its DW_AT_ranges:
// gcc lists the range holding the entry first and a ".cold" part after it.
std::optional<uint64_t> entry_of(Dwarf_Die* die, const std::vector<std::pair<uint64_t, uint64_t>>& listed) {
  Dwarf_Addr low = 0;
  bool has_low = dwarf_lowpc(die, &low) == 0;
  Dwarf_Attribute a;
  if (dwarf_attr(die, DW_AT_entry_pc, &a)) {
    Dwarf_Addr addr = 0;
    Dwarf_Word delta = 0;
    if (dwarf_formaddr(&a, &addr) == 0) return addr;
    if (dwarf_formudata(&a, &delta) == 0) {
      if (has_low) return low + delta;
      if (!listed.empty()) return listed.front().first + delta;
    }
  }
  if (has_low) return low;
  if (!listed.empty()) return listed.front().first;
  return std::nullopt;
}

Result<std::optional<DwarfFunction>> read_function(Candidate& c, const DwarfScopes& scopes,
                                                   const CodeAddresses& code, const Walker& walker) {
  Dwarf_Die* die = &c.die;
  std::vector<std::pair<uint64_t, uint64_t>> listed;
  Dwarf_Addr base = 0, start = 0, end = 0;
  ptrdiff_t off = 0;
  while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) listed.emplace_back(start, end);
  if (off < 0) return walker.corrupt(die);

  auto entry = entry_of(die, listed);
  if (!entry || !code.holds(*entry)) return std::optional<DwarfFunction>();  // a dropped duplicate

  DwarfFunction f;
  f.entry = *entry;
  for (auto& r : listed) {
    if (r.second <= r.first || !code.holds(r.first)) continue;
    bool holds_entry = f.low == f.high && f.entry >= r.first && f.entry < r.second;
    if (holds_entry) {
      f.low = r.first;
      f.high = r.second;
      f.ranges.insert(f.ranges.begin(), r);
    } else {
      f.ranges.push_back(r);
    }
  }

  f.name = scopes.qualified_name(die);
  const char* linkage = string_attr(die, DW_AT_linkage_name);
  if (!linkage) linkage = string_attr(die, DW_AT_MIPS_linkage_name);
  if (linkage) f.linkage_name = linkage;
  if (f.name.empty()) f.name = f.linkage_name;
  if (f.name.empty()) return std::optional<DwarfFunction>();  // nothing to call it by

  int language = dwarf_srclang(&c.cu);
  f.params_known = language != DW_LANG_Mips_Assembler;
  TypeStyle style = type_style_for_language(language);
  f.return_type = dwarf_type_of(die, scopes, style, false);
  auto chain = origin_chain(die);
  read_params(chain, scopes, style, f);
  f.die_offset = dwarf_dieoffset(die);
  f.cu_offset = dwarf_dieoffset(&c.cu);
  return std::optional<DwarfFunction>(std::move(f));
}

}  // namespace

std::string DwarfFunction::signature() const {
  std::string s = return_type + " " + name + "(";
  if (!params_known) return s + "?)";
  for (std::size_t i = 0; i < params.size(); i++) {
    if (i) s += ", ";
    s += params[i].type;
    if (!params[i].name.empty()) s += " " + params[i].name;
  }
  if (variadic) s += params.empty() ? "..." : ", ...";
  return s + ")";
}

void DwarfIndex::DwarfEnd::operator()(Dwarf* d) const { dwarf_end(d); }

DwarfIndex::DwarfIndex() = default;
DwarfIndex::DwarfIndex(DwarfIndex&&) noexcept = default;
DwarfIndex& DwarfIndex::operator=(DwarfIndex&&) noexcept = default;
DwarfIndex::~DwarfIndex() = default;

Result<DwarfIndex> DwarfIndex::build(Elf* elf, const std::string& path_for_messages) {
  DwarfIndex index;
  if (!elf) return err("dwarf: ", path_for_messages, ": no ELF handle");
  DwarfSections sections = find_dwarf_sections(elf);
  if (!sections.info && !sections.types) return index;  // stripped: nothing to describe

  index.dwarf_.reset(dwarf_begin_elf(elf, DWARF_C_READ, nullptr));
  if (!index.dwarf_) return err("dwarf: ", path_for_messages, ": unreadable DWARF: ", dwarf_errmsg(-1));

  DwarfScopes scopes;
  std::vector<Candidate> candidates;
  Walker walker(path_for_messages, scopes, candidates);
  if (sections.info) UPROF_TRY(walk_section(index.dwarf_.get(), false, walker));
  if (sections.types) UPROF_TRY(walk_section(index.dwarf_.get(), true, walker));
  scopes.finish();

  CodeAddresses code(elf);
  index.functions_.reserve(candidates.size());
  for (auto& c : candidates) {
    UPROF_ASSIGN(auto f, read_function(c, scopes, code, walker));
    if (f) index.functions_.push_back(std::move(*f));
  }
  index.finish();
  return index;
}

void DwarfIndex::finish() {
  std::sort(functions_.begin(), functions_.end(), [](const DwarfFunction& a, const DwarfFunction& b) {
    return a.entry != b.entry ? a.entry < b.entry : a.die_offset < b.die_offset;
  });
  spans_.clear();
  for (std::size_t i = 0; i < functions_.size(); i++)
    for (auto& r : functions_[i].ranges) spans_.push_back({r.first, r.second, static_cast<uint32_t>(i)});
  std::sort(spans_.begin(), spans_.end(), [](const Span& a, const Span& b) { return a.low < b.low; });
  spans_max_high_.resize(spans_.size());
  uint64_t max_high = 0;
  for (std::size_t i = 0; i < spans_.size(); i++) spans_max_high_[i] = max_high = std::max(max_high, spans_[i].high);
}

const DwarfFunction* DwarfIndex::at_entry(uint64_t addr) const {
  auto it = std::partition_point(functions_.begin(), functions_.end(),
                                 [&](const DwarfFunction& f) { return f.entry < addr; });
  return it != functions_.end() && it->entry == addr ? &*it : nullptr;
}

const DwarfFunction* DwarfIndex::containing(uint64_t addr) const {
  auto it = std::partition_point(spans_.begin(), spans_.end(), [&](const Span& s) { return s.low <= addr; });
  const Span* best = nullptr;
  // Walk back over the spans starting at or before addr while one of them
  // could still reach past it; normally the first one looked at decides.
  for (auto i = it - spans_.begin() - 1; i >= 0 && spans_max_high_[i] > addr; i--) {
    const Span& s = spans_[i];
    if (s.high > addr && (!best || s.high - s.low < best->high - best->low)) best = &s;
  }
  return best ? &functions_[best->function] : nullptr;
}

std::vector<const DwarfFunction*> DwarfIndex::named(std::string_view qualified_name) const {
  std::vector<const DwarfFunction*> out;
  for (auto& f : functions_)
    if (f.name == qualified_name) out.push_back(&f);
  return out;
}

}  // namespace uprof
