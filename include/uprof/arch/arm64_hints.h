// The arm64 hint instructions (HINT #n, n = CRm:op2 in bits 11:5 of d503201f | n << 5)
// that uprof names or reasons about, in one table:
//  - `steppable`: the kernel single-steps it under a uprobe; any other hint is refused
//    (aarch64_insn_is_steppable_hint(), arch/arm64/kernel/insn.c);
//  - `writes`: the register a pointer-authentication hint signs or strips in place
//    (x30 for the *sp, *z forms and xpaclri; x17 for the *1716 forms), which Capstone 4
//    does not list;
//  - `name`: Capstone 4 prints the newer hints as `hint #N`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace uprof {

struct Arm64Hint {
  uint8_t number = 0;
  std::string_view name{};
  bool steppable = false;
  uint8_t writes = 0;  // the x register it writes (30 or 17); 0: none
};

std::span<const Arm64Hint> arm64_hints();
// The hint number of `insn` when it is a HINT instruction.
std::optional<uint8_t> arm64_hint_number(uint32_t insn);
// The table's row for `insn`, when it is a hint the table lists.
const Arm64Hint* find_arm64_hint(uint32_t insn);

}  // namespace uprof
