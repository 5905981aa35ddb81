// Every direct branch and call target in a file's executable code, found by decoding
// each executable segment from start to end (re-synchronised at each function symbol,
// so that padding or data between functions cannot shift the decoding of the next).
// Probe placement asks it whether anything jumps into the instructions a moved site
// skips. Built once per file, on first use: ~0.1-0.3 s for libc.
#pragma once

#include <cstdint>
#include <vector>

#include "uprof/resolve/elf/function_table.h"
#include "uprof/resolve/elf/elf_file.h"
#include "uprof/resolve/insn/insn_decode.h"
#include "uprof/util/result.h"

namespace uprof {

class BranchTargets {
 public:
  static Result<BranchTargets> scan(const ElfFile& elf, const FunctionTable& functions, const InsnDecoder& decoder);
  // Whether any target lies in (lo, hi].
  bool any_in(uint64_t lo, uint64_t hi) const;
  std::size_t size() const { return targets_.size(); }

 private:
  std::vector<uint64_t> targets_;  // sorted, unique
};

}  // namespace uprof
