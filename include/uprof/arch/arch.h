// Architecture as data. Both tables are always compiled in and chosen from the ELF
// file (or the data file), never from the host: an arm64 recording reports on x86-64.
// Code outside arch/ asks the table (`arch_info(a).entry_cfa`), not the machine
// (`a == Arch::Arm64 ? 0 : 8`); where the two architectures need different code (a
// parser of each assembler's syntax), it picks that code from a PerArch table.
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
  bool callee_saved = false;    // preserved across calls: x86-64 rbx rbp r12-r15, arm64 x19-x29
  // An assembler operand can name it: not the x86-64 flags and segment registers
  // (in the table for samples), nor arm64's pc (no A64 operand names it).
  bool operand = true;
};

// A name of a narrower part of a register, as assemblers and disassemblers spell
// it: x86-64 "eax" is bytes 0-3 of ax, "ah" byte 1 of ax; arm64 "w3" the low half of x3.
struct RegPart {
  std::string_view name;        // "eax", "r8b", "ah", "w3", "wsp"
  std::string_view reg;         // the register's name in the table: "ax", "r8", "x3", "sp"
  uint8_t byte_offset = 0;      // where the part starts in the register: 1 for ah..dh
};

// An inclusive range of DWARF register numbers.
struct DwarfRange {
  int16_t first;
  int16_t last;
  bool contains(int n) const { return n >= first && n <= last; }
};

struct ArchInfo {
  Arch arch;
  std::string_view name;             // "x86_64", "arm64"
  uint16_t e_machine;                // EM_X86_64, EM_AARCH64
  uint32_t insn_align;               // a probe offset must be a multiple of this
  // Every instruction's size when the encoding is fixed width (arm64: 4), 0 when
  // it varies (x86-64: 1-15 bytes, so an offset may fall inside an instruction).
  uint32_t fixed_insn_size;
  uint32_t perf_sample_abi;          // PERF_SAMPLE_REGS_ABI_64 on both
  std::span<const RegInfo> regs;     // every register a user-register sample can carry
  std::span<const RegPart> reg_parts;  // the narrower names of those registers
  // The DWARF numbers of the floating-point and vector registers, which a
  // user-register sample does not carry: x86-64 17-48 (xmm0-15, st0-7, mm0-7),
  // arm64 64-95 (v0-v31).
  DwarfRange fp_dwarf_regs;
  std::span<const uint8_t> int_arg_regs;  // perf indices of integer argument registers, in order
  uint8_t return_reg;                // perf index of the integer return value
  uint8_t return_reg_hi;             // perf index of bytes 8-15 of a 9-16 byte return: rdx, x1
  // A value returned in memory has its address in return_reg at the return:
  // x86-64 hands the caller's buffer back in rax; AAPCS64 took it in x8 and keeps no copy.
  bool returns_result_address;
  // Perf index of the register holding the return address at a function's entry, the
  // one a return probe replaces: arm64 x30 (lr); -1 on x86-64, where the call pushed it.
  int16_t link_reg;
  uint8_t sp_reg;                    // perf index of the stack pointer
  uint8_t ip_reg;                    // perf index of the instruction pointer
  // Distance from the stack pointer at function entry to the first stack-passed
  // argument: x86-64 has the return address at [rsp], arm64 none.
  uint32_t stack_args_offset;
  // CFA - sp at a function's first instruction: what the call pushed (x86-64 the
  // 8-byte return address, arm64 nothing). Every exit has the same again.
  uint32_t entry_cfa;
  bool char_is_signed;               // plain `char`: signed on x86-64, unsigned on arm64 (AAPCS64)
  // A DWARF register piece of a floating-point value is read as unavailable ("in a
  // floating-point register"): x86-64 keeps floats in xmm registers; on arm64 a
  // general register named for one is read as it is.
  bool float_in_register_unavailable;
  // Where the distribution keeps this architecture's libraries (Debian multiarch):
  // /lib/x86_64-linux-gnu, /usr/lib/aarch64-linux-gnu.
  std::string_view multiarch_triplet;
  // The flags of this architecture's 64-bit libc6 libraries in /etc/ld.so.cache
  // (glibc ldconfig.h: FLAG_ELF_LIBC6 0x0003 | FLAG_X8664_LIB64 0x0300 or
  // FLAG_AARCH64_LIB64 0x0a00), which tell them from the i386 or arm32 ones.
  uint32_t ld_so_cache_flags;
  // Dynamic relocations that fill a pointer slot with a function's address
  // (R_X86_64_*, R_AARCH64_*): where a process's loader wrote what an IFUNC selected.
  struct PointerRelocs {
    uint32_t irelative;   // slot = what the resolver at the addend returns
    uint32_t glob_dat;    // slot = the symbol's address (a GOT entry)
    uint32_t jump_slot;   // slot = the symbol's address once bound (a PLT's GOT entry)
    uint32_t abs64;       // slot = the symbol's address + addend
  } relocs;
  // Perf index of the register Go's ABIInternal keeps the running goroutine's `g` in,
  // at every instruction of Go code past the stack-growth check: x86-64 r14, arm64
  // x28. Pairing a Go function's entry with its exit goes by it (analyse/pairing.h).
  uint8_t go_g_reg;
  // Perf indices of the integer argument (and result) registers of Go's ABIInternal, in
  // order: x86-64 rax rbx rcx rdi rsi r8 r9 r10 r11, arm64 x0-x15.
  std::span<const uint8_t> go_int_arg_regs;
};

