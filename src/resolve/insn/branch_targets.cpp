#include "uprof/resolve/insn/branch_targets.h"

#include <algorithm>

namespace uprof {

Result<BranchTargets> BranchTargets::scan(const ElfFile& elf, const FunctionTable& functions,
                                          const InsnDecoder& decoder) {
  BranchTargets out;
  std::vector<uint64_t> starts;
  for (const auto& f : functions.functions()) starts.push_back(f.addr);
  std::sort(starts.begin(), starts.end());
  const uint64_t step = arch_info(decoder.arch()).insn_align;
  for (const LoadSegment& seg : elf.loads()) {
    if (!seg.executable || seg.filesz == 0) continue;
    UPROF_ASSIGN(std::vector<uint8_t> bytes, elf.read_bytes(seg.offset, seg.filesz));
    auto next_start = std::upper_bound(starts.begin(), starts.end(), seg.vaddr);
    uint64_t at = 0;
    while (at < bytes.size()) {
      const uint64_t addr = seg.vaddr + at;
      // Decoding stops at each function symbol (below) and starts again from it.
      while (next_start != starts.end() && *next_start <= addr) ++next_start;
      const uint64_t here = addr;
      std::span<const uint8_t> code(bytes.data() + at, bytes.size() - at);
      if (next_start != starts.end() && *next_start > here)
        code = code.first(std::min<uint64_t>(code.size(), *next_start - here));
      auto insn = decoder.decode(code, here);
      if (!insn) {
        at += step;
        continue;
      }
      if (insn->direct_target) out.targets_.push_back(*insn->direct_target);
      at += insn->length;
    }
  }
  std::sort(out.targets_.begin(), out.targets_.end());
  out.targets_.erase(std::unique(out.targets_.begin(), out.targets_.end()), out.targets_.end());
  return out;
}

bool BranchTargets::any_in(uint64_t lo, uint64_t hi) const {
  auto it = std::upper_bound(targets_.begin(), targets_.end(), lo);
  return it != targets_.end() && *it <= hi;
}

}  // namespace uprof
