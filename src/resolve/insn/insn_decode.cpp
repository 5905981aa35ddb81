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

// A register Capstone names (`eax`, `w3`, `x30`) as a perf register bit; 0 when
// a sample carries no such register.
uint64_t reg_bit(const ArchInfo& a, csh cs, unsigned cs_reg) {
  const char* name = cs_reg_name(cs, cs_reg);
  if (!name) return 0;
  const RegInfo* r = find_reg_by_part(a, name).reg;
  return r ? 1ull << r->perf_index : 0;
}

// One decoded instruction, as the per-architecture readers below see it.
struct Raw {
  csh cs;
  const cs_insn* in;
  const ArchInfo& arch;
  bool relative;  // Capstone's relative-branch group
  bool call;
};

// x86-64's operands: memory writes, a relative branch's target, %rip-relative
// addresses and `jmp *TABLE(,%reg,8)` tables.
void x86_details(const Raw& r, DecodedInsn& out) {
  const cs_detail* d = r.in->detail;
  for (uint8_t i = 0; i < d->x86.op_count; i++) {
    const cs_x86_op& op = d->x86.operands[i];
    if (op.type == X86_OP_MEM && (op.access & CS_AC_WRITE)) out.writes_memory = true;
    if (op.type == X86_OP_IMM && r.relative) out.direct_target = static_cast<uint64_t>(op.imm);
    if (op.type == X86_OP_MEM && op.mem.base == X86_REG_RIP)
      out.rip_address = out.address + r.in->size + static_cast<uint64_t>(op.mem.disp);
    if (op.type == X86_OP_MEM && out.indirect_jump && op.mem.base == X86_REG_INVALID && op.mem.scale == 8)
      out.absolute_table = static_cast<uint64_t>(op.mem.disp);
  }
  std::string_view m = r.in->mnemonic;
  // Capstone 4 marks `test $imm, mem` as writing mem; test only reads.
  if (starts_with(m, "test")) out.writes_memory = false;
  // The string stores (rep movsb, stosq...): not the sign extensions movslq, movsbl.
  for (std::string_view prefix : {"rep ", "repne ", "repe "})
    if (starts_with(m, prefix)) m.remove_prefix(prefix.size());
  const bool string_store = (starts_with(m, "stos") || starts_with(m, "movs")) && m.size() == 5;
  if (starts_with(m, "push") || r.call || string_store || m == "enter") out.writes_memory = true;
}

// arm64's: a relative branch's target, stores by mnemonic, the hints Capstone 4
// does not name, and the base register a writeback addressing mode writes.
void arm64_details(const Raw& r, DecodedInsn& out) {
  const cs_detail* d = r.in->detail;
  for (uint8_t i = 0; i < d->arm64.op_count; i++) {
    const cs_arm64_op& op = d->arm64.operands[i];
    if (op.type == ARM64_OP_IMM && r.relative) out.direct_target = static_cast<uint64_t>(op.imm);
  }
  if (arm64_writes_memory(r.in->mnemonic)) out.writes_memory = true;
  out.regs_written |= arm64_pac_writes(r.arch, r.in->bytes);
  if (std::string_view hint = arm64_hint_name(r.in->bytes); !hint.empty()) out.text = std::string(hint);
  // A writeback addressing mode ([sp, #-16]!, [x0], #8) writes its base register.
  if (d->arm64.writeback) {
    for (uint8_t i = 0; i < d->arm64.op_count; i++) {
      const cs_arm64_op& op = d->arm64.operands[i];
      if (op.type == ARM64_OP_MEM) out.regs_written |= reg_bit(r.arch, r.cs, op.mem.base);
    }
  }
}

bool x86_call_by_name(std::string_view) { return false; }
bool x86_return_by_name(std::string_view) { return false; }
bool x86_always_jumps(std::string_view m) { return m.starts_with("jmp"); }
// Capstone 4 puts bl and blr in the jump group only, and not every return in the return group.
bool arm64_call_by_name(std::string_view m) { return m == "bl" || m == "blr" || m.starts_with("blra"); }
bool arm64_return_by_name(std::string_view m) { return m == "ret" || m == "retaa" || m == "retab"; }
bool arm64_always_jumps(std::string_view m) { return m == "b"; }

