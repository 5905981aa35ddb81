#include "uprof/resolve/dwarf/dwarf_expr.h"

#include <dwarf.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <utility>

#include "uprof/util/hex.h"

namespace uprof {
namespace {

// DW_OP_GNU_* spellings gcc still emits; dwarf.h names them, these are their values.
constexpr uint8_t kGnuEntryValue = 0xf3;      // DW_OP_GNU_entry_value
constexpr uint8_t kGnuImplicitPointer = 0xf2; // DW_OP_GNU_implicit_pointer
constexpr uint8_t kGnuParameterRef = 0xfa;    // DW_OP_GNU_parameter_ref

struct OpName {
  uint8_t atom;
  const char* name;
};
// The ops a compiler puts in parameter locations, and a few it might; the
// register families (DW_OP_reg0..31 and so on) are spelled by dwarf_op_name.
constexpr std::array<OpName, 48> kOpNames{{
    {DW_OP_addr, "DW_OP_addr"}, {DW_OP_deref, "DW_OP_deref"}, {DW_OP_const1u, "DW_OP_const1u"},
    {DW_OP_const1s, "DW_OP_const1s"}, {DW_OP_const2u, "DW_OP_const2u"}, {DW_OP_const2s, "DW_OP_const2s"},
    {DW_OP_const4u, "DW_OP_const4u"}, {DW_OP_const4s, "DW_OP_const4s"}, {DW_OP_const8u, "DW_OP_const8u"},
    {DW_OP_const8s, "DW_OP_const8s"}, {DW_OP_constu, "DW_OP_constu"}, {DW_OP_consts, "DW_OP_consts"},
    {DW_OP_dup, "DW_OP_dup"}, {DW_OP_drop, "DW_OP_drop"}, {DW_OP_over, "DW_OP_over"}, {DW_OP_pick, "DW_OP_pick"},
    {DW_OP_swap, "DW_OP_swap"}, {DW_OP_rot, "DW_OP_rot"}, {DW_OP_abs, "DW_OP_abs"}, {DW_OP_and, "DW_OP_and"},
    {DW_OP_div, "DW_OP_div"}, {DW_OP_minus, "DW_OP_minus"}, {DW_OP_mod, "DW_OP_mod"}, {DW_OP_mul, "DW_OP_mul"},
    {DW_OP_neg, "DW_OP_neg"}, {DW_OP_not, "DW_OP_not"}, {DW_OP_or, "DW_OP_or"}, {DW_OP_plus, "DW_OP_plus"},
    {DW_OP_plus_uconst, "DW_OP_plus_uconst"}, {DW_OP_shl, "DW_OP_shl"}, {DW_OP_shr, "DW_OP_shr"},
    {DW_OP_shra, "DW_OP_shra"}, {DW_OP_xor, "DW_OP_xor"}, {DW_OP_regx, "DW_OP_regx"}, {DW_OP_fbreg, "DW_OP_fbreg"},
    {DW_OP_bregx, "DW_OP_bregx"}, {DW_OP_piece, "DW_OP_piece"}, {DW_OP_deref_size, "DW_OP_deref_size"},
    {DW_OP_nop, "DW_OP_nop"}, {DW_OP_call_frame_cfa, "DW_OP_call_frame_cfa"}, {DW_OP_bit_piece, "DW_OP_bit_piece"},
    {DW_OP_implicit_value, "DW_OP_implicit_value"}, {DW_OP_stack_value, "DW_OP_stack_value"},
    {DW_OP_implicit_pointer, "DW_OP_implicit_pointer"}, {DW_OP_entry_value, "DW_OP_entry_value"},
    {kGnuEntryValue, "DW_OP_GNU_entry_value"}, {kGnuImplicitPointer, "DW_OP_GNU_implicit_pointer"},
    {kGnuParameterRef, "DW_OP_GNU_parameter_ref"},
}};

bool is_reg_op(uint8_t a) { return a >= DW_OP_reg0 && a <= DW_OP_reg31; }
bool is_breg_op(uint8_t a) { return a >= DW_OP_breg0 && a <= DW_OP_breg31; }
bool is_lit_op(uint8_t a) { return a >= DW_OP_lit0 && a <= DW_OP_lit31; }

// One value on the evaluation stack, kept symbolic: the registers are not
// known until a sample arrives.
struct Sym {
  enum class Kind { Const, RegPlus, Loaded, EntryReg } kind = Kind::Const;
  int reg = 0;          // DWARF register (RegPlus, Loaded, EntryReg)
  int64_t value = 0;    // the constant, or the addend to the register
  bool static_address = false;              // from DW_OP_addr: a global
  std::optional<int64_t> cfa_delta;         // this is CFA + delta
};

Sym constant(int64_t v, bool static_address = false) {
  Sym s;
  s.value = v;
  s.static_address = static_address;
  return s;
}
Sym reg_sym(Sym::Kind kind, int reg, int64_t add = 0) {
  Sym s;
  s.kind = kind;
  s.reg = reg;
  s.value = add;
  return s;
}

// Where one piece's evaluation ended up.
struct PieceResult {
  std::optional<LocationPiece> piece;
  std::string reason;
};

class Evaluator {
 public:
  explicit Evaluator(const ExprContext& ctx) : ctx_(ctx), info_(arch_info(ctx.arch)) {
    const RegInfo* sp = find_reg_by_perf_index(info_, info_.sp_reg);
    sp_dwarf_ = sp ? sp->dwarf_number : -1;
  }

