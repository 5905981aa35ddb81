// What the kernel does with the instruction under a uprobe, which decides most of
// what a probe hit costs (measured figures and sources in docs/kernel-findings.md,
// "The probed instruction decides what a hit costs"):
//
//   single-stepped  copied to an out-of-line slot and run there under a single-step
//                   trap: two exceptions per hit (x86 `lea`, `mov`, `sub`, `endbr64`;
//                   arm64 everything that is neither simulated nor rejected)
//   emulated        the kernel does what the instruction does in the trap handler,
//                   no single-step (x86: push %reg, jmp/call/jcc rel, the kernel's
//                   nops; arm64 "simulated": b, bl, b.cond, cbz, tbz, adr, adrp,
//                   br, blr, ret)
//   optimized       x86-64 Linux 6.18+: a 5-byte nop `0f 1f 44 00 00` is rewritten
//                   into a call to a trampoline after the first hit: no trap at all
//   rejected        the kernel refuses the probe (EINVAL/ENOTSUPP): x86 int3, hlt,
//                   syscall-like and segment-prefixed instructions; arm64 literal
//                   loads, exclusives, system instructions, misaligned offsets
//
// The rules are the kernel's (arch/x86/kernel/uprobes.c, arch/arm64/kernel/probes/
// decode-insn.c), restated from reading them; the tables are per architecture and
// both are compiled in, so a file of either architecture is classified on any host.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "uprof/arch/arch.h"
#include "uprof/util/result.h"

namespace uprof {

enum class InsnClass : uint8_t { SingleStepped = 0, Emulated = 1, Optimized = 2, Rejected = 3 };
inline constexpr std::size_t kInsnClasses = 4;

// "single-stepped", "emulated", "optimized", "rejected"
std::string_view to_string(InsnClass c);

struct InsnInfo {
  InsnClass cls = InsnClass::SingleStepped;
  std::string insn;   // what it is: "push %rbp", "nop5", "endbr64", "b.cond", or leading bytes "48 8d 04 37"
  std::string why;    // for Rejected and the less obvious cases: "lock prefix", "offset not 4-byte aligned"
};

// `code` starts at the probed instruction (at least 16 bytes on x86 when the file has
// them, 4 on arm64); `file_offset` is where it sits in the file (page position and
// alignment matter: a nop5 that crosses a page is not optimized).
InsnInfo classify_insn(Arch arch, std::span<const uint8_t> code, uint64_t file_offset);

// Reads the instruction at `file_offset` of `path` and classifies it.
Result<InsnInfo> classify_probe_site(const std::string& path, Arch arch, uint64_t file_offset);

// "emulated (push %rbp)", "rejected (hlt: not allowed)"
std::string describe(const InsnInfo& info);

}  // namespace uprof