const ArchInfo& arch_info(Arch a);
// The same architecture under Go's ABIInternal, for binding the values of a Go function:
// `$argN` is its N-th integer argument register (go_int_arg_regs), and a 16-byte result's
// second half is in the second of them (rbx, x1).
const ArchInfo& go_abi_info(Arch a);
// Every architecture uprof knows, in the order of the enum: for tests and tables that
// run over both.
std::span<const ArchInfo* const> all_arches();
std::optional<Arch> arch_from_e_machine(uint16_t e_machine);
// The enum's value as the data file stores it (byte 12 of its header): 1 x86_64, 2 arm64.
std::optional<Arch> arch_from_id(uint8_t id);
std::optional<Arch> arch_from_name(std::string_view name);
// The architecture uprof itself runs on (for refusing to record foreign binaries).
Arch host_arch();

const RegInfo* find_reg_by_name(const ArchInfo& a, std::string_view name);
const RegInfo* find_reg_by_perf_index(const ArchInfo& a, unsigned perf_index);
const RegInfo* find_reg_by_dwarf(const ArchInfo& a, int dwarf_number);
// A register by its own name or by the name of a part of it: "eax" -> ax (byte 0),
// "ah" -> ax (byte 1), "w3" -> x3, "x3" -> x3. Null reg when neither.
struct FoundPart {
  const RegInfo* reg = nullptr;
  uint8_t byte_offset = 0;
};
FoundPart find_reg_by_part(const ArchInfo& a, std::string_view name);

// A value per architecture, for a table that lives with the code it serves (a
// parser of each assembler's syntax, a disassembler's mode) but is chosen by the
// file's architecture. Both are always compiled in:
//   constexpr PerArch<ParseFn> kParsers{.x86_64 = parse_x86, .arm64 = parse_arm64};
//   kParsers[arch](text);
template <class T>
struct PerArch {
  T x86_64;
  T arm64;
  constexpr const T& operator[](Arch a) const { return a == Arch::Arm64 ? arm64 : x86_64; }
};

// Where a user register sits in the kernel's struct pt_regs, which a BPF program on
// a uprobe gets as its context: byte offset by perf index; nullopt for a register
// pt_regs does not hold (x86-64 ds, es, fs, gs).
std::optional<uint16_t> pt_regs_offset(Arch a, unsigned perf_index);
// The bytes of the kernel's struct pt_regs the user registers are in (x86-64 168, arm64
// user_pt_regs 272): what a BPF program copies for record -g.
uint16_t pt_regs_bytes(Arch a);
// Perf index of the frame pointer (x86-64 rbp, arm64 x29): a frame-pointer chain's
// link is [fp] = the caller's fp, [fp + 8] = the return address, on both.
uint8_t frame_pointer_reg(Arch a);

}  // namespace uprof