  ExprLocation run(std::span<const Dwarf_Op> ops) {
    if (ops.empty()) return fail("optimized out");
    bool has_pieces = false;
    for (auto& op : ops) has_pieces |= op.atom == DW_OP_piece;
    std::size_t start = 0, byte = 0;
    for (std::size_t i = 0; i <= ops.size(); i++) {
      bool end = i == ops.size();
      if (!end && ops[i].atom != DW_OP_piece) continue;
      if (end && has_pieces && start == i) break;  // nothing after the last piece
      auto size = end ? ctx_.value_size : static_cast<uint32_t>(ops[i].number);
      auto part = ops.subspan(start, i - start);
      if (part.empty()) {
        // `DW_OP_piece 8` alone: those bytes were optimized out.
        char buf[64];
        std::snprintf(buf, sizeof buf, "optimized out in part (bytes %zu-%zu)", byte, byte + size - 1);
        return fail(buf);
      }
      PieceResult r = piece(part, size);
      if (!r.piece) return fail(r.reason);
      out_.pieces.push_back(*r.piece);
      byte += size;
      start = i + 1;
    }
    out_.available = true;
    return std::move(out_);
  }

 private:
  ExprLocation fail(std::string reason) {
    ExprLocation f;
    f.reason = std::move(reason);
    f.frame_slot = out_.frame_slot;
    f.callee_saved_regs = out_.callee_saved_regs;
    f.uses_frame_base = out_.uses_frame_base;
    return f;
  }

  void use_reg(int dwarf_reg) {
    if (dwarf_reg_callee_saved(ctx_.arch, dwarf_reg) && dwarf_reg < 64) out_.callee_saved_regs |= uint64_t{1} << dwarf_reg;
  }

  // "rdi" / "x19"; "DWARF 17" for registers a sample has no name for.
  std::string reg_label(int dwarf_reg) const {
    const RegInfo* r = find_reg_by_dwarf(info_, dwarf_reg);
    return r ? std::string(r->name) : "DWARF " + std::to_string(dwarf_reg);
  }

  // A register as a piece of the value, or why a sample does not carry it.
  PieceResult reg_piece(int dwarf_reg, uint32_t size) {
    use_reg(dwarf_reg);
    if (info_.fp_dwarf_regs.contains(dwarf_reg)) return {std::nullopt, "in a floating-point register"};
    const RegInfo* r = find_reg_by_dwarf(info_, dwarf_reg);
    if (!r || r->perf_index == info_.ip_reg)
      return {std::nullopt, "in DWARF register " + std::to_string(dwarf_reg) + ", which user-register samples do not carry"};
    if (size > 8) return {std::nullopt, "a " + std::to_string(size) + "-byte value in one 8-byte register"};
    return {LocationPiece{.where = LocationPiece::Where::Register, .perf_reg = r->perf_index, .size = size}, {}};
  }

