#include "uprof/resolve/dwarf/inlined_copies.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <optional>
#include <tuple>

#include "uprof/resolve/elf/cxx_name.h"

namespace uprof {
namespace {

constexpr int kMaxNesting = 256;  // deeper is corrupt data, not code

const char* string_attr(Dwarf_Die* die, unsigned attr) {
  Dwarf_Attribute a;
  return dwarf_attr_integrate(die, attr, &a) ? dwarf_formstring(&a) : nullptr;
}

// DW_AT_entry_pc, else DW_AT_low_pc, else the lowest start of DW_AT_ranges.
std::optional<uint64_t> entry_of(Dwarf_Die* die) {
  Dwarf_Addr a = 0;
  if (dwarf_entrypc(die, &a) == 0 && a) return a;
  if (dwarf_lowpc(die, &a) == 0 && a) return a;
  Dwarf_Addr base = 0, start = 0, end = 0;
  std::optional<uint64_t> lowest;
  for (ptrdiff_t off = dwarf_ranges(die, 0, &base, &start, &end); off > 0;
       off = dwarf_ranges(die, off, &base, &start, &end))
    if (start && (!lowest || start < *lowest)) lowest = start;
  return lowest;
}

void walk(Dwarf_Die* parent, int depth, std::vector<InlinedCopy>& out) {
  if (depth > kMaxNesting) return;
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_inlined_subroutine) {
      auto entry = entry_of(&child);
      const char* name = string_attr(&child, DW_AT_name);
      if (entry && name) {
        const char* linkage = string_attr(&child, DW_AT_linkage_name);
        InlinedCopy c{.name = name, .linkage_name = linkage ? linkage : "", .demangled = {}, .entry = *entry,
                      .die_offset = dwarf_dieoffset(&child), .ranges = {}};
        if (linkage) c.demangled = demangle(linkage);
        Dwarf_Addr base = 0, start = 0, end = 0;
        for (ptrdiff_t off = dwarf_ranges(&child, 0, &base, &start, &end); off > 0;
             off = dwarf_ranges(&child, off, &base, &start, &end))
          // gcc at -O2 gives a copy empty ranges ([0x1280, 0x1280)) where its rows are
          // "views" at one address of its caller's code: the address is the copy's still.
          if (start) c.ranges.emplace_back(start, std::max<uint64_t>(end, start + 1));
        out.push_back(std::move(c));
      }
    }
    // Copies sit in functions, their blocks, other copies, and (C++) in classes and namespaces.
    if (dwarf_haschildren(&child) &&
        (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine ||
         tag == DW_TAG_namespace || tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
         tag == DW_TAG_try_block || tag == DW_TAG_catch_block))
      walk(&child, depth + 1, out);
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace

Result<InlinedCopies> InlinedCopies::build(Dwarf* dbg, const std::string& path) {
  InlinedCopies out;
  if (!dbg) return out;
  Dwarf_Off off = 0, next = 0;
  size_t header = 0;
  while (true) {
    int r = dwarf_nextcu(dbg, off, &next, &header, nullptr, nullptr, nullptr);
    if (r > 0) break;
    if (r < 0) return err("dwarf: ", path, ": corrupt unit at offset ", off, ": ", dwarf_errmsg(-1));
    Dwarf_Die cu;
    if (dwarf_offdie(dbg, off + header, &cu)) walk(&cu, 0, out.copies_);
    off = next;
  }
  std::sort(out.copies_.begin(), out.copies_.end(),
            [](const InlinedCopy& a, const InlinedCopy& b) { return std::tie(a.name, a.entry) < std::tie(b.name, b.entry); });
  return out;
}

std::vector<const InlinedCopy*> InlinedCopies::named(std::string_view name) const {
  std::vector<const InlinedCopy*> out;
  auto it = std::lower_bound(copies_.begin(), copies_.end(), name,
                             [](const InlinedCopy& c, std::string_view n) { return c.name < n; });
  for (; it != copies_.end() && it->name == name; ++it) out.push_back(&*it);
  if (out.empty())
    for (const InlinedCopy& c : copies_)
      if (!c.linkage_name.empty() && c.linkage_name == name) out.push_back(&c);
  // A C++ name, qualified, with or without its parameter list: strictly first, then
  // without ABI tags and __cxx11 (as FunctionTable::find_cxx).
  const bool with_params = name.find('(') != std::string_view::npos;
  for (bool loose : {false, true}) {
    if (!out.empty() || (name.find("::") == std::string_view::npos && !with_params)) break;
    for (const InlinedCopy& c : copies_) {
      if (c.demangled.empty()) continue;
      const bool hit = with_params ? cxx_name_matches(name, c.demangled, loose) ||
                                         cxx_name_matches(name, strip_cxx_qualifiers(c.demangled), loose)
                                   : cxx_name_matches(name, strip_cxx_parameters(c.demangled), loose);
      if (hit) out.push_back(&c);
    }
  }
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->entry < b->entry; });
  return out;
}

}  // namespace uprof
