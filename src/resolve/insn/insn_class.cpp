#include "uprof/resolve/insn/insn_class.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "uprof/arch/arm64_hints.h"
#include "uprof/util/unique_fd.h"

namespace uprof {
namespace {

std::string hex_bytes(std::span<const uint8_t> code, std::size_t n) {
  std::string s;
  char b[4];
  for (std::size_t i = 0; i < std::min(n, code.size()); i++) {
    std::snprintf(b, sizeof b, "%02x", code[i]);
    s += (s.empty() ? "" : " ") + std::string(b);
  }
  return s;
}

// ---- x86-64 -------------------------------------------------------------------------
//
// Linux 6.18, arch/x86/kernel/uprobes.c: arch_uprobe_analyze_insn() decodes the
// instruction with the kernel's own decoder, then in this order:
//   1. a 5-byte nop 0f 1f 44 00 00 that does not cross a page is optimized into a call to
//      a trampoline after its first hit (can_optimize); it skips step 2;
//   2. uprobe_init_insn() refuses (ENOTSUPP, 524): any es/cs/ss/ds segment or lock prefix
//      (is_prefix_bad), mov to %ss and pop %ss (insn_masking_exception), and an
//      instruction whose first opcode byte is not in good_insns_64 (in/out, int3, int N,
//      hlt, the opcodes invalid in 64-bit mode). That byte is 0f for every two- and
//      three-byte opcode, and 0f is in the table: syscall, ud2 and pshufb pass. For a VEX
//      or EVEX instruction it is the opcode byte after the prefix, looked up in the same
//      one-byte table: vmovd %esi,%xmm0 (c5 f9 6e c6) is refused as if 6e were outs, and
//      vpxor (ef) as if it were out;
//   3. branch_setup_xol_ops() emulates the kernel's nops (its nop table, prefixes + 90),
//      jmp rel8/rel32 (eb, e9), call rel32 (e8) and jcc rel8/rel32 (70-7f, 0f 80-8f),
//      and refuses (ENOTSUPP) these with a 66 prefix. It matches a VEX or EVEX
//      instruction by that opcode byte alone too: vpcmpeqb (c5 f9 74) is emulated as a
//      je, vpor (c5 fd eb) as a jmp, vpsubsb (c5 f9 e8) as a call, and the instruction
//      itself never runs (measured on 6.18: a probed vpcmpeqb leaves its register as it
//      was, a probed vzeroupper (c5 f8 77, ja) the upper halves). The kernel accepts
//      such a probe; uprof refuses it;
//   4. push_setup_xol_ops() emulates push %reg: 50-57 alone, or 41 50-57 (push %r8-%r15);
//   5. everything else is single-stepped out of line.
// Checked against the kernel: tests/resolve/insn/kernel_refusal_test.cpp (fixture code,
// and every function of the machine's libc.so.6).

constexpr int kEnotsupp = 524;  // the kernel's ENOTSUPP, which <errno.h> does not name

struct BadOpcode {
  uint8_t op;
  std::string_view why;
};
// The zeros of good_insns_64, with the kernel's comments on them.
constexpr BadOpcode kX86Bad[] = {
    {0x06, "invalid in 64-bit mode"}, {0x07, "invalid in 64-bit mode"}, {0x0e, "invalid in 64-bit mode"},
    {0x16, "invalid in 64-bit mode"}, {0x17, "invalid in 64-bit mode"}, {0x1e, "invalid in 64-bit mode"},
    {0x1f, "invalid in 64-bit mode"}, {0x27, "invalid in 64-bit mode"}, {0x2f, "invalid in 64-bit mode"},
    {0x37, "invalid in 64-bit mode"}, {0x3f, "invalid in 64-bit mode"}, {0x60, "invalid in 64-bit mode"},
    {0x61, "invalid in 64-bit mode"}, {0x62, "invalid in 64-bit mode"}, {0x6c, "ins/outs"},
    {0x6d, "ins/outs"},               {0x6e, "ins/outs"},               {0x6f, "ins/outs"},
    {0x82, "invalid in 64-bit mode"}, {0x9a, "invalid in 64-bit mode"}, {0xcc, "int3"},
    {0xcd, "int N"},                  {0xce, "invalid in 64-bit mode"}, {0xcf, "iret"},
    {0xd4, "invalid in 64-bit mode"}, {0xd5, "invalid in 64-bit mode"}, {0xd6, "invalid in 64-bit mode"},
    {0xe4, "in/out"},                 {0xe5, "in/out"},                 {0xe6, "in/out"},
    {0xe7, "in/out"},                 {0xea, "invalid in 64-bit mode"}, {0xec, "in/out"},
    {0xed, "in/out"},                 {0xee, "in/out"},                 {0xef, "in/out"},
    {0xf1, "int1"},                   {0xf4, "hlt"},                    {0xfa, "cli"},
    {0xfb, "sti"},
};

const BadOpcode* bad_opcode(uint8_t op) {
  for (const auto& b : kX86Bad)
    if (b.op == op) return &b;
  return nullptr;
}

// The kernel's nop table (asm/nops.h, 64-bit), index = length.
constexpr std::array<std::array<uint8_t, 8>, 9> kX86Nops = {{
    {},
    {0x90},
    {0x66, 0x90},
    {0x0f, 0x1f, 0x00},
    {0x0f, 0x1f, 0x40, 0x00},
    {0x0f, 0x1f, 0x44, 0x00, 0x00},
    {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
    {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
    {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
}};
constexpr std::size_t kNop5 = 5;

constexpr std::string_view kPushRegs[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                            "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};

// Names for common first instructions, for display only.
struct OpName {
  uint8_t op;
  std::string_view name;
};
constexpr OpName kX86Names[] = {
    {0x8d, "lea"}, {0x89, "mov"}, {0x8b, "mov"},  {0x31, "xor"}, {0x33, "xor"}, {0x85, "test"},
    {0x39, "cmp"}, {0x3b, "cmp"}, {0x29, "sub"},  {0x2b, "sub"}, {0x01, "add"}, {0x03, "add"},
    {0xc3, "ret"}, {0xc7, "mov"}, {0x83, "arith"}, {0x81, "arith"},
};

// The length of a named instruction whose opcode byte is at code[at]: ret alone, the
// others a ModRM byte, maybe a SIB byte, a displacement and an immediate. Shown bytes
// stop there ("ret (c3)", not the next instruction's bytes too); nothing when cut short.
std::optional<std::size_t> named_length(std::span<const uint8_t> code, std::size_t at, bool has_66) {
  const uint8_t op = code[at];
  if (op == 0xc3) return at + 1;
  if (at + 1 >= code.size()) return std::nullopt;
  const uint8_t modrm = code[at + 1];
  const unsigned mod = modrm >> 6, rm = modrm & 7;
  std::size_t n = at + 2;
  if (mod != 3 && rm == 4) {
    if (n >= code.size()) return std::nullopt;
    if (mod == 0 && (code[n] & 7) == 5) n += 4;  // SIB with no base: disp32
    n += 1;
  }
  if (mod == 0 && rm == 5) n += 4;  // %rip-relative
  if (mod == 1) n += 1;
  if (mod == 2) n += 4;
  if (op == 0xc7 || op == 0x81) n += has_66 ? 2 : 4;
  if (op == 0x83) n += 1;
  if (n > code.size()) return std::nullopt;
  return n;
}

bool is_legacy_prefix(uint8_t b) {
  switch (b) {
    case 0xf0: case 0xf2: case 0xf3: case 0x2e: case 0x36: case 0x3e: case 0x26: case 0x64: case 0x65:
    case 0x66: case 0x67:
      return true;
    default:
      return false;
  }
}

// The branch the kernel's branch_setup_xol_ops() takes an opcode byte for, if any.
std::string_view x86_branch_name(uint8_t op) {
  static constexpr std::string_view kJcc[16] = {"jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja",
                                                "js", "jns", "jp", "jnp", "jl", "jge", "jle", "jg"};
  if (op >= 0x70 && op <= 0x7f) return kJcc[op - 0x70];
  if (op == 0xe8) return "call";
  if (op == 0xe9 || op == 0xeb) return "jmp";
  return "";
}

// The instruction's opcode as the kernel's decoder sees it.
struct X86Opcode {
  std::size_t at = 0;             // where the opcode byte is
  uint8_t op = 0;                 // OPCODE1: the first opcode byte
  std::string_view escape{};      // "VEX" or "EVEX": `op` is the byte after that prefix
  uint8_t rex = 0;
  bool legacy = false;            // any legacy prefix
  bool has_66 = false;
  std::string_view bad_prefix{};  // the first prefix the kernel refuses: why
};

// nullopt when the bytes end before the opcode.
std::optional<X86Opcode> x86_opcode(std::span<const uint8_t> code) {
  X86Opcode o;
  std::size_t i = 0;
  for (; i < code.size() && is_legacy_prefix(code[i]); i++) {
    const uint8_t p = code[i];
    o.legacy = true;
    if (p == 0x66) o.has_66 = true;
    if (!o.bad_prefix.empty()) continue;
    if (p == 0xf0) o.bad_prefix = "lock prefix";
    if (p == 0x26 || p == 0x2e || p == 0x36 || p == 0x3e) o.bad_prefix = "es/cs/ss/ds segment prefix";
  }
  if (i < code.size() && (code[i] & 0xf0) == 0x40) o.rex = code[i++];
  if (i >= code.size()) return std::nullopt;
  // In 64-bit mode c5 and c4 always start a 2- and 3-byte VEX prefix, 62 a 4-byte EVEX one.
  std::size_t prefix = code[i] == 0xc5 ? 2 : code[i] == 0xc4 ? 3 : code[i] == 0x62 ? 4 : 0;
  if (prefix) {
    o.escape = code[i] == 0x62 ? "EVEX" : "VEX";
    i += prefix;
    if (i >= code.size()) return std::nullopt;
  }
  o.at = i;
  o.op = code[i];
  return o;
}

InsnInfo classify_x86(std::span<const uint8_t> code, uint64_t file_offset) {
  auto single = [&](std::string name) { return InsnInfo{InsnClass::SingleStepped, std::move(name), ""}; };
  auto rejected = [&](std::string why, int errno_value = kEnotsupp) {
    return InsnInfo{.cls = InsnClass::Rejected, .insn = hex_bytes(code, 4), .why = std::move(why),
                    .kernel_errno = errno_value};
  };
  // uprobe_register() refuses an offset past the file's end.
  if (code.empty()) return rejected("no bytes at this offset", EINVAL);

  // The kernel's own nops, matched as whole instructions from the first byte.
  for (std::size_t len = 1; len < kX86Nops.size(); len++) {
    if (code.size() < len || !std::equal(code.begin(), code.begin() + static_cast<std::ptrdiff_t>(len), kX86Nops[len].begin()))
      continue;
    if (len != kNop5) return {InsnClass::Emulated, "nop" + std::to_string(len), ""};
    // Optimizing writes the 5 bytes atomically: not across a page (the file's page
    // offset is the mapping's, segments being page-aligned).
    if (4096 - (file_offset & 4095) >= kNop5) return {InsnClass::Optimized, "nop5", ""};
    return {InsnClass::Emulated, "nop5", "crosses a page: not optimized"};
  }

  // The kernel's decoder fails on an instruction cut short (ENOEXEC).
  const std::optional<X86Opcode> o = x86_opcode(code);
  if (!o) return rejected("truncated instruction", ENOEXEC);
  if (!o->bad_prefix.empty()) return rejected(std::string(o->bad_prefix));
  const uint8_t op = o->op;
  const std::size_t i = o->at;
  if (!o->escape.empty()) {
    const std::string name = o->escape == "VEX" ? "vex " : "evex ";
    if (const BadOpcode* b = bad_opcode(op))
      return rejected(std::string(o->escape) + " opcode " + hex_bytes(code.subspan(i), 1) +
                      ", which the kernel looks up in its one-byte table: " + std::string(b->why));
    if (std::string_view branch = x86_branch_name(op); !branch.empty())
      return rejected(std::string(o->escape) + " opcode " + hex_bytes(code.subspan(i), 1) +
                          ": the kernel would emulate it as a " + std::string(branch) + " and skip the instruction",
                      0);
    return single(name + hex_bytes(code, 4));
  }

  if (op == 0x0f) {
    if (i + 1 >= code.size()) return rejected("truncated instruction", ENOEXEC);
    uint8_t op2 = code[i + 1];
    if (op2 >= 0x80 && op2 <= 0x8f) {
      if (o->has_66) return rejected("branch with a 66 prefix");
      return {InsnClass::Emulated, "jcc rel32", ""};
    }
    if (op2 == 0x1e && i + 2 < code.size() && code[i + 2] == 0xfa && o->legacy && code[0] == 0xf3)
      return single("endbr64");
    return single(hex_bytes(code, 4));
  }

  if (const BadOpcode* b = bad_opcode(op)) return rejected(std::string(b->why));
  // mov to %ss masks interrupts for one instruction: never single-stepped.
  if (op == 0x8e && i + 1 < code.size() && ((code[i + 1] >> 3) & 7) == 2) return rejected("mov to %ss");

  if (op == 0x90) return {InsnClass::Emulated, code[0] == 0xf3 ? "pause" : "nop", ""};
  if (std::string_view branch = x86_branch_name(op); !branch.empty()) {
    if (o->has_66) return rejected("branch with a 66 prefix");
    std::string name = op == 0xe8 ? "call rel32" : op == 0xeb ? "jmp rel8" : op == 0xe9 ? "jmp rel32" : "jcc rel8";
    return {InsnClass::Emulated, name, ""};
  }
  if (op >= 0x50 && op <= 0x57 && !o->legacy && (o->rex == 0 || o->rex == 0x41))
    return {InsnClass::Emulated, "push %" + std::string(kPushRegs[(op - 0x50) + (o->rex ? 8 : 0)]), ""};

  for (const auto& n : kX86Names)
    if (n.op == op) return single(std::string(n.name) + " (" + hex_bytes(code, named_length(code, i, o->has_66).value_or(4)) + ")");
  return single(hex_bytes(code, 4));
}

// ---- arm64 --------------------------------------------------------------------------
//
// The kernel (decode-insn.c) single-steps every "steppable" instruction, simulates the
// PC-relative branches and address computations, and refuses the rest. Not steppable:
// in the branch/exception/system class (bits 28:26 = 101) every branch, exception
// (svc, brk...), msr, eret, mrs of DAIF and most hints (nop, pac*, bti are fine);
// elsewhere literal loads (ldr/ldrsw/prfm literal, adr/adrp) and exclusives (ldxr...).
// Uprobes do not simulate literal loads (kprobes do): they are refused.

struct A64Pattern {
  uint32_t mask;
  uint32_t value;
  std::string_view name;
};

constexpr A64Pattern kA64Simulated[] = {
    {0xff000010, 0x54000000, "b.cond"}, {0x7f000000, 0x34000000, "cbz"},  {0x7f000000, 0x35000000, "cbnz"},
    {0x7f000000, 0x36000000, "tbz"},    {0x7f000000, 0x37000000, "tbnz"}, {0x9f000000, 0x10000000, "adr"},
    {0x9f000000, 0x90000000, "adrp"},   {0xfc000000, 0x14000000, "b"},    {0xfc000000, 0x94000000, "bl"},
    {0xfffffc1f, 0xd61f0000, "br"},     {0xfffffc1f, 0xd63f0000, "blr"},  {0xfffffc1f, 0xd65f0000, "ret"},
};

constexpr uint32_t kA64SysregDaif = 0xda11;  // op0=3 op1=3 CRn=4 CRm=2 op2=1
constexpr std::string_view kA64Exclusive = "exclusive or ordered load/store";

// Returns "" when steppable, else why not.
std::string_view a64_not_steppable(uint32_t insn, std::string& name) {
  if ((insn & 0x1c000000) == 0x14000000) {  // branches, exceptions, system
    if ((insn & 0x7c000000) == 0x14000000 || (insn & 0x7e000000) == 0x34000000 ||
        (insn & 0x7e000000) == 0x36000000 || (insn & 0xfe000000) == 0x54000000 ||
        (insn & 0xfe000000) == 0xd6000000)
      return "branch";
    if ((insn & 0xff000000) == 0xd4000000) return "exception-generating (svc, brk, hlt...)";
    if ((insn & 0xfff8f01f) == 0xd500401f || (insn & 0xfff00000) == 0xd5100000) return "msr";
    if ((insn & 0xfff00000) == 0xd5300000) return ((insn >> 5) & 0xffff) == kA64SysregDaif ? "mrs of DAIF" : "";
    if (arm64_hint_number(insn)) {
      const Arm64Hint* h = find_arm64_hint(insn);
      if (h && h->steppable) {
        name = std::string(h->name);
        return "";
      }
      return "hint not allowed (wfi, yield, aut*...)";
    }
    return "";
  }
  if ((insn & 0xbf000000) == 0x18000000 || (insn & 0xff000000) == 0x98000000 || (insn & 0xff000000) == 0xd8000000) {
    name = "ldr (literal)";
    return "literal load";
  }
  if ((insn & 0x1f000000) == 0x10000000) return "pc-relative address";
  if ((insn & 0x3f000000) == 0x08000000) return kA64Exclusive;
  return "";
}

// arch_uprobe_analyze_insn() (arch/arm64/kernel/probes/uprobes.c) answers EINVAL for a
// misaligned offset and for every instruction arm_probe_decode_insn() rejects.
InsnInfo classify_arm64(std::span<const uint8_t> code, uint64_t file_offset) {
  auto rejected = [&](std::string name, std::string_view why) {
    return InsnInfo{.cls = InsnClass::Rejected, .insn = std::move(name), .why = std::string(why), .kernel_errno = EINVAL};
  };
  if (file_offset % 4) return rejected(hex_bytes(code, 4), "offset not 4-byte aligned");
  if (code.size() < 4) return rejected(hex_bytes(code, 4), "no instruction at this offset");
  uint32_t insn = static_cast<uint32_t>(code[0]) | static_cast<uint32_t>(code[1]) << 8 |
                  static_cast<uint32_t>(code[2]) << 16 | static_cast<uint32_t>(code[3]) << 24;
  char word[16];
  std::snprintf(word, sizeof word, "%08x", insn);
  std::string name;
  std::string_view why = a64_not_steppable(insn, name);
  if (why.empty()) return {InsnClass::SingleStepped, name.empty() ? std::string(word) : name, ""};
  for (const auto& p : kA64Simulated)
    if ((insn & p.mask) == p.value) return {InsnClass::Emulated, std::string(p.name), ""};
  InsnInfo out = rejected(name.empty() ? std::string(word) : name, why);
  // A breakpoint between a load-exclusive and its store-exclusive clears the exclusive
  // monitor on every hit, so the store fails and the loop retries forever: a site never
  // moves past one.
  out.keeps_site = why == kA64Exclusive;
  return out;
}

// The kernel's two rule books (arch/x86/kernel/uprobes.c, arch/arm64/kernel/probes/)
// are different code over different encodings: each architecture has its classifier.
using Classifier = InsnInfo (*)(std::span<const uint8_t> code, uint64_t file_offset);
constexpr PerArch<Classifier> kClassifiers{.x86_64 = classify_x86, .arm64 = classify_arm64};

}  // namespace

std::string_view to_string(InsnClass c) {
  static constexpr std::string_view kNames[kInsnClasses] = {"single-stepped", "emulated", "optimized", "rejected"};
  auto i = static_cast<std::size_t>(c);
  return i < kInsnClasses ? kNames[i] : "?";
}

InsnInfo classify_insn(Arch arch, std::span<const uint8_t> code, uint64_t file_offset) {
  return kClassifiers[arch](code, file_offset);
}

Result<InsnInfo> classify_probe_site(const std::string& path, Arch arch, uint64_t file_offset) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return err("insn: ", path, ": ", std::strerror(errno));
  std::array<uint8_t, 16> buf{};
  ssize_t n = ::pread(fd.get(), buf.data(), buf.size(), static_cast<off_t>(file_offset));
  if (n < 0) return err("insn: ", path, " at offset 0x", std::hex, file_offset, ": ", std::strerror(errno));
  return classify_insn(arch, std::span<const uint8_t>(buf.data(), static_cast<std::size_t>(n)), file_offset);
}

std::string errno_name(int errno_value) {
  switch (errno_value) {
    case kEnotsupp: return "ENOTSUPP";
    case EINVAL: return "EINVAL";
    case ENOEXEC: return "ENOEXEC";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    default: return "errno " + std::to_string(errno_value);
  }
}

std::string describe(const InsnInfo& info) {
  std::string s = std::string(to_string(info.cls)) + " (" + info.insn;
  if (!info.why.empty()) s += ": " + info.why;
  return s + ")";
}

}  // namespace uprof
