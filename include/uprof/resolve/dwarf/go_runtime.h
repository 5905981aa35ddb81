// What a Go program's DWARF says of its runtime that uprof reads at a probe: where the
// goroutine id is in the runtime's `g` (the struct ABIInternal keeps the running one in
// r14 / x28). go 1.19's runtime.g has `goid int64` at 152; other versions move it, so it
// is read from the program's own DWARF (the DW_TAG_structure_type runtime.g of its
// `runtime` unit):
//
//   <1><5f631>  DW_TAG_structure_type  DW_AT_name runtime.g  DW_AT_byte_size 392
//   <2><5f714>  DW_TAG_member          DW_AT_name goid       DW_AT_data_member_location 152
#pragma once

#include <cstdint>
#include <optional>

typedef struct Elf Elf;

namespace uprof {

// The offset of `goid` in runtime.g, from the DWARF of `elf`; nullopt when the file has
// no such DWARF (built with -ldflags=-w, or no Go program).
std::optional<uint32_t> go_goid_offset(Elf* elf);

}  // namespace uprof
