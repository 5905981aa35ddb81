// record -g: what a hit copied for its call stack, whichever engine copied it: the
// thread's user registers (by perf register index, as PERF_SAMPLE_REGS_USER numbers
// them) and the top of its user stack, from the stack pointer up.
//
//   BPF STACK record:  struct pt_regs (x86-64: r15 r14 ... ip cs flags sp ss) + N stack bytes
//   perf sample:       PERF_SAMPLE_REGS_USER (abi, a word per mask bit) + PERF_SAMPLE_STACK_USER
//   ->  UserStack{regs[perf index], mask, sp, bytes}
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "uprof/arch/arch.h"

namespace uprof {

struct UserStack {
  Arch arch = Arch::X86_64;
  std::array<uint64_t, 64> regs{};  // by perf register index
  uint64_t mask = 0;                // bit i: regs[i] was captured
  std::span<const std::byte> bytes{};  // user memory from the stack pointer up

  std::optional<uint64_t> reg(unsigned perf_index) const {
    if (perf_index >= 64 || !(mask >> perf_index & 1)) return std::nullopt;
    return regs[perf_index];
  }
  uint64_t sp() const { return regs[arch_info(arch).sp_reg]; }
  uint64_t pc() const { return regs[arch_info(arch).ip_reg]; }
  // The 8 bytes at `addr` when they are in the copy.
  std::optional<uint64_t> load(uint64_t addr) const;
};

// A BPF STACK record's registers (`pt_regs`: the kernel's struct pt_regs of `arch`) with
// its stack bytes; every register the arch table places in pt_regs is set.
UserStack user_stack_from_pt_regs(Arch arch, std::span<const std::byte> pt_regs, std::span<const std::byte> stack);

}  // namespace uprof
