// Where a Go function's stack-growth check ends: the entry probe of a Go function goes
// there (record/site_placement.h). Go's prologue compares the stack pointer with the
// goroutine's stack guard (g->stackguard0, at 0x10 from g in r14 / x28) and, when the
// stack is too small, branches to a tail that calls runtime.morestack and jumps back to
// the function's first instruction: the function starts over on the new stack. A probe
// before the branch fires twice for such a call; one after it, once. From gw (go 1.19):
//
//   483fe0  lea    -0x7a0(%rsp),%r12       a frame above 128 bytes: sp - frame
//   483fe8  cmp    0x10(%r14),%r12         ... against g->stackguard0
//   483fec  jbe    484168                  -> +0x188: spill, call morestack_noctxt,
//   483ff2  sub    $0x820,%rsp                reload, jmp 483fe0        <- site +0x12
//
// Small frames compare %rsp itself (`cmp 0x10(%r14),%rsp; jbe`); frames above 4 KiB first
// branch on the subtraction's carry (`mov %rsp,%r12; sub $N,%r12; jb; cmp; jbe`), both to
// the same tail. arm64: `ldr x16, [x28, #16]; cmp sp, x16; b.ls`. The check is told by its
// shape, not its registers: a conditional branch among the first instructions to a
// block that jumps back to the function's entry (so one decoder serves both
// architectures). A function without the check (Go marks small leaves nosplit) has none.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "uprof/resolve/insn/insn_decode.h"

namespace uprof {

struct GoStackCheck {
  uint64_t end = 0;        // offset of the first instruction past the check's last branch
  std::string text{};      // "lea -0x7a0(%rsp), %r12; cmp 0x10(%r14), %r12; jbe 0x484168"
};

// Pure: the stack-growth check at the start of a Go function's `code` (from its symbol),
// nullopt when it has none.
std::optional<GoStackCheck> go_stack_check(const InsnDecoder& decoder, std::span<const uint8_t> code,
                                           uint64_t function_vaddr);

}  // namespace uprof
