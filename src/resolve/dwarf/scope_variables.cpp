#include "uprof/resolve/dwarf/scope_variables.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "uprof/resolve/dwarf/dwarf_types.h"

namespace uprof {

std::vector<DwarfParam> scope_variables(Dwarf* dbg, uint64_t function_die_offset, uint64_t pc, uint64_t scope_die) {
  std::vector<DwarfParam> out;
  Dwarf_Die fn, cu;
  if (!dbg || !dwarf_offdie(dbg, function_die_offset, &fn) || !dwarf_diecu(&fn, &cu, nullptr, nullptr)) return out;
  Dwarf_Die* scopes = nullptr;
  int n = 0;
  if (scope_die) {
    scopes = static_cast<Dwarf_Die*>(std::malloc(sizeof(Dwarf_Die)));
    if (scopes && dwarf_offdie(dbg, scope_die, scopes)) n = 1;
  } else {
    // dwarf_getscopes follows an inlined copy to the scopes of its abstract definition
    // (the inlined function, then the unit); the copy's caller is its parent in the
    // tree, which dwarf_getscopes_die walks: the innermost scope at pc, then every DIE
    // that holds it (blocks, enclosing inlined copies) out to the function.
    n = dwarf_getscopes(&cu, pc, &scopes);
    Dwarf_Die* held = nullptr;
    const int m = n > 0 ? dwarf_getscopes_die(&scopes[0], &held) : 0;
    if (m > 0) {
      std::free(scopes);
      scopes = held;
      n = m;
    } else {
      std::free(held);
    }
  }
  if (n <= 0) {
    std::free(scopes);
    return out;
  }
  static const DwarfScopes kNoScopes;
  const TypeStyle style = type_style_for_language(dwarf_srclang(&cu));
  for (int i = 0; i < n; i++) {
    Dwarf_Die* scope = &scopes[i];
    const int tag = dwarf_tag(scope);
    if (tag == DW_TAG_compile_unit || tag == DW_TAG_partial_unit) break;
    Dwarf_Die c;
    for (int r = dwarf_child(scope, &c); r == 0; r = dwarf_siblingof(&c, &c)) {
      const int ct = dwarf_tag(&c);
      if (ct != DW_TAG_formal_parameter && ct != DW_TAG_variable) continue;
      if (dwarf_hasattr_integrate(&c, DW_AT_declaration)) continue;
      const char* name = dwarf_diename(&c);
      if (!name) continue;
      if (std::any_of(out.begin(), out.end(), [&](const DwarfParam& p) { return p.name == name; })) continue;
      out.push_back({.name = name, .type = dwarf_type_of(&c, kNoScopes, style, true), .die_offset = dwarf_dieoffset(&c),
                     .artificial = dwarf_flag_integrate(&c, DW_AT_artificial)});
    }
    // A line sees out to its function, through every inlined copy it is in (the
    // copy's caller's blocks and locals, as gdb shows them a frame up); an inlined
    // copy's entry (`scope_die`) sees its own parameters, as a function's entry does.
    if (tag == DW_TAG_subprogram || (tag == DW_TAG_inlined_subroutine && scope_die)) break;
  }
  std::free(scopes);
  return out;
}

}  // namespace uprof
