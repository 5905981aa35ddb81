#include "uprof/resolve/insn/insn_decode.h"

#include <capstone/capstone.h>

#include "uprof/arch/arm64_hints.h"

#include <array>
#include <cstring>
#include <string_view>

namespace uprof {

struct InsnDecoder::Handle {
  csh cs = 0;
  cs_insn* insn = nullptr;
  ~Handle() {
    if (insn) cs_free(insn, 1);
    if (cs) cs_close(&cs);
  }
};

namespace {

// x86-64: every name Capstone gives a part of a general register, by whole register.
constexpr std::array<std::array<std::string_view, 5>, 17> kX86Parts{{
    {"rax", "eax", "ax", "al", "ah"},   {"rbx", "ebx", "bx", "bl", "bh"},   {"rcx", "ecx", "cx", "cl", "ch"},
    {"rdx", "edx", "dx", "dl", "dh"},   {"rsi", "esi", "si", "sil", ""},    {"rdi", "edi", "di", "dil", ""},
    {"rbp", "ebp", "bp", "bpl", ""},    {"rsp", "esp", "sp", "spl", ""},    {"r8", "r8d", "r8w", "r8b", ""},
    {"r9", "r9d", "r9w", "r9b", ""},    {"r10", "r10d", "r10w", "r10b", ""}, {"r11", "r11d", "r11w", "r11b", ""},
    {"r12", "r12d", "r12w", "r12b", ""}, {"r13", "r13d", "r13w", "r13b", ""}, {"r14", "r14d", "r14w", "r14b", ""},
    {"r15", "r15d", "r15w", "r15b", ""}, {"rip", "eip", "ip", "", ""},
}};

std::string whole_register(Arch arch, std::string_view part) {
  if (arch == Arch::X86_64) {
    for (const auto& names : kX86Parts)
      for (std::string_view n : names)
        if (!n.empty() && n == part) return std::string(names[0]);
    return std::string(part);
  }
  if (part == "wsp") return "sp";
  if (part.size() >= 2 && part[0] == 'w' && part[1] >= '0' && part[1] <= '9') return "x" + std::string(part.substr(1));
  return std::string(part);
}

bool has_group(const cs_detail* d, uint8_t g) {
  for (uint8_t i = 0; i < d->groups_count; i++)
    if (d->groups[i] == g) return true;
  return false;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// arm64 instructions that write memory, by mnemonic (see the header).
bool arm64_writes_memory(std::string_view m) {
  if (starts_with(m, "st") || starts_with(m, "swp") || starts_with(m, "cas") || m == "dc") return true;
  for (std::string_view atomic : {"ldadd", "ldclr", "ldeor", "ldset", "ldsmax", "ldsmin", "ldumax", "ldumin"})
    if (starts_with(m, atomic)) return true;
  return false;
}

uint32_t word_at(const uint8_t* b) {
  return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

// Capstone 4 prints the newer hints as `hint #N` (arch/arm64_hints.h names them).
std::string_view arm64_hint_name(const uint8_t* b) {
  const Arm64Hint* h = find_arm64_hint(word_at(b));
  return h ? h->name : std::string_view();
}

// The register a pointer-authentication hint signs or strips, which Capstone 4 does not list.
uint64_t arm64_pac_writes(const ArchInfo& a, const uint8_t* b) {
  const Arm64Hint* h = find_arm64_hint(word_at(b));
  if (!h || !h->writes) return 0;
  const RegInfo* r = find_reg_by_name(a, h->writes == 30 ? "x30" : "x17");
  return r ? 1ull << r->perf_index : 0;
}

}  // namespace

InsnDecoder::InsnDecoder(Arch arch, std::unique_ptr<Handle> h) : arch_(arch), h_(std::move(h)) {}
InsnDecoder::InsnDecoder(InsnDecoder&&) noexcept = default;
InsnDecoder& InsnDecoder::operator=(InsnDecoder&&) noexcept = default;
InsnDecoder::~InsnDecoder() = default;

Result<InsnDecoder> InsnDecoder::open(Arch arch) {
  auto h = std::make_unique<Handle>();
  cs_err e = arch == Arch::Arm64 ? cs_open(CS_ARCH_ARM64, CS_MODE_LITTLE_ENDIAN, &h->cs)
                                 : cs_open(CS_ARCH_X86, CS_MODE_64, &h->cs);
  if (e != CS_ERR_OK) return err("insn: Capstone cannot decode ", arch_info(arch).name, ": ", cs_strerror(e));
  cs_option(h->cs, CS_OPT_DETAIL, CS_OPT_ON);
  if (arch == Arch::X86_64) cs_option(h->cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
  h->insn = cs_malloc(h->cs);
  if (!h->insn) return err("insn: Capstone: out of memory");
  return InsnDecoder(arch, std::move(h));
}

std::optional<DecodedInsn> InsnDecoder::decode(std::span<const uint8_t> code, uint64_t address) const {
  const uint8_t* p = code.data();
  size_t size = code.size();
  uint64_t addr = address;
  cs_insn* in = h_->insn;
  if (size == 0 || !cs_disasm_iter(h_->cs, &p, &size, &addr, in)) return std::nullopt;
  DecodedInsn out;
  out.address = address;
  out.length = static_cast<uint8_t>(in->size);
  out.text = in->mnemonic;
  if (in->op_str[0]) out.text += std::string(" ") + in->op_str;
  const cs_detail* d = in->detail;
  const std::string_view mnemonic = in->mnemonic;
  // arm64's calls by name too: Capstone 4 puts bl and blr in the jump group only.
  const bool call = has_group(d, CS_GRP_CALL) ||
                    (arch_ == Arch::Arm64 && (mnemonic == "bl" || mnemonic == "blr" || mnemonic.starts_with("blra")));
  const bool jump = has_group(d, CS_GRP_JUMP) && !call;
  // arm64's returns by name too: Capstone 4 does not put every one in the return group.
  const bool ret = has_group(d, CS_GRP_RET) ||
                   (arch_ == Arch::Arm64 && (mnemonic == "ret" || mnemonic == "retaa" || mnemonic == "retab"));
  const bool relative = has_group(d, CS_GRP_BRANCH_RELATIVE);
  out.changes_flow = jump || call || ret || relative || has_group(d, CS_GRP_INT) || has_group(d, CS_GRP_IRET);
  out.indirect_jump = jump && !relative && !call && !ret;
  out.is_call = call;
  out.is_return = ret;
  out.conditional = relative && !call && !ret &&
                    (arch_ == Arch::X86_64 ? !mnemonic.starts_with("jmp") : mnemonic != "b");

  const ArchInfo& a = arch_info(arch_);
  cs_regs read{}, written{};
  uint8_t nread = 0, nwritten = 0;
  if (cs_regs_access(h_->cs, in, read, &nread, written, &nwritten) == CS_ERR_OK) {
    for (uint8_t i = 0; i < nwritten; i++) {
      const char* name = cs_reg_name(h_->cs, written[i]);
      if (!name) continue;
      if (const RegInfo* r = find_reg_by_name(a, whole_register(arch_, name))) out.regs_written |= 1ull << r->perf_index;
    }
  }
  if (arch_ == Arch::X86_64) {
    for (uint8_t i = 0; i < d->x86.op_count; i++) {
      const cs_x86_op& op = d->x86.operands[i];
      if (op.type == X86_OP_MEM && (op.access & CS_AC_WRITE)) out.writes_memory = true;
      if (op.type == X86_OP_IMM && relative) out.direct_target = static_cast<uint64_t>(op.imm);
      if (op.type == X86_OP_MEM && op.mem.base == X86_REG_RIP)
        out.rip_address = address + in->size + static_cast<uint64_t>(op.mem.disp);
      if (op.type == X86_OP_MEM && out.indirect_jump && op.mem.base == X86_REG_INVALID && op.mem.scale == 8)
        out.absolute_table = static_cast<uint64_t>(op.mem.disp);
    }
    std::string_view m = in->mnemonic;
    // Capstone 4 marks `test $imm, mem` as writing mem; test only reads.
    if (starts_with(m, "test")) out.writes_memory = false;
    // The string stores (rep movsb, stosq...): not the sign extensions movslq, movsbl.
    for (std::string_view prefix : {"rep ", "repne ", "repe "})
      if (starts_with(m, prefix)) m.remove_prefix(prefix.size());
    const bool string_store = (starts_with(m, "stos") || starts_with(m, "movs")) && m.size() == 5;
    if (starts_with(m, "push") || call || string_store || m == "enter") out.writes_memory = true;
  } else {
    for (uint8_t i = 0; i < d->arm64.op_count; i++) {
      const cs_arm64_op& op = d->arm64.operands[i];
      if (op.type == ARM64_OP_IMM && relative) out.direct_target = static_cast<uint64_t>(op.imm);
    }
    if (arm64_writes_memory(in->mnemonic)) out.writes_memory = true;
    out.regs_written |= arm64_pac_writes(a, in->bytes);
    if (std::string_view hint = arm64_hint_name(in->bytes); !hint.empty()) out.text = std::string(hint);
    // A writeback addressing mode ([sp, #-16]!, [x0], #8) writes its base register.
    if (d->arm64.writeback) {
      for (uint8_t i = 0; i < d->arm64.op_count; i++) {
        const cs_arm64_op& op = d->arm64.operands[i];
        if (op.type != ARM64_OP_MEM) continue;
        const char* name = cs_reg_name(h_->cs, op.mem.base);
        if (!name) continue;
        if (const RegInfo* r = find_reg_by_name(a, whole_register(arch_, name))) out.regs_written |= 1ull << r->perf_index;
      }
    }
  }
  return out;
}

bool InsnDecoder::writes_sp(const DecodedInsn& insn) const {
  return insn.regs_written & (1ull << arch_info(arch_).sp_reg);
}

}  // namespace uprof
