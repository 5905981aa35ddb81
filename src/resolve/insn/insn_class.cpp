#include "uprof/resolve/insn/insn_class.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

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
// The kernel decodes the instruction, then in this order:
//   1. refuses es/cs/ss/ds segment prefixes and lock, `mov %x,%ss`, and one-byte opcodes
//      outside its table of good ones (int3, hlt, in/out, opcodes invalid in 64-bit mode);
//      every 0f xx opcode passes that table;
//   2. emulates branches: the nops of its own nop table and any prefixes + 0x90, jmp rel8
//      (eb) and rel32 (e9), call rel32 (e8), jcc rel8 (70-7f) and rel32 (0f 80-8f); a 66
//      (operand size) prefix on a branch is refused;
//   3. emulates push %reg: 50-57 alone, or 41 50-57 (push %r8-%r15);
//   4. single-steps everything else out of line.
// Linux 6.18 then optimizes a probe on the 5-byte nop 0f 1f 44 00 00 into a call to a
// trampoline, if the nop does not cross a page.

struct BadOpcode {
  uint8_t op;
  std::string_view why;
};
constexpr BadOpcode kX86Bad[] = {
    {0x06, "invalid in 64-bit mode"}, {0x07, "invalid in 64-bit mode"}, {0x0e, "invalid in 64-bit mode"},
    {0x16, "invalid in 64-bit mode"}, {0x17, "invalid in 64-bit mode"}, {0x1e, "invalid in 64-bit mode"},
    {0x1f, "invalid in 64-bit mode"}, {0x27, "invalid in 64-bit mode"}, {0x2f, "invalid in 64-bit mode"},
    {0x37, "invalid in 64-bit mode"}, {0x3f, "invalid in 64-bit mode"}, {0x60, "invalid in 64-bit mode"},
    {0x61, "invalid in 64-bit mode"}, {0x62, "EVEX, not supported"},     {0x6c, "ins/outs"},
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

bool is_legacy_prefix(uint8_t b) {
  switch (b) {
    case 0xf0: case 0xf2: case 0xf3: case 0x2e: case 0x36: case 0x3e: case 0x26: case 0x64: case 0x65:
    case 0x66: case 0x67:
      return true;
    default:
      return false;
  }
}

InsnInfo classify_x86(std::span<const uint8_t> code, uint64_t file_offset) {
  auto single = [&](std::string name) { return InsnInfo{InsnClass::SingleStepped, std::move(name), ""}; };
  auto rejected = [&](std::string why) { return InsnInfo{InsnClass::Rejected, hex_bytes(code, 4), std::move(why)}; };
  if (code.empty()) return rejected("no bytes at this offset");

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

  std::size_t i = 0;
  bool has_66 = false, legacy = false;
  for (; i < code.size() && is_legacy_prefix(code[i]); i++) {
    uint8_t p = code[i];
    legacy = true;
    if (p == 0x66) has_66 = true;
    if (p == 0xf0) return rejected("lock prefix");
    if (p == 0x26 || p == 0x2e || p == 0x36 || p == 0x3e) return rejected("es/cs/ss/ds segment prefix");
  }
  uint8_t rex = 0;
  if (i < code.size() && (code[i] & 0xf0) == 0x40) rex = code[i++];
  if (i >= code.size()) return rejected("truncated instruction");
  uint8_t op = code[i];

  // VEX (c4, c5): opcodes of the 0f maps, all of which the kernel's table lets through.
  if (op == 0xc4 || op == 0xc5) return single("vex " + hex_bytes(code, 4));

  if (op == 0x0f) {
    if (i + 1 >= code.size()) return rejected("truncated instruction");
    uint8_t op2 = code[i + 1];
    if (op2 >= 0x80 && op2 <= 0x8f) {
      if (has_66) return rejected("branch with a 66 prefix");
      return {InsnClass::Emulated, "jcc rel32", ""};
    }
    if (op2 == 0x1e && i + 2 < code.size() && code[i + 2] == 0xfa && legacy && code[0] == 0xf3)
      return single("endbr64");
    return single(hex_bytes(code, 4));
  }

  for (const auto& b : kX86Bad)
    if (b.op == op) return rejected(std::string(b.why));
  // mov to %ss masks interrupts for one instruction: never single-stepped.
  if (op == 0x8e && i + 1 < code.size() && ((code[i + 1] >> 3) & 7) == 2) return rejected("mov to %ss");

  if (op == 0x90) return {InsnClass::Emulated, code[0] == 0xf3 ? "pause" : "nop", ""};
  if (op == 0xeb || op == 0xe9 || op == 0xe8 || (op >= 0x70 && op <= 0x7f)) {
    if (has_66) return rejected("branch with a 66 prefix");
    std::string name = op == 0xe8 ? "call rel32" : op == 0xeb ? "jmp rel8" : op == 0xe9 ? "jmp rel32" : "jcc rel8";
    return {InsnClass::Emulated, name, ""};
  }
  if (op >= 0x50 && op <= 0x57 && !legacy && (rex == 0 || rex == 0x41))
    return {InsnClass::Emulated, "push %" + std::string(kPushRegs[(op - 0x50) + (rex ? 8 : 0)]), ""};

  for (const auto& n : kX86Names)
    if (n.op == op) return single(std::string(n.name) + " (" + hex_bytes(code, 4) + ")");
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
  if ((insn & 0x3f000000) == 0x08000000) return "exclusive or ordered load/store";
  return "";
}

InsnInfo classify_arm64(std::span<const uint8_t> code, uint64_t file_offset) {
  if (file_offset % 4) return {InsnClass::Rejected, hex_bytes(code, 4), "offset not 4-byte aligned"};
  if (code.size() < 4) return {InsnClass::Rejected, hex_bytes(code, 4), "no instruction at this offset"};
  uint32_t insn = static_cast<uint32_t>(code[0]) | static_cast<uint32_t>(code[1]) << 8 |
                  static_cast<uint32_t>(code[2]) << 16 | static_cast<uint32_t>(code[3]) << 24;
  char word[16];
  std::snprintf(word, sizeof word, "%08x", insn);
  std::string name;
  std::string_view why = a64_not_steppable(insn, name);
  if (why.empty()) return {InsnClass::SingleStepped, name.empty() ? std::string(word) : name, ""};
  for (const auto& p : kA64Simulated)
    if ((insn & p.mask) == p.value) return {InsnClass::Emulated, std::string(p.name), ""};
  return {InsnClass::Rejected, name.empty() ? std::string(word) : name, std::string(why)};
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

std::string describe(const InsnInfo& info) {
  std::string s = std::string(to_string(info.cls)) + " (" + info.insn;
  if (!info.why.empty()) s += ": " + info.why;
  return s + ")";
}

}  // namespace uprof
