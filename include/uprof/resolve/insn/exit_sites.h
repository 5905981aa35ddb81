// Where a function leaves: its own exit instructions, for return probes that need no
// return trampoline (record/unwind_risk.h). Decoded from the symbol's start:
//
//   ret                          an exit; the return value is in the return register
//   jmp / b to a function's      an exit by tail call (the return value is the callee's,
//     entry                      not known at the jump)
//   jcc / b.cond / cbz to a      no exit can be placed: a probe on the branch fires
//     function's entry           whether it is taken or not (`blocker`)
//   a jump to code that is no    a split-off part of the function (gcc's `f.cold`, which
//     function's entry           a stripped file does not name): scanned too, within
//                                the bounds of its own FDE in the call frame information
//   an indirect jump             could be a tail call or a switch: the exits cannot all
//                                be seen, and the function gets none (`blocker`)
//   an exit the kernel refuses   (insn_class.h: `bnd ret` passes, a cs-prefixed jump
//     to probe                   does not) the function gets none (`blocker`)
//
// At every exit the stack pointer is what it was at the entry (x86-64: it points at
// the return address again; arm64: the frame is popped), which is how pairing tells
// a returning frame from one an exception left; a tail call's jump is only taken as an
// exit where the call frame information agrees (CFA = sp + 8 on x86-64, sp on arm64).
// A local function reached by a jump in a stripped file is scanned as a part: its
// returns end this function's calls (as a return probe would see them), and its
// returns to its other callers match no open frame (return without entry).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "uprof/resolve/insn/insn_decode.h"

namespace uprof {

struct ExitSite {
  uint64_t vaddr = 0;      // link-time address of the exit instruction
  uint64_t offset = 0;     // from the start of its part
  std::size_t part = 0;    // 0: the function's body from its symbol; 1...: its split-off parts
  bool tail_call = false;
  std::string text{};      // "ret", "jmp 0x1260"
  bool operator==(const ExitSite&) const = default;
};

struct ExitScan {
  std::vector<ExitSite> sites{};
  std::string blocker{};   // why the function gets no exit probes ("" when it has them)
};

// A piece of a function's code: the body from its symbol, or a split-off part.
struct CodePart {
  uint64_t vaddr = 0;
  std::span<const uint8_t> code{};
};

// What the scan asks of the file beyond the code: both may be left empty (no CFI).
struct ExitRules {
  // CFA - sp at `pc` when the call frame information gives the CFA as sp + N; nullopt
  // when it has no row for `pc` or gives the CFA another way.
  std::function<std::optional<int64_t>(uint64_t pc)> cfa_above_sp{};
  // The code of the split-off part that holds `target` (bounds from its FDE), when known.
  std::function<std::optional<CodePart>(uint64_t target)> part_at{};
  // Whether `addr` is the entry of a function the file names (a tail call's target).
  std::function<bool(uint64_t addr)> is_function{};
  int64_t entry_cfa = 8;  // CFA - sp at a function's entry: 8 on x86-64, 0 on arm64
};

// Pure: the exits of the function whose known parts are `parts` (the body first).
ExitScan find_exit_sites(const InsnDecoder& decoder, std::span<const CodePart> parts, const ExitRules& rules = {});
// The same for a function in one piece.
ExitScan find_exit_sites(const InsnDecoder& decoder, std::span<const uint8_t> code, uint64_t function_vaddr);

}  // namespace uprof
