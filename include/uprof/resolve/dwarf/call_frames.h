// A file's call frame information (.eh_frame, then .debug_frame) asked two things at
// an address: the CFA as "stack pointer + N", and the bounds of the FDE that covers
// it. Exit-site placement uses them to tell a tail call (the frame is the entry's)
// from a jump into a split-off part of the function (resolve/insn/exit_sites.h).
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "uprof/arch/arch.h"

namespace uprof {

class CallFrames {
 public:
  CallFrames(Elf* elf, Arch arch);
  CallFrames(const CallFrames&) = delete;
  CallFrames& operator=(const CallFrames&) = delete;
  ~CallFrames();

  bool present() const { return cfi_ != nullptr; }
  // CFA - sp at `pc`, when the row for `pc` gives the CFA as the stack pointer + N.
  std::optional<int64_t> cfa_above_sp(uint64_t pc) const;
  // [start, end) of the FDE that covers `pc`, from .eh_frame_hdr's table: from its
  // start to the next FDE's (padding between them included).
  std::optional<std::pair<uint64_t, uint64_t>> fde_range(uint64_t pc) const;

 private:
  void read_fde_starts(Elf* elf);
  Dwarf_CFI* cfi_ = nullptr;
  std::vector<uint64_t> fde_starts_;
  int sp_dwarf_ = -1;
};

}  // namespace uprof
