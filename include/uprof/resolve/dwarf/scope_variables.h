// The variables a source line sees: `-e 'lines.c:24 $vars'` and `-e 'lines.c:24 acc'`.
// At a pc, the parameters and locals of the innermost function or inlined copy holding
// it, from the innermost lexical block out (a name an inner block redeclares hides the
// outer one), found with the scopes of pc (dwarf_getscopes):
//
//   DW_TAG_subprogram loop_sum           n, k (parameters), acc
//     DW_TAG_lexical_block [0x1220,..)   i                       <- pc 0x1230: i, acc, n, k
//
// In an inlined copy's code the line sees the copy's own parameters (DW_TAG_formal_parameter
// with an abstract origin) first, then its caller's scopes out to the function, as gdb
// shows them a frame up (tests/fixtures/lines.c, `times` inlined in scaled_sum's loop):
//
//   DW_TAG_subprogram scaled_sum         n, k, acc
//     DW_TAG_lexical_block               i
//       DW_TAG_inlined_subroutine times  x, by                 <- its body: x, by, i, acc, n, k
//
// An inlined copy's entry (`scope_die`, `-e times`) sees only the copy's parameters, as a
// function's entry sees its own.
#pragma once

#include <cstdint>
#include <vector>

#include "uprof/resolve/dwarf/dwarf_index.h"

namespace uprof {

// Innermost first; each with the DIE that holds its location at this copy of the code.
// `scope_die`, when not 0, is the one scope to read (an inlined copy's DIE at its entry).
std::vector<DwarfParam> scope_variables(Dwarf* dbg, uint64_t function_die_offset, uint64_t pc, uint64_t scope_die = 0);

}  // namespace uprof