  // The value lives in memory at `addr` (what the stack holds at the end of
  // an expression without DW_OP_stack_value).
  PieceResult memory_piece(const Sym& addr, uint32_t size) {
    using K = Sym::Kind;
    if (addr.kind == K::Const) {
      return {std::nullopt, "in memory at " + hex(static_cast<uint64_t>(addr.value)) +
                                (addr.static_address ? " (a global)" : "") + ", which a sample does not carry"};
    }
    if (addr.kind == K::EntryReg) return {std::nullopt, "entry value of a register not captured"};
    if (addr.reg == sp_dwarf_) {
      if (addr.value < 0)
        return {std::nullopt, "below the stack pointer (sp" + std::to_string(addr.value) + "), outside a user-stack sample"};
      // [sp + 16]: the value itself; [[sp + 16]]: the slot holds its address.
      return {LocationPiece{.where = LocationPiece::Where::Stack, .stack_offset = static_cast<int32_t>(addr.value),
                            .size = size, .deref = addr.kind == K::Loaded},
              {}};
    }
    if (addr.kind == K::Loaded)
      return {std::nullopt, "the address of the value is itself in memory (DW_OP_deref), which a sample does not carry"};
    PieceResult r = reg_piece(addr.reg, 8);
    if (!r.piece) return r;
    r.piece->deref = true;
    r.piece->deref_offset = static_cast<int32_t>(addr.value);
    r.piece->size = size;
    return r;
  }

  // The value is the top of the stack (DW_OP_stack_value).
  PieceResult value_piece(const Sym& v, uint32_t size) {
    using K = Sym::Kind;
    switch (v.kind) {
      case K::Const:
        return {LocationPiece{.where = LocationPiece::Where::Constant, .size = size, .constant = v.value}, {}};
      case K::EntryReg:
        return {std::nullopt, "entry value of a register not captured"};
      case K::Loaded: {  // [breg7 16; deref; stack_value]: the 8 bytes at rsp+16
        Sym addr = v;
        addr.kind = K::RegPlus;
        return memory_piece(addr, size > 8 ? 8 : size);
      }
      case K::RegPlus:
        if (v.value != 0) {
          use_reg(v.reg);
          return {std::nullopt, "computed from a register (" + reg_label(v.reg) + " " +
                                    (v.value < 0 ? "- " : "+ ") + std::to_string(v.value < 0 ? -v.value : v.value) +
                                    "), not stored anywhere"};
        }
        return reg_piece(v.reg, size);
    }
    return {std::nullopt, "invalid DWARF expression"};
  }

  std::optional<Sym> cfa_sym() {
    if (!ctx_.cfa) return std::nullopt;
    Sym s = reg_sym(Sym::Kind::RegPlus, ctx_.cfa->dwarf_reg, ctx_.cfa->offset);
    s.cfa_delta = 0;
    return s;
  }

  // DW_AT_frame_base: DW_OP_call_frame_cfa (gcc), DW_OP_reg6 (rbp as the base: the register's value), DW_OP_breg7 8.
  std::optional<Sym> frame_base(std::string& why) {
    auto fb = ctx_.frame_base;
    out_.uses_frame_base = true;
    if (fb.size() == 1 && (is_reg_op(fb[0].atom) || fb[0].atom == DW_OP_regx)) {
      int reg = fb[0].atom == DW_OP_regx ? static_cast<int>(fb[0].number) : fb[0].atom - DW_OP_reg0;
      use_reg(reg);
      return reg_sym(Sym::Kind::RegPlus, reg);
    }
    if (fb.size() == 1 && fb[0].atom == DW_OP_call_frame_cfa) {
      auto cfa = cfa_sym();
      if (!cfa) why = "frame base unknown: no CFI row gives the CFA at this address (a separate debug file has no .eh_frame)";
      return cfa;
    }
    if (fb.size() == 1 && (is_breg_op(fb[0].atom) || fb[0].atom == DW_OP_bregx)) {
      bool x = fb[0].atom == DW_OP_bregx;
      int reg = x ? static_cast<int>(fb[0].number) : fb[0].atom - DW_OP_breg0;
      use_reg(reg);
      return reg_sym(Sym::Kind::RegPlus, reg, static_cast<int64_t>(x ? fb[0].number2 : fb[0].number));
    }
    why = fb.empty() ? "no frame base at this address" : "unsupported frame base " + dwarf_op_name(fb[0].atom);
    return std::nullopt;
  }

