#include "uprof/resolve/dwarf/go_runtime.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <cstring>
#include <memory>

namespace uprof {
namespace {

struct DwarfCloser {
  void operator()(Dwarf* d) const { dwarf_end(d); }
};

bool named(Dwarf_Die* die, const char* name) {
  const char* n = dwarf_diename(die);
  return n && std::strcmp(n, name) == 0;
}

// The member `goid` of the struct `st`.
std::optional<uint32_t> goid_in(Dwarf_Die* st) {
  Dwarf_Die m, next;
  if (dwarf_child(st, &m) != 0) return std::nullopt;
  while (true) {
    if (dwarf_tag(&m) == DW_TAG_member && named(&m, "goid")) {
      Dwarf_Attribute a;
      Dwarf_Word off = 0;
      if (!dwarf_attr(&m, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &off) != 0) return std::nullopt;
      return static_cast<uint32_t>(off);
    }
    if (dwarf_siblingof(&m, &next) != 0) return std::nullopt;
    m = next;
  }
}

}  // namespace

std::optional<uint32_t> go_goid_offset(Elf* elf) {
  std::unique_ptr<Dwarf, DwarfCloser> dw(elf ? dwarf_begin_elf(elf, DWARF_C_READ, nullptr) : nullptr);
  if (!dw) return std::nullopt;
  Dwarf_Off off = 0, next = 0;
  size_t header = 0;
  // Go writes its types into the unit of their package: runtime.g is a top-level DIE of
  // the unit named "runtime".
  while (dwarf_nextcu(dw.get(), off, &next, &header, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu, die, sibling;
    const Dwarf_Off cu_die = off + header;
    off = next;
    if (!dwarf_offdie(dw.get(), cu_die, &cu) || !named(&cu, "runtime") || dwarf_child(&cu, &die) != 0) continue;
    while (true) {
      if (dwarf_tag(&die) == DW_TAG_structure_type && named(&die, "runtime.g")) return goid_in(&die);
      if (dwarf_siblingof(&die, &sibling) != 0) break;
      die = sibling;
    }
  }
  return std::nullopt;
}

}  // namespace uprof
