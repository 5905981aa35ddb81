#include "uprof/drain/sample_values.h"

#include <cstring>

#include "uprof/model/capture_plan.h"

namespace uprof {
namespace {

// `size` bytes at `offset` above the sampled stack pointer, if the kernel copied them.
bool read_stack(const Sample& s, int64_t offset, uint8_t size, uint64_t& value) {
  auto stack = s.valid_stack();
  if (offset < 0 || static_cast<uint64_t>(offset) + size > stack.size()) return false;
  std::memcpy(&value, stack.data() + offset, size);  // little-endian on both arches
  return true;
}

}  // namespace

unsigned extract_values(const Sample& s, std::span<const ValueSpec> specs, uint16_t sp_reg, Event& out) {
  unsigned missing = 0;
  out.nvalues = static_cast<uint8_t>(std::min(specs.size(), kMaxValues));
  out.missing = 0;
  for (std::size_t i = 0; i < out.nvalues; i++) {
    const ValueSpec& v = specs[i];
    uint64_t value = 0;
    bool got = true;
    if (fetched_from_memory(v)) {  // in the raw data, not here (engine/perf/perf_fetch_args.h)
      out.values[i] = 0;
      continue;
    }
    switch (v.source) {
      case ValueSource::Constant: value = static_cast<uint64_t>(v.constant); break;
      case ValueSource::Unavailable: break;  // nothing to read; printed with its reason
      case ValueSource::Comm: break;         // fetched at the probe (above)
      case ValueSource::Stack:
        got = read_stack(s, v.stack_offset, v.deref ? 8 : v.size, value);
        break;
      case ValueSource::Register:
      case ValueSource::ReturnValue:
        if (auto r = s.reg(v.reg)) value = *r;
        else got = false;
        break;
    }
    // A value behind an address: found only when the address points into the
    // copied user stack (a struct in the caller's frame, a -O0 home below rbp).
    if (got && v.deref) {
      auto sp = s.reg(sp_reg);
      uint64_t addr = value + static_cast<uint64_t>(static_cast<int64_t>(v.deref_offset));
      value = 0;
      got = sp && addr >= *sp && read_stack(s, static_cast<int64_t>(addr - *sp), v.size, value);
    }
    if (!got) {
      missing++;
      out.missing |= uint32_t{1} << i;
    }
    out.values[i] = value;
  }
  return missing;
}

}  // namespace uprof