  PieceResult piece(std::span<const Dwarf_Op> ops, uint32_t size) {
    using K = Sym::Kind;
    // A register location stands alone in its piece: `DW_OP_reg5 DW_OP_piece 8`.
    if (ops.size() == 1 && (is_reg_op(ops[0].atom) || ops[0].atom == DW_OP_regx))
      return reg_piece(ops[0].atom == DW_OP_regx ? static_cast<int>(ops[0].number) : ops[0].atom - DW_OP_reg0, size);
    if (ops.size() == 1 && ops[0].atom == DW_OP_implicit_value) {
      // DW_OP_implicit_value 8 <bytes>: the value itself, little-endian on both arches.
      auto bytes = ctx_.implicit_value ? ctx_.implicit_value(ops[0]) : std::nullopt;
      if (!bytes) return {std::nullopt, "unsupported DWARF op DW_OP_implicit_value"};
      if (bytes->size() > 8) return {std::nullopt, "implicit value of " + std::to_string(bytes->size()) + " bytes"};
      uint64_t v = 0;
      for (std::size_t i = 0; i < bytes->size(); i++) v |= uint64_t{(*bytes)[i]} << (8 * i);
      return {LocationPiece{.where = LocationPiece::Where::Constant, .size = size, .constant = static_cast<int64_t>(v)},
              {}};
    }
    std::vector<Sym> stack;
    bool stack_value = false;
    auto unsupported = [&](uint8_t atom) -> PieceResult {
      if (atom == kGnuParameterRef) return {std::nullopt, "removed from this clone's signature (DW_OP_GNU_parameter_ref)"};
      if (atom == DW_OP_implicit_pointer || atom == kGnuImplicitPointer)
        return {std::nullopt, "a pointer to an optimized-out object (" + dwarf_op_name(atom) + ")"};
      return {std::nullopt, "unsupported DWARF op " + dwarf_op_name(atom)};
    };
    for (std::size_t i = 0; i < ops.size(); i++) {
      const Dwarf_Op& op = ops[i];
      uint8_t a = op.atom;
      if (stack_value) return {std::nullopt, "invalid DWARF expression: ops after DW_OP_stack_value"};
      if (is_lit_op(a)) {
        stack.push_back(constant(a - DW_OP_lit0));
      } else if (a == DW_OP_const1u || a == DW_OP_const2u || a == DW_OP_const4u || a == DW_OP_const8u ||
                 a == DW_OP_constu || a == DW_OP_const1s || a == DW_OP_const2s || a == DW_OP_const4s ||
                 a == DW_OP_const8s || a == DW_OP_consts) {
        stack.push_back(constant(static_cast<int64_t>(op.number)));
      } else if (a == DW_OP_addr) {
        stack.push_back(constant(static_cast<int64_t>(op.number), true));
      } else if (is_breg_op(a) || a == DW_OP_bregx) {
        bool x = a == DW_OP_bregx;
        int reg = x ? static_cast<int>(op.number) : a - DW_OP_breg0;
        use_reg(reg);
        stack.push_back(reg_sym(K::RegPlus, reg, static_cast<int64_t>(x ? op.number2 : op.number)));
      } else if (a == DW_OP_fbreg) {
        std::string why;
        auto fb = frame_base(why);
        if (!fb) return {std::nullopt, why};
        fb->value += static_cast<int64_t>(op.number);
        if (fb->cfa_delta) *fb->cfa_delta += static_cast<int64_t>(op.number);
        stack.push_back(*fb);
      } else if (a == DW_OP_call_frame_cfa) {
        auto cfa = cfa_sym();
        if (!cfa) return {std::nullopt, "no CFI row gives the CFA at this address"};
        stack.push_back(*cfa);
      } else if (a == DW_OP_plus_uconst || ((a == DW_OP_plus || a == DW_OP_minus) && !stack.empty() &&
                                            stack.back().kind == K::Const)) {
        int64_t add = static_cast<int64_t>(op.number);
        if (a != DW_OP_plus_uconst) {
          add = a == DW_OP_plus ? stack.back().value : -stack.back().value;
          stack.pop_back();
        }
        if (stack.empty() || stack.back().kind == K::Loaded || stack.back().kind == K::EntryReg) return unsupported(a);
        stack.back().value += add;
        if (stack.back().cfa_delta) *stack.back().cfa_delta += add;
      } else if (a == DW_OP_deref) {
        if (stack.empty() || stack.back().kind != K::RegPlus) return unsupported(a);
        stack.back().kind = K::Loaded;
        stack.back().cfa_delta.reset();
      } else if (a == DW_OP_entry_value || a == kGnuEntryValue) {
        auto reg = ctx_.entry_value_register ? ctx_.entry_value_register(op) : std::nullopt;
        if (!reg) return {std::nullopt, "unsupported " + dwarf_op_name(a) + " of a non-register expression"};
        // At the first instruction the register still holds what the caller passed.
        stack.push_back(reg_sym(ctx_.at_entry ? K::RegPlus : K::EntryReg, *reg));
      } else if (a == DW_OP_stack_value) {
        stack_value = true;
      } else if (a == DW_OP_nop) {
      } else {
        return unsupported(a);
      }
    }
    if (stack.empty()) return {std::nullopt, "invalid DWARF expression: empty stack"};
    const Sym& top = stack.back();
    // A slot below the CFA belongs to this function's own frame: the prologue fills it.
    if (top.cfa_delta && *top.cfa_delta < 0) out_.frame_slot = true;
    return stack_value ? value_piece(top, size) : memory_piece(top, size);
  }

