#include "uprof/arch/arch.h"

#include <elf.h>

#include <array>

namespace uprof {
namespace {

// x86-64: perf numbering from arch/x86/include/uapi/asm/perf_regs.h; DWARF numbering
// from the SysV psABI (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15).
constexpr std::array<RegInfo, 24> kX86Regs{{
    {"ax", "rax", 0, 0},    {"bx", "rbx", 1, 3},    {"cx", "rcx", 2, 2},
    {"dx", "rdx", 3, 1},    {"si", "rsi", 4, 4},    {"di", "rdi", 5, 5},
    {"bp", "rbp", 6, 6},    {"sp", "rsp", 7, 7},    {"ip", "rip", 8, 16},
    {"flags", "", 9, 49},   {"cs", "", 10, 51},     {"ss", "", 11, 52},
    {"ds", "", 12, 53},     {"es", "", 13, 50},     {"fs", "", 14, 54},
    {"gs", "", 15, 55},     {"r8", "", 16, 8},      {"r9", "", 17, 9},
    {"r10", "", 18, 10},    {"r11", "", 19, 11},    {"r12", "", 20, 12},
    {"r13", "", 21, 13},    {"r14", "", 22, 14},    {"r15", "", 23, 15},
}};
// Note: DWARF 16 is the return-address column; perf's IP is the closest register
// a sample has (it is the return address only at a return probe's caller).

constexpr std::array<uint8_t, 6> kX86Args{5, 4, 3, 2, 16, 17};  // rdi rsi rdx rcx r8 r9

// arm64: perf numbering from arch/arm64/include/uapi/asm/perf_regs.h (x0..x30 = 0..30,
// sp = 31, pc = 32); DWARF numbering from the AAPCS64 DWARF supplement (x0..x30, 31 sp).
constexpr std::array<RegInfo, 33> kArm64Regs{{
    {"x0", "", 0, 0},    {"x1", "", 1, 1},    {"x2", "", 2, 2},    {"x3", "", 3, 3},
    {"x4", "", 4, 4},    {"x5", "", 5, 5},    {"x6", "", 6, 6},    {"x7", "", 7, 7},
    {"x8", "", 8, 8},    {"x9", "", 9, 9},    {"x10", "", 10, 10}, {"x11", "", 11, 11},
    {"x12", "", 12, 12}, {"x13", "", 13, 13}, {"x14", "", 14, 14}, {"x15", "", 15, 15},
    {"x16", "", 16, 16}, {"x17", "", 17, 17}, {"x18", "", 18, 18}, {"x19", "", 19, 19},
    {"x20", "", 20, 20}, {"x21", "", 21, 21}, {"x22", "", 22, 22}, {"x23", "", 23, 23},
    {"x24", "", 24, 24}, {"x25", "", 25, 25}, {"x26", "", 26, 26}, {"x27", "", 27, 27},
    {"x28", "", 28, 28}, {"x29", "fp", 29, 29}, {"x30", "lr", 30, 30},
    {"sp", "", 31, 31},  {"pc", "", 32, -1},
}};
constexpr std::array<uint8_t, 8> kArm64Args{0, 1, 2, 3, 4, 5, 6, 7};

constexpr uint32_t kAbi64 = 2;  // PERF_SAMPLE_REGS_ABI_64

const ArchInfo kX86{
    .arch = Arch::X86_64, .name = "x86_64", .e_machine = EM_X86_64, .insn_align = 1,
    .perf_sample_abi = kAbi64, .regs = kX86Regs, .int_arg_regs = kX86Args,
    .return_reg = 0, .sp_reg = 7, .ip_reg = 8, .stack_args_offset = 8,
    .relocs = {.irelative = R_X86_64_IRELATIVE, .glob_dat = R_X86_64_GLOB_DAT, .jump_slot = R_X86_64_JUMP_SLOT,
               .abs64 = R_X86_64_64}};
const ArchInfo kArm64{
    .arch = Arch::Arm64, .name = "arm64", .e_machine = EM_AARCH64, .insn_align = 4,
    .perf_sample_abi = kAbi64, .regs = kArm64Regs, .int_arg_regs = kArm64Args,
    .return_reg = 0, .sp_reg = 31, .ip_reg = 32, .stack_args_offset = 0,
    .relocs = {.irelative = R_AARCH64_IRELATIVE, .glob_dat = R_AARCH64_GLOB_DAT, .jump_slot = R_AARCH64_JUMP_SLOT,
               .abs64 = R_AARCH64_ABS64}};

constexpr std::array<const ArchInfo*, 2> kAll{&kX86, &kArm64};

}  // namespace

const ArchInfo& arch_info(Arch a) { return a == Arch::Arm64 ? kArm64 : kX86; }

std::optional<Arch> arch_from_e_machine(uint16_t m) {
  for (auto* a : kAll)
    if (a->e_machine == m) return a->arch;
  return std::nullopt;
}

std::optional<Arch> arch_from_name(std::string_view name) {
  for (auto* a : kAll)
    if (a->name == name) return a->arch;
  if (name == "aarch64") return Arch::Arm64;
  return std::nullopt;
}

Arch host_arch() {
#if defined(__aarch64__)
  return Arch::Arm64;
#else
  return Arch::X86_64;
#endif
}

const RegInfo* find_reg_by_name(const ArchInfo& a, std::string_view name) {
  for (auto& r : a.regs)
    if (r.name == name || (!r.alias.empty() && r.alias == name)) return &r;
  return nullptr;
}

const RegInfo* find_reg_by_perf_index(const ArchInfo& a, unsigned idx) {
  for (auto& r : a.regs)
    if (r.perf_index == idx) return &r;
  return nullptr;
}

const RegInfo* find_reg_by_dwarf(const ArchInfo& a, int n) {
  if (n < 0) return nullptr;
  for (auto& r : a.regs)
    if (r.dwarf_number == n) return &r;
  return nullptr;
}

// x86-64 struct pt_regs (arch/x86/include/asm/ptrace.h), in 8-byte words: r15 r14 r13
// r12 bp bx r11 r10 r9 r8 ax cx dx si di orig_ax ip cs flags sp ss; by perf index
// (ax bx cx dx si di bp sp ip flags cs ss ds es fs gs r8..r15), -1 where it has none.
constexpr std::array<int8_t, 24> kX86PtRegsWord{10, 5, 11, 12, 13, 14, 4, 19, 16, 18, 17, 20,
                                                -1, -1, -1, -1, 9, 8, 7, 6, 3, 2, 1, 0};

std::optional<uint16_t> pt_regs_offset(Arch a, unsigned idx) {
  if (a == Arch::Arm64) {
    // arm64 struct pt_regs starts with user_pt_regs (arch/arm64/include/uapi/asm/ptrace.h):
    // regs[31] (x0..x30), sp, pc: the perf numbering's own order.
    if (idx > 32) return std::nullopt;
    return static_cast<uint16_t>(idx * 8);
  }
  if (idx >= kX86PtRegsWord.size() || kX86PtRegsWord[idx] < 0) return std::nullopt;
  return static_cast<uint16_t>(kX86PtRegsWord[idx] * 8);
}

}  // namespace uprof
