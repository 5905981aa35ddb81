#include "uprof/arch/arch.h"

#include <elf.h>

#include <array>

namespace uprof {
namespace {

// x86-64: perf numbering from arch/x86/include/uapi/asm/perf_regs.h; DWARF numbering
// from the SysV psABI (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15).
// Callee-saved (`kSaved`): the psABI's rbx rbp r12-r15. Flags and segment registers
// are no assembler operand (`kNoOp`).
constexpr bool kSaved = true;
constexpr bool kNoOp = false;
constexpr std::array<RegInfo, 24> kX86Regs{{
    {"ax", "rax", 0, 0},    {"bx", "rbx", 1, 3, kSaved},    {"cx", "rcx", 2, 2},
    {"dx", "rdx", 3, 1},    {"si", "rsi", 4, 4},    {"di", "rdi", 5, 5},
    {"bp", "rbp", 6, 6, kSaved},    {"sp", "rsp", 7, 7},    {"ip", "rip", 8, 16},
    {"flags", "", 9, 49, false, kNoOp},   {"cs", "", 10, 51, false, kNoOp},     {"ss", "", 11, 52, false, kNoOp},
    {"ds", "", 12, 53, false, kNoOp},     {"es", "", 13, 50, false, kNoOp},     {"fs", "", 14, 54, false, kNoOp},
    {"gs", "", 15, 55, false, kNoOp},     {"r8", "", 16, 8},      {"r9", "", 17, 9},
    {"r10", "", 18, 10},    {"r11", "", 19, 11},    {"r12", "", 20, 12, kSaved},
    {"r13", "", 21, 13, kSaved},    {"r14", "", 22, 14, kSaved},    {"r15", "", 23, 15, kSaved},
}};
// Note: DWARF 16 is the return-address column; perf's IP is the closest register
// a sample has (it is the return address only at a return probe's caller).

constexpr std::array<uint8_t, 6> kX86Args{5, 4, 3, 2, 16, 17};  // rdi rsi rdx rcx r8 r9
// Go's ABIInternal (go/src/cmd/compile/abi-internal.md): rax rbx rcx rdi rsi r8 r9 r10 r11.
constexpr std::array<uint8_t, 9> kX86GoArgs{0, 1, 2, 5, 4, 16, 17, 18, 19};

// gcc names a register at the operand's size (an int in rax is "-4@%eax" in a USDT
// note, a short "-2@%ax", a char "1@%al"); Capstone names what an instruction writes
// the same way. "r8l" is the older AT&T spelling of r8b.
constexpr std::array<RegPart, 53> kX86Parts{{
    {"eax", "ax"},   {"al", "ax"},    {"ah", "ax", 1},  {"ebx", "bx"},   {"bl", "bx"},    {"bh", "bx", 1},
    {"ecx", "cx"},   {"cl", "cx"},    {"ch", "cx", 1},  {"edx", "dx"},   {"dl", "dx"},    {"dh", "dx", 1},
    {"esi", "si"},   {"sil", "si"},   {"edi", "di"},    {"dil", "di"},   {"ebp", "bp"},   {"bpl", "bp"},
    {"esp", "sp"},   {"spl", "sp"},   {"eip", "ip"},
    {"r8d", "r8"},   {"r8w", "r8"},   {"r8b", "r8"},    {"r8l", "r8"},   {"r9d", "r9"},   {"r9w", "r9"},
    {"r9b", "r9"},   {"r9l", "r9"},   {"r10d", "r10"},  {"r10w", "r10"}, {"r10b", "r10"}, {"r10l", "r10"},
    {"r11d", "r11"}, {"r11w", "r11"}, {"r11b", "r11"},  {"r11l", "r11"}, {"r12d", "r12"}, {"r12w", "r12"},
    {"r12b", "r12"}, {"r12l", "r12"}, {"r13d", "r13"},  {"r13w", "r13"}, {"r13b", "r13"}, {"r13l", "r13"},
    {"r14d", "r14"}, {"r14w", "r14"}, {"r14b", "r14"},  {"r14l", "r14"}, {"r15d", "r15"}, {"r15w", "r15"},
    {"r15b", "r15"}, {"r15l", "r15"},
}};

// arm64: perf numbering from arch/arm64/include/uapi/asm/perf_regs.h (x0..x30 = 0..30,
// sp = 31, pc = 32); DWARF numbering from the AAPCS64 DWARF supplement (x0..x30, 31 sp).
// Callee-saved: AAPCS64's x19-x29. No A64 operand names pc.
constexpr std::array<RegInfo, 33> kArm64Regs{{
    {"x0", "", 0, 0},    {"x1", "", 1, 1},    {"x2", "", 2, 2},    {"x3", "", 3, 3},
    {"x4", "", 4, 4},    {"x5", "", 5, 5},    {"x6", "", 6, 6},    {"x7", "", 7, 7},
    {"x8", "", 8, 8},    {"x9", "", 9, 9},    {"x10", "", 10, 10}, {"x11", "", 11, 11},
    {"x12", "", 12, 12}, {"x13", "", 13, 13}, {"x14", "", 14, 14}, {"x15", "", 15, 15},
    {"x16", "", 16, 16}, {"x17", "", 17, 17}, {"x18", "", 18, 18}, {"x19", "", 19, 19, kSaved},
    {"x20", "", 20, 20, kSaved}, {"x21", "", 21, 21, kSaved}, {"x22", "", 22, 22, kSaved},
    {"x23", "", 23, 23, kSaved}, {"x24", "", 24, 24, kSaved}, {"x25", "", 25, 25, kSaved},
    {"x26", "", 26, 26, kSaved}, {"x27", "", 27, 27, kSaved}, {"x28", "", 28, 28, kSaved},
    {"x29", "fp", 29, 29, kSaved}, {"x30", "lr", 30, 30},
    {"sp", "", 31, 31},  {"pc", "", 32, -1, false, kNoOp},
}};

// w0-w30 are the low 32 bits of x0-x30, wsp of sp.
constexpr std::array<RegPart, 32> kArm64Parts{{
    {"w0", "x0"},   {"w1", "x1"},   {"w2", "x2"},   {"w3", "x3"},   {"w4", "x4"},   {"w5", "x5"},
    {"w6", "x6"},   {"w7", "x7"},   {"w8", "x8"},   {"w9", "x9"},   {"w10", "x10"}, {"w11", "x11"},
    {"w12", "x12"}, {"w13", "x13"}, {"w14", "x14"}, {"w15", "x15"}, {"w16", "x16"}, {"w17", "x17"},
    {"w18", "x18"}, {"w19", "x19"}, {"w20", "x20"}, {"w21", "x21"}, {"w22", "x22"}, {"w23", "x23"},
    {"w24", "x24"}, {"w25", "x25"}, {"w26", "x26"}, {"w27", "x27"}, {"w28", "x28"}, {"w29", "x29"},
    {"w30", "x30"}, {"wsp", "sp"},
}};
constexpr std::array<uint8_t, 8> kArm64Args{0, 1, 2, 3, 4, 5, 6, 7};
// Go's ABIInternal on arm64: x0-x15.
constexpr std::array<uint8_t, 16> kArm64GoArgs{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

constexpr uint32_t kAbi64 = 2;  // PERF_SAMPLE_REGS_ABI_64

const ArchInfo kX86{
    .arch = Arch::X86_64, .name = "x86_64", .e_machine = EM_X86_64, .insn_align = 1, .fixed_insn_size = 0,
    .perf_sample_abi = kAbi64, .regs = kX86Regs, .reg_parts = kX86Parts, .fp_dwarf_regs = {17, 48},
    .int_arg_regs = kX86Args, .return_reg = 0, .return_reg_hi = 3, .returns_result_address = true, .link_reg = -1,
    .sp_reg = 7, .ip_reg = 8, .stack_args_offset = 8, .entry_cfa = 8, .char_is_signed = true,
    .float_in_register_unavailable = true, .multiarch_triplet = "x86_64-linux-gnu", .ld_so_cache_flags = 0x0303,
    .relocs = {.irelative = R_X86_64_IRELATIVE, .glob_dat = R_X86_64_GLOB_DAT, .jump_slot = R_X86_64_JUMP_SLOT,
               .abs64 = R_X86_64_64},
    .go_g_reg = 22, .go_int_arg_regs = kX86GoArgs};
const ArchInfo kArm64{
    .arch = Arch::Arm64, .name = "arm64", .e_machine = EM_AARCH64, .insn_align = 4, .fixed_insn_size = 4,
    .perf_sample_abi = kAbi64, .regs = kArm64Regs, .reg_parts = kArm64Parts, .fp_dwarf_regs = {64, 95},
    .int_arg_regs = kArm64Args, .return_reg = 0, .return_reg_hi = 1, .returns_result_address = false, .link_reg = 30,
    .sp_reg = 31, .ip_reg = 32, .stack_args_offset = 0, .entry_cfa = 0, .char_is_signed = false,
    .float_in_register_unavailable = false, .multiarch_triplet = "aarch64-linux-gnu", .ld_so_cache_flags = 0x0a03,
    .relocs = {.irelative = R_AARCH64_IRELATIVE, .glob_dat = R_AARCH64_GLOB_DAT, .jump_slot = R_AARCH64_JUMP_SLOT,
               .abs64 = R_AARCH64_ABS64},
    .go_g_reg = 28, .go_int_arg_regs = kArm64GoArgs};

constexpr std::array<const ArchInfo*, 2> kAll{&kX86, &kArm64};

}  // namespace

const ArchInfo& arch_info(Arch a) { return a == Arch::Arm64 ? kArm64 : kX86; }

namespace {
ArchInfo under_go_abi(const ArchInfo& a) {
  ArchInfo go = a;
  go.int_arg_regs = a.go_int_arg_regs;
  go.return_reg_hi = a.go_int_arg_regs[1];
  go.returns_result_address = false;  // Go returns results in registers or its caller's frame
  return go;
}
const ArchInfo kX86Go = under_go_abi(kX86);
const ArchInfo kArm64Go = under_go_abi(kArm64);
}  // namespace

const ArchInfo& go_abi_info(Arch a) { return a == Arch::Arm64 ? kArm64Go : kX86Go; }

std::span<const ArchInfo* const> all_arches() { return kAll; }

std::optional<Arch> arch_from_id(uint8_t id) {
  for (auto* a : kAll)
    if (static_cast<uint8_t>(a->arch) == id) return a->arch;
  return std::nullopt;
}

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

FoundPart find_reg_by_part(const ArchInfo& a, std::string_view name) {
  if (const RegInfo* r = find_reg_by_name(a, name)) return {r, 0};
  for (auto& p : a.reg_parts)
    if (p.name == name) return {find_reg_by_name(a, p.reg), p.byte_offset};
  return {};
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

uint8_t frame_pointer_reg(Arch a) { return a == Arch::Arm64 ? 29 : 6; }

uint16_t pt_regs_bytes(Arch a) {
  if (a == Arch::Arm64) return 34 * 8;                // regs[31], sp, pc, pstate
  return static_cast<uint16_t>(21 * 8);                // r15 ... ss
}

}  // namespace uprof