  const ExprContext& ctx_;
  const ArchInfo& info_;
  int sp_dwarf_ = -1;
  ExprLocation out_;
};

}  // namespace

std::optional<CfaRule> cfa_rule_from_ops(std::span<const Dwarf_Op> ops) {
  // libdw writes the "register + offset" rule as one DW_OP_bregN (or bregx).
  if (ops.size() != 1) return std::nullopt;
  uint8_t a = ops[0].atom;
  if (is_breg_op(a)) return CfaRule{a - DW_OP_breg0, static_cast<int64_t>(ops[0].number)};
  if (a == DW_OP_bregx) return CfaRule{static_cast<int>(ops[0].number), static_cast<int64_t>(ops[0].number2)};
  return std::nullopt;
}

ExprLocation translate_location(std::span<const Dwarf_Op> ops, const ExprContext& ctx) {
  return Evaluator(ctx).run(ops);
}

std::string dwarf_op_name(uint8_t atom) {
  if (is_lit_op(atom)) return "DW_OP_lit" + std::to_string(atom - DW_OP_lit0);
  if (is_reg_op(atom)) return "DW_OP_reg" + std::to_string(atom - DW_OP_reg0);
  if (is_breg_op(atom)) return "DW_OP_breg" + std::to_string(atom - DW_OP_breg0);
  for (auto& n : kOpNames)
    if (n.atom == atom) return n.name;
  char buf[16];
  std::snprintf(buf, sizeof buf, "DW_OP_0x%02x", atom);
  return buf;
}

bool dwarf_reg_callee_saved(Arch arch, int r) {
  const RegInfo* reg = find_reg_by_dwarf(arch_info(arch), r);
  return reg && reg->callee_saved;
}

}  // namespace uprof
