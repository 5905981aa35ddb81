#include "uprof/drain/sample_values.h"

#include <cstring>

namespace uprof {

unsigned extract_values(const Sample& s, std::span<const ValueSpec> specs, Event& out) {
  unsigned missing = 0;
  out.nvalues = static_cast<uint8_t>(std::min(specs.size(), kMaxValues));
  for (std::size_t i = 0; i < out.nvalues; i++) {
    const ValueSpec& v = specs[i];
    uint64_t value = 0;
    if (v.source == ValueSource::Stack) {
      auto stack = s.valid_stack();
      if (v.stack_offset >= 0 && static_cast<std::size_t>(v.stack_offset) + v.size <= stack.size()) {
        std::memcpy(&value, stack.data() + v.stack_offset, v.size);  // little-endian on both arches
      } else {
        missing++;
      }
    } else if (auto r = s.reg(v.reg)) {
      value = *r;
    } else {
      missing++;
    }
    out.values[i] = value;
  }
  return missing;
}

}  // namespace uprof
