#include "uprof/drain/unwind/user_stack.h"

#include <cstring>

namespace uprof {

std::optional<uint64_t> UserStack::load(uint64_t addr) const {
  const uint64_t base = sp();
  if (addr < base || addr - base > bytes.size() || bytes.size() - (addr - base) < 8) return std::nullopt;
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + (addr - base), 8);
  return v;
}

UserStack user_stack_from_pt_regs(Arch arch, std::span<const std::byte> pt_regs, std::span<const std::byte> stack) {
  UserStack s{.arch = arch, .bytes = stack};
  for (const RegInfo& r : arch_info(arch).regs) {
    const auto off = pt_regs_offset(arch, r.perf_index);
    if (!off || r.perf_index >= 64 || *off + 8u > pt_regs.size()) continue;
    std::memcpy(&s.regs[r.perf_index], pt_regs.data() + *off, 8);
    s.mask |= uint64_t{1} << r.perf_index;
  }
  return s;
}

}  // namespace uprof
