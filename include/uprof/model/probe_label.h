// How a probe is named to a person, everywhere (record's notes, the first-instruction
// line, report groups, script lines): "add", "loop_sum+0x1c", or for a raw offset
// outside every function its file offset as the spec gave it, "0x1139".
#pragma once

#include <cstdint>
#include <string>

#include "uprof/util/hex.h"

namespace uprof {

inline std::string probe_label(const std::string& function, uint64_t offset_in_function, uint64_t file_offset) {
  if (function.empty()) return hex(file_offset);
  if (!offset_in_function) return function;
  return function + "+" + hex(offset_in_function);
}

}  // namespace uprof
