// A number as people read addresses and offsets, in every message and table:
//   hex(0x1139) == "0x1139", hex(0) == "0x0" (lower case, no padding).
#pragma once

#include <cstdint>
#include <string>

namespace uprof {

std::string hex(uint64_t v);

}  // namespace uprof
