// Architecture as data. Both tables are always compiled in and chosen from the ELF
// file (or the data file), never from the host: an arm64 recording reports on x86-64.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace uprof {

enum class Arch : uint8_t { X86_64 = 1, Arm64 = 2 };

struct RegInfo {
  std::string_view name;        // as tracefs spells it: "di", "x0"
  std::string_view alias;       // another accepted spelling: "rdi", "" when none
  uint8_t perf_index;           // bit in sample_regs_user (asm/perf_regs.h)
  int16_t dwarf_number;         // DWARF register number, -1 when DWARF has none
};

struct ArchInfo {
  Arch arch;
  std::string_view name;             // "x86_64", "arm64"
  uint16_t e_machine;                // EM_X86_64, EM_AARCH64
  uint32_t insn_align;               // a probe offset must be a multiple of this
  uint32_t perf_sample_abi;          // PERF_SAMPLE_REGS_ABI_64 on both
  std::span<const RegInfo> regs;     // every register a user-register sample can carry
  std::span<const uint8_t> int_arg_regs;  // perf indices of integer argument registers, in order
  uint8_t return_reg;                // perf index of the integer return value
  uint8_t sp_reg;                    // perf index of the stack pointer
  uint8_t ip_reg;                    // perf index of the instruction pointer
  // Distance from the stack pointer at function entry to the first stack-passed
  // argument: x86-64 has the return address at [rsp], arm64 none.
  uint32_t stack_args_offset;
  // Dynamic relocations that fill a pointer slot with a function's address
  // (R_X86_64_*, R_AARCH64_*): where a process's loader wrote what an IFUNC selected.
  struct PointerRelocs {
    uint32_t irelative;   // slot = what the resolver at the addend returns
    uint32_t glob_dat;    // slot = the symbol's address (a GOT entry)
    uint32_t jump_slot;   // slot = the symbol's address once bound (a PLT's GOT entry)
    uint32_t abs64;       // slot = the symbol's address + addend
  } relocs;
};

const ArchInfo& arch_info(Arch a);
std::optional<Arch> arch_from_e_machine(uint16_t e_machine);
std::optional<Arch> arch_from_name(std::string_view name);
// The architecture uprof itself runs on (for refusing to record foreign binaries).
Arch host_arch();

const RegInfo* find_reg_by_name(const ArchInfo& a, std::string_view name);
const RegInfo* find_reg_by_perf_index(const ArchInfo& a, unsigned perf_index);
const RegInfo* find_reg_by_dwarf(const ArchInfo& a, int dwarf_number);

// Where a user register sits in the kernel's struct pt_regs, which a BPF program on
// a uprobe gets as its context: byte offset by perf index; nullopt for a register
// pt_regs does not hold (x86-64 ds, es, fs, gs).
std::optional<uint16_t> pt_regs_offset(Arch a, unsigned perf_index);

}  // namespace uprof
