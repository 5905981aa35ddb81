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
//   rejected        no probe there: the kernel refuses it when it puts the breakpoint
//                   in (x86 ENOTSUPP: lock and es/cs/ss/ds prefixes, int3, hlt, in/out,
//                   VEX opcodes its one-byte table refuses such as vmovd's 6e; arm64
//                   EINVAL: literal loads, exclusives, system instructions, misaligned
//                   offsets), or uprof does, where the kernel would accept the probe
//                   and mishandle the instruction (x86: a VEX instruction whose opcode
//                   byte is a jump's, such as vpcmpeqb's 74, is emulated as that jump)
//
// The kernel checks the instruction only when it writes the breakpoint into a process:
// at perf_event_open for processes that map the file already, else when one maps it,
// where a refusal is silent (the probe just never fires). So uprof predicts it.
//
// The rules are the kernel's (arch/x86/kernel/uprobes.c, arch/arm64/kernel/probes/
// uprobes.c and decode-insn.c, Linux 6.18), restated from reading them and checked
// against the kernel (tests/resolve/insn/kernel_refusal_test.cpp); the tables are per
// architecture and both are compiled in, so a file of either architecture is
// classified on any host.
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
  std::string insn{};   // what it is: "push %rbp", "nop5", "endbr64", "b.cond", or leading bytes "48 8d 04 37"
  std::string why{};    // for Rejected and the less obvious cases: "lock prefix", "offset not 4-byte aligned"
  // Rejected: what the kernel answers when it puts the probe in (ENOTSUPP, 524, on
  // x86-64; EINVAL on arm64); 0 when the kernel would accept it and uprof refuses.
  int kernel_errno = 0;
  // Rejected: a probe must not move past it either (arm64's exclusives).
  bool keeps_site = false;
};

// `code` starts at the probed instruction (at least 16 bytes on x86 when the file has
// them, 4 on arm64); `file_offset` is where it sits in the file (page position and
// alignment matter: a nop5 that crosses a page is not optimized).
InsnInfo classify_insn(Arch arch, std::span<const uint8_t> code, uint64_t file_offset);

// Reads the instruction at `file_offset` of `path` and classifies it.
Result<InsnInfo> classify_probe_site(const std::string& path, Arch arch, uint64_t file_offset);

// "emulated (push %rbp)", "rejected (hlt: not allowed)"
std::string describe(const InsnInfo& info);

// The name of a refusal's errno: "ENOTSUPP", "EINVAL", "ENOEXEC"; "errno N" for others.
std::string errno_name(int errno_value);

}  // namespace uprof
