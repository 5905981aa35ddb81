#include "uprof/drain/unwind/frame_pointers.h"

namespace uprof {

std::vector<uint64_t> walk_frame_pointers(const UserStack& stack, bool from_return, std::size_t max) {
  std::vector<uint64_t> pcs{stack.pc()};
  const ArchInfo& a = arch_info(stack.arch);
  if (!from_return) {
    // The probed function's own return address: on the stack (x86-64) or in the link
    // register (arm64) at its entry and at its exits.
    std::optional<uint64_t> ra = a.link_reg >= 0 ? stack.reg(static_cast<unsigned>(a.link_reg))
                                                 : stack.load(stack.sp() + a.entry_cfa - 8);
    if (!ra || *ra == 0) return pcs;
    pcs.push_back(*ra);
  }
  auto fp = stack.reg(frame_pointer_reg(stack.arch));
  uint64_t at = fp.value_or(0);
  while (pcs.size() < max && at >= stack.sp()) {
    auto next = stack.load(at);
    auto ra = stack.load(at + 8);
    if (!next || !ra || *ra == 0) break;
    pcs.push_back(*ra);
    if (*next <= at) break;  // a chain goes up the stack; 0 ends it
    at = *next;
  }
  return pcs;
}

}  // namespace uprof
