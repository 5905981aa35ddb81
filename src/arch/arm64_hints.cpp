#include "uprof/arch/arm64_hints.h"

namespace uprof {
namespace {

constexpr Arm64Hint kHints[] = {
    {.number = 0x00, .name = "nop", .steppable = true, .writes = 0},
    {.number = 0x07, .name = "xpaclri", .steppable = true, .writes = 30},
    {.number = 0x08, .name = "pacia1716", .steppable = true, .writes = 17},
    {.number = 0x0a, .name = "pacib1716", .steppable = true, .writes = 17},
    {.number = 0x0c, .name = "autia1716", .steppable = false, .writes = 17},
    {.number = 0x0e, .name = "autib1716", .steppable = false, .writes = 17},
    {.number = 0x18, .name = "paciaz", .steppable = true, .writes = 30},
    {.number = 0x19, .name = "paciasp", .steppable = true, .writes = 30},
    {.number = 0x1a, .name = "pacibz", .steppable = true, .writes = 30},
    {.number = 0x1b, .name = "pacibsp", .steppable = true, .writes = 30},
    {.number = 0x1c, .name = "autiaz", .steppable = false, .writes = 30},
    {.number = 0x1d, .name = "autiasp", .steppable = false, .writes = 30},
    {.number = 0x1e, .name = "autibz", .steppable = false, .writes = 30},
    {.number = 0x1f, .name = "autibsp", .steppable = false, .writes = 30},
    {.number = 0x20, .name = "bti", .steppable = true, .writes = 0},
    {.number = 0x22, .name = "bti c", .steppable = true, .writes = 0},
    {.number = 0x24, .name = "bti j", .steppable = true, .writes = 0},
    {.number = 0x26, .name = "bti jc", .steppable = true, .writes = 0},
};

}  // namespace

std::span<const Arm64Hint> arm64_hints() { return kHints; }

std::optional<uint8_t> arm64_hint_number(uint32_t insn) {
  if ((insn & 0xfffff01f) != 0xd503201f) return std::nullopt;
  return static_cast<uint8_t>((insn >> 5) & 0x7f);
}

const Arm64Hint* find_arm64_hint(uint32_t insn) {
  auto n = arm64_hint_number(insn);
  if (!n) return nullptr;
  for (const Arm64Hint& h : kHints)
    if (h.number == *n) return &h;
  return nullptr;
}

}  // namespace uprof
