// One machine instruction, decoded by Capstone, as much as probe placement and the
// offset check need: its length, what it writes (registers, memory, the stack
// pointer) and whether it changes control flow. Both architectures are always
// available, whatever the host.
//
//   x86-64  every write of a sub-register (eax, di, r8b) counts as a write of the
//           whole register (rax, rdi, r8); a memory operand the instruction writes,
//           push, call and the string stores write memory
//   arm64   w<n> writes x<n>; every store (st*, swp, cas, the ld<op> atomics) and
//           `dc` writes memory (Capstone 4 does not mark arm64 memory operands as
//           written, so the class is taken from the mnemonic)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/util/result.h"

namespace uprof {

struct DecodedInsn {
  uint64_t address = 0;       // as given to decode (a link-time address)
  uint8_t length = 0;
  std::string text;           // "push %rbp", "endbr64", "bti c" (AT&T syntax on x86-64)
  bool changes_flow = false;  // any jump, call, return, interrupt or system call
  bool indirect_jump = false; // a jump through a register or memory (not a call or return)
  bool is_call = false;       // call (x86-64), bl / blr (arm64)
  bool is_return = false;
  bool conditional = false;   // a direct branch that may fall through (jcc, jrcxz; b.cond, cbz, tbz)     // ret (x86-64, with or without an immediate), ret / retaa / retab (arm64)
  std::optional<uint64_t> direct_target;  // where a direct (relative) branch or call goes
  bool writes_memory = false;
  uint64_t regs_written = 0;  // bit per perf register index (arch.h), the stack pointer included
  // x86-64: the address a %rip-relative operand names (`lea 0xe5e(%rip), %rdx`), and
  // for `jmp *TABLE(,%reg,8)` the table's address: where jump tables are found.
  std::optional<uint64_t> rip_address;
  std::optional<uint64_t> absolute_table;
};

class InsnDecoder {
 public:
  static Result<InsnDecoder> open(Arch arch);
  InsnDecoder(InsnDecoder&&) noexcept;
  InsnDecoder& operator=(InsnDecoder&&) noexcept;
  ~InsnDecoder();

  Arch arch() const { return arch_; }
  // nullopt when `code` does not start with a valid instruction.
  std::optional<DecodedInsn> decode(std::span<const uint8_t> code, uint64_t address) const;
  // Calls `fn(insn)` for each instruction from the start of `code`, in order, until an
  // undecodable byte or the end; returns the bytes decoded.
  template <typename Fn>
  std::size_t each(std::span<const uint8_t> code, uint64_t address, Fn&& fn) const {
    std::size_t at = 0;
    while (at < code.size()) {
      auto insn = decode(code.subspan(at), address + at);
      if (!insn || insn->length == 0) break;
      fn(*insn);
      at += insn->length;
    }
    return at;
  }

  bool writes_sp(const DecodedInsn& insn) const;

 private:
  struct Handle;
  InsnDecoder(Arch arch, std::unique_ptr<Handle> h);
  Arch arch_;
  std::unique_ptr<Handle> h_;
};

}  // namespace uprof
