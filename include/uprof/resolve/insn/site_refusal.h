// A probe site that will not be probed, as the one line a user reads: which function,
// where in the file, the instruction there (disassembled, and its bytes) and why.
//
//   pthread_spin_lock (/lib/x86_64-linux-gnu/libc.so.6, offset 0x8ff70): the kernel refuses
//   to probe its first instruction, lock decl (%rdi) [f0 ff 0f]: lock prefix (ENOTSUPP)
//
//   vexf (./refused, offset 0x1139): uprof does not probe its first instruction,
//   vpcmpeqb %xmm0, %xmm0, %xmm0 [c5 f9 74 c0]: VEX opcode 74: the kernel would emulate
//   it as a je and skip the instruction
//
// `record` prints it for a function a glob loses ("skipped ...") and fails with it for a
// spec that names one function; an engine the kernel refuses at attach, where uprof
// predicted nothing (insn_class.h), builds the same line from what it knows.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/resolve/insn/insn_class.h"

namespace uprof {

struct SiteRefusal {
  std::string path{};
  std::string function{};            // "" for an offset outside every function
  uint64_t offset_in_function = 0;
  uint64_t file_offset = 0;
  std::string insn{};                // disassembled: "lock decl (%rdi)"; "" when it does not decode
  std::vector<uint8_t> bytes{};      // the instruction's bytes (the first few when it does not decode)
  std::string reason{};              // "lock prefix"
  int kernel_errno = 0;              // what the kernel answers; 0 when uprof refuses a site the kernel takes
};

std::string refusal_line(const SiteRefusal& r);

// The refusal of the instruction at the start of `code` (the bytes at `file_offset` of
// `path`, as many as the file has up to 16), when the kernel or uprof refuses it;
// nullopt when it can be probed.
std::optional<SiteRefusal> site_refusal(Arch arch, const std::string& path, const std::string& function,
                                        uint64_t offset_in_function, uint64_t file_offset,
                                        std::span<const uint8_t> code);

// The line for a site the kernel refused with `kernel_errno` at attach, for an engine:
// the instruction disassembled from `code` as above, and uprof's reason when it has one,
// else `reason` (what the engine knows: "the kernel refused it at attach").
std::string refused_site_line(Arch arch, const std::string& path, const std::string& function,
                              uint64_t offset_in_function, uint64_t file_offset, std::span<const uint8_t> code,
                              int kernel_errno, std::string_view reason);
// The same, reading the instruction at `file_offset` of `path` (without it when the file
// cannot be read): what an engine that holds a capture plan's path and offset calls.
std::string refused_site_line(Arch arch, const std::string& path, const std::string& function,
                              uint64_t offset_in_function, uint64_t file_offset, int kernel_errno,
                              std::string_view reason);

}  // namespace uprof