// What differs between the two decoders. It stays here rather than in arch/: these
// are Capstone's terms (its modes, its operand structs, its version's gaps), and
// arch/ depends on no disassembler.
struct DecodeRules {
  cs_arch cs_arch_id;
  cs_mode cs_mode_id;
  bool att_syntax;                               // x86-64 prints AT&T: "push %rbp"
  bool (*call_by_name)(std::string_view);        // calls Capstone's groups miss
  bool (*return_by_name)(std::string_view);      // returns Capstone's groups miss
  bool (*always_jumps)(std::string_view);        // a relative branch that cannot fall through: jmp, b
  void (*details)(const Raw&, DecodedInsn&);     // reads the architecture's own operand details
};

constexpr PerArch<DecodeRules> kRules{
    .x86_64 = {CS_ARCH_X86, CS_MODE_64, true, x86_call_by_name, x86_return_by_name, x86_always_jumps, x86_details},
    .arm64 = {CS_ARCH_ARM64, CS_MODE_LITTLE_ENDIAN, false, arm64_call_by_name, arm64_return_by_name,
              arm64_always_jumps, arm64_details},
};

}  // namespace

InsnDecoder::InsnDecoder(Arch arch, std::unique_ptr<Handle> h) : arch_(arch), h_(std::move(h)) {}
InsnDecoder::InsnDecoder(InsnDecoder&&) noexcept = default;
InsnDecoder& InsnDecoder::operator=(InsnDecoder&&) noexcept = default;
InsnDecoder::~InsnDecoder() = default;

Result<InsnDecoder> InsnDecoder::open(Arch arch) {
  auto h = std::make_unique<Handle>();
  const DecodeRules& rules = kRules[arch];
  cs_err e = cs_open(rules.cs_arch_id, rules.cs_mode_id, &h->cs);
  if (e != CS_ERR_OK) return err("insn: Capstone cannot decode ", arch_info(arch).name, ": ", cs_strerror(e));
  cs_option(h->cs, CS_OPT_DETAIL, CS_OPT_ON);
  if (rules.att_syntax) cs_option(h->cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
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
  const DecodeRules& rules = kRules[arch_];
  DecodedInsn out;
  out.address = address;
  out.length = static_cast<uint8_t>(in->size);
  out.text = in->mnemonic;
  if (in->op_str[0]) out.text += std::string(" ") + in->op_str;
  const cs_detail* d = in->detail;
  const std::string_view mnemonic = in->mnemonic;
  const bool call = has_group(d, CS_GRP_CALL) || rules.call_by_name(mnemonic);
  const bool jump = has_group(d, CS_GRP_JUMP) && !call;
  const bool ret = has_group(d, CS_GRP_RET) || rules.return_by_name(mnemonic);
  const bool relative = has_group(d, CS_GRP_BRANCH_RELATIVE);
  out.changes_flow = jump || call || ret || relative || has_group(d, CS_GRP_INT) || has_group(d, CS_GRP_IRET);
  out.indirect_jump = jump && !relative && !call && !ret;
  out.is_call = call;
  out.is_return = ret;
  out.conditional = relative && !call && !ret && !rules.always_jumps(mnemonic);

  const ArchInfo& a = arch_info(arch_);
  cs_regs read{}, written{};
  uint8_t nread = 0, nwritten = 0;
  if (cs_regs_access(h_->cs, in, read, &nread, written, &nwritten) == CS_ERR_OK) {
    for (uint8_t i = 0; i < nwritten; i++) out.regs_written |= reg_bit(a, h_->cs, written[i]);
  }
  rules.details(Raw{.cs = h_->cs, .in = in, .arch = a, .relative = relative, .call = call}, out);
  return out;
}

bool InsnDecoder::writes_sp(const DecodedInsn& insn) const {
  return insn.regs_written & (1ull << arch_info(arch_).sp_reg);
}

}  // namespace uprof
