#include "uprof/resolve/dwarf/param_location.h"
#include "uprof/resolve/dwarf/dwarf_types.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "uprof/resolve/dwarf/call_abi.h"
#include "uprof/resolve/dwarf/dwarf_index.h"
#include "uprof/resolve/dwarf/scope_variables.h"
#include "uprof/util/hex.h"

namespace uprof {
namespace {

// ---- Types: what to print, and how the conventions see the bytes ----------

uint64_t byte_size(Dwarf_Die* t, uint64_t fallback) {
  Dwarf_Word size = 0;
  return dwarf_aggregate_size(t, &size) == 0 ? size : fallback;
}

bool type_of(Dwarf_Die* die, Dwarf_Die* out) {
  Dwarf_Attribute a;
  return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

uint64_t udata(Dwarf_Die* die, unsigned attr, uint64_t fallback) {
  Dwarf_Attribute a;
  Dwarf_Word v = 0;
  return dwarf_attr_integrate(die, attr, &a) && dwarf_formudata(&a, &v) == 0 ? v : fallback;
}

// The scalar members of a type with their offsets: `struct mixed { double d;
// long l; }` is a float leaf at 0 and an integer leaf at 8.
struct Leaves {
  uint8_t int_mask = 0, sse_mask = 0;   // eightbytes 0 and 1 touched by integer / floating-point leaves
  bool float16 = false;                 // a 16-byte float: long double
  unsigned ints = 0, floats = 0;
  uint64_t float_size = 0;              // 0 while none, ~0 when the floats differ in size
  uint64_t align = 1;
  bool unknown = false;                 // a member whose layout could not be read
};

void add_leaf(Leaves& l, uint64_t off, uint64_t size, bool is_float) {
  if (size == 0) return;
  l.align = std::max<uint64_t>(l.align, std::min<uint64_t>(size, 16));
  if (is_float) {
    l.floats++;
    l.float16 |= size == 16;
    l.float_size = l.float_size == 0 || l.float_size == size ? size : ~uint64_t{0};
  } else {
    l.ints++;
  }
  for (uint64_t eb = off / 8; eb <= (off + size - 1) / 8 && eb < 2; eb++)
    (is_float ? l.sse_mask : l.int_mask) |= static_cast<uint8_t>(1u << eb);
}

void walk_leaves(Dwarf_Die* type, uint64_t off, Leaves& l, int depth) {
  Dwarf_Die t;
  if (depth > 16 || dwarf_peel_type(type, &t) != 0) {
    l.unknown = true;
    return;
  }
  const uint64_t size = byte_size(&t, 8);
  switch (dwarf_tag(&t)) {
    case DW_TAG_base_type: {
      auto enc = udata(&t, DW_AT_encoding, 0);
      if (enc == DW_ATE_complex_float) {  // two halves: `double _Complex` is two doubles
        add_leaf(l, off, size / 2, true);
        add_leaf(l, off + size / 2, size / 2, true);
      } else {
        add_leaf(l, off, size, enc == DW_ATE_float);
      }
      return;
    }
    case DW_TAG_enumeration_type: case DW_TAG_pointer_type: case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type: case DW_TAG_ptr_to_member_type: case DW_TAG_unspecified_type:
      add_leaf(l, off, size, false);
      return;
    case DW_TAG_structure_type: case DW_TAG_class_type: case DW_TAG_union_type: {
      l.align = std::max<uint64_t>(l.align, udata(&t, DW_AT_alignment, 1));
      Dwarf_Die c, m;
      for (int r = dwarf_child(&t, &c); r == 0; r = dwarf_siblingof(&c, &c)) {
        int tag = dwarf_tag(&c);
        if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) || dwarf_hasattr(&c, DW_AT_declaration) ||
            dwarf_hasattr(&c, DW_AT_external))  // a DWARF 4 static data member
          continue;
        uint64_t at = dwarf_hasattr(&c, DW_AT_data_bit_offset) ? udata(&c, DW_AT_data_bit_offset, 0) / 8
                                                                : udata(&c, DW_AT_data_member_location, 0);
        if (type_of(&c, &m)) walk_leaves(&m, off + at, l, depth + 1);
        else l.unknown = true;
      }
      return;
    }
    case DW_TAG_array_type: {
      Dwarf_Die elem;
      if (!type_of(&t, &elem)) break;
      uint64_t esize = byte_size(&elem, 0);
      uint64_t count = esize ? size / esize : 0;
      // Past 32 elements no aggregate is homogeneous or fits in registers:
      // the leaves within the first 16 bytes decide the classes.
      for (uint64_t i = 0; i < std::min<uint64_t>(count, 32); i++) walk_leaves(&elem, off + i * esize, l, depth + 1);
      if (count > 32) l.ints++;
      return;
    }
    default:
      break;
  }
  l.unknown = true;
}

ValueType::Kind kind_of(Dwarf_Die* t) {
  using K = ValueType::Kind;
  switch (dwarf_tag(t)) {
    case DW_TAG_base_type:
      switch (udata(t, DW_AT_encoding, 0)) {
        case DW_ATE_boolean: return K::Bool;
        case DW_ATE_signed_char: case DW_ATE_unsigned_char: return K::Char;  // `char` is unsigned on arm64
        case DW_ATE_signed: return K::Signed;
        case DW_ATE_unsigned: case DW_ATE_UTF: return K::Unsigned;
        case DW_ATE_float: case DW_ATE_complex_float: return K::Float;
        default: return K::Unknown;
      }
    case DW_TAG_enumeration_type: return K::Enum;
    case DW_TAG_pointer_type: case DW_TAG_reference_type: case DW_TAG_rvalue_reference_type:
    case DW_TAG_ptr_to_member_type: case DW_TAG_unspecified_type:  // decltype(nullptr)
      return K::Pointer;
    case DW_TAG_structure_type: case DW_TAG_class_type: case DW_TAG_union_type: return K::Struct;
    default: return K::Unknown;
  }
}

// `enum color { RED, BLUE = 7, DARK = -2 }`: values read as the underlying
// type's signedness (a DW_FORM_data1 of 0xfe is -2 for int, 254 for unsigned char).
std::vector<std::pair<int64_t, std::string>> enumerators(Dwarf_Die* e) {
  Dwarf_Die under;
  bool is_unsigned = type_of(e, &under) && dwarf_peel_type(&under, &under) == 0 &&
                     (udata(&under, DW_AT_encoding, 0) == DW_ATE_unsigned ||
                      udata(&under, DW_AT_encoding, 0) == DW_ATE_unsigned_char);
  std::vector<std::pair<int64_t, std::string>> out;
  Dwarf_Die c;
  for (int r = dwarf_child(e, &c); r == 0; r = dwarf_siblingof(&c, &c)) {
    Dwarf_Attribute a;
    if (dwarf_tag(&c) != DW_TAG_enumerator || !dwarf_attr(&c, DW_AT_const_value, &a)) continue;
    Dwarf_Sword s = 0;
    Dwarf_Word u = 0;
    bool signed_form = a.form == DW_FORM_sdata || a.form == DW_FORM_implicit_const;
    if (!signed_form && is_unsigned && dwarf_formudata(&a, &u) == 0) s = static_cast<Dwarf_Sword>(u);
    else if (dwarf_formsdata(&a, &s) != 0) continue;
    const char* n = dwarf_diename(&c);
    out.emplace_back(s, n ? n : "");
  }
  return out;
}

// Itanium C++ ABI "non-trivial for the purposes of calls": a user-written
// copy/move constructor or destructor, virtual functions or bases, or a base
// or member that is itself non-trivial. gcc 12 does not emit
// DW_AT_calling_convention; clang does, and it decides when present.
bool nontrivial_for_calls(Dwarf_Die* cls, int depth) {
  if (depth > 8) return false;
  auto cc = udata(cls, DW_AT_calling_convention, 0);
  if (cc == DW_CC_pass_by_reference) return true;
  if (cc == DW_CC_pass_by_value) return false;
  const char* cname = dwarf_diename(cls);
  Dwarf_Die c, t, p;
  for (int r = dwarf_child(cls, &c); r == 0; r = dwarf_siblingof(&c, &c)) {
    int tag = dwarf_tag(&c);
    if (dwarf_hasattr(&c, DW_AT_virtuality)) return true;
    bool nested = (tag == DW_TAG_inheritance || (tag == DW_TAG_member && !dwarf_hasattr(&c, DW_AT_declaration))) &&
                  type_of(&c, &t) && dwarf_peel_type(&t, &t) == 0;
    while (nested && dwarf_tag(&t) == DW_TAG_array_type) nested = type_of(&t, &t) && dwarf_peel_type(&t, &t) == 0;
    if (nested && kind_of(&t) == ValueType::Kind::Struct && nontrivial_for_calls(&t, depth + 1)) return true;
    if (tag != DW_TAG_subprogram || dwarf_hasattr(&c, DW_AT_artificial) ||
        udata(&c, DW_AT_defaulted, DW_DEFAULTED_no) == DW_DEFAULTED_in_class)
      continue;
    const char* name = dwarf_diename(&c);
    if (name && name[0] == '~') return true;
    if (!name || !cname || std::strcmp(name, cname) != 0) continue;
    // A constructor whose first parameter is a reference to the class: copy or move.
    for (int q = dwarf_child(&c, &p); q == 0; q = dwarf_siblingof(&p, &p)) {
      if (dwarf_tag(&p) != DW_TAG_formal_parameter || dwarf_hasattr(&p, DW_AT_artificial)) continue;
      if (!type_of(&p, &t) || dwarf_peel_type(&t, &t) != 0) break;
      int rt = dwarf_tag(&t);
      if ((rt == DW_TAG_reference_type || rt == DW_TAG_rvalue_reference_type) && type_of(&t, &t) &&
          dwarf_peel_type(&t, &t) == 0 && dwarf_diename(&t) && std::strcmp(dwarf_diename(&t), cname) == 0)
        return true;
      break;
    }
  }
  return false;
}

// The direct members of a struct a person would want printed by value: `x`
// and `y` of `struct pair`. Bit-fields, arrays and nested aggregates are left out.
std::vector<ValueType::Member> scalar_members(Dwarf_Die* st) {
  std::vector<ValueType::Member> out;
  Dwarf_Die c, m;
  for (int r = dwarf_child(st, &c); r == 0; r = dwarf_siblingof(&c, &c)) {
    if (dwarf_tag(&c) != DW_TAG_member || dwarf_hasattr(&c, DW_AT_declaration) || dwarf_hasattr(&c, DW_AT_external) ||
        dwarf_hasattr(&c, DW_AT_bit_size) || !type_of(&c, &m) || dwarf_peel_type(&m, &m) != 0)
      continue;
    auto kind = kind_of(&m);
    uint64_t size = byte_size(&m, kind == ValueType::Kind::Pointer ? 8 : 0);
    if (kind == ValueType::Kind::Struct || kind == ValueType::Kind::Unknown || kind == ValueType::Kind::Float ||
        (size != 1 && size != 2 && size != 4 && size != 8))
      continue;
    const char* name = dwarf_diename(&c);
    out.push_back({.name = name ? name : "?", .offset = static_cast<uint32_t>(udata(&c, DW_AT_data_member_location, 0)),
                   .size = static_cast<uint32_t>(size), .kind = kind});
  }
  return out;
}

AbiValue read_abi_value(Dwarf_Die* type, const std::string& name, bool cplusplus) {
  AbiValue v;
  v.type.name = name;
  Dwarf_Die t;
  if (!type || dwarf_peel_type(type, &t) != 0) {  // void, or unreadable
    v.type.size = 0;
    return v;
  }
  v.type.kind = kind_of(&t);
  v.type.size = static_cast<uint32_t>(byte_size(&t, v.type.kind == ValueType::Kind::Pointer ? 8 : 0));
  if (v.type.kind == ValueType::Kind::Enum) v.type.enumerators = enumerators(&t);
  if (v.type.kind == ValueType::Kind::Struct) v.type.members = scalar_members(&t);
  Dwarf_Die pointee;
  if (v.type.kind == ValueType::Kind::Pointer && dwarf_tag(&t) == DW_TAG_pointer_type && type_of(&t, &pointee) &&
      dwarf_peel_type(&pointee, &pointee) == 0)
    v.type.char_pointer = kind_of(&pointee) == ValueType::Kind::Char && byte_size(&pointee, 0) == 1;
  Leaves l;
  walk_leaves(&t, 0, l, 0);
  v.shape.align = static_cast<uint32_t>(std::min<uint64_t>(l.align, 64));
  v.shape.int_eightbytes = l.int_mask;
  v.shape.sse_eightbytes = l.sse_mask & ~l.int_mask;  // an eightbyte with any integer in it is INTEGER
  v.shape.x87 = l.float16;
  bool homogeneous = l.ints == 0 && l.floats >= 1 && l.floats <= 4 && l.float_size != ~uint64_t{0};
  if (v.type.kind == ValueType::Kind::Struct && homogeneous) v.shape.hfa_members = static_cast<uint8_t>(l.floats);
  if (v.type.kind == ValueType::Kind::Struct && cplusplus) v.shape.by_reference = nontrivial_for_calls(&t, 0);
  // An empty struct is passed differently by C and C++ compilers: vouch for nothing after it.
  bool empty = v.type.kind == ValueType::Kind::Struct && l.ints == 0 && l.floats == 0;
  v.shape.unknown_layout = l.unknown || empty;
  return v;
}

// The ELF symbols at `addr`, to spot clones: "scale.constprop.0".
bool clone_symbol_at(Elf* elf, uint64_t addr) {
  if (!elf) return false;
  static constexpr std::array<const char*, 4> kMarks{".isra.", ".constprop.", ".part.", ".cold"};
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_value != addr || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
        continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      for (const char* m : kMarks)
        if (name && std::strstr(name, m)) return true;
    }
  }
  return false;
}

// The CFI row at one address: the CFA, and which callee-saved registers this
// frame has saved (and so may use): at an entry none, after arm64's
// `stp x19, x20, [sp, 16]` x19 and x20, after the epilogue's reload none again.
struct FrameAt {
  std::optional<CfaRule> cfa;
  uint64_t saved_regs = 0;  // bit per DWARF number
  bool found = false;
};

FrameAt frame_from(Dwarf_CFI* cfi, Arch arch, uint64_t pc) {
  FrameAt out;
  Dwarf_Frame* frame = nullptr;
  if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame) != 0) return out;
  out.found = true;
  Dwarf_Op* ops = nullptr;
  size_t n = 0;
  if (dwarf_frame_cfa(frame, &ops, &n) == 0) out.cfa = cfa_rule_from_ops({ops, n});
  for (int r = 0; r < 32; r++) {
    Dwarf_Op mem[3];
    if (!dwarf_reg_callee_saved(arch, r)) continue;
    // A saved register has an address rule (`CFA - 16`); "same value" and
    // "undefined" come back without ops.
    if (dwarf_frame_register(frame, r, mem, &ops, &n) == 0 && n > 0) out.saved_regs |= uint64_t{1} << r;
  }
  std::free(frame);
  return out;
}

// The CFI row at `pc`: .eh_frame of the binary (a separate debug file has it
// as SHT_NOBITS), then .debug_frame.
FrameAt frame_at(Elf* cfi_elf, Elf* dwarf_elf, Dwarf* dbg, Arch arch, uint64_t pc) {
  for (Elf* e : {cfi_elf, dwarf_elf}) {
    if (!e) continue;
    Dwarf_CFI* cfi = dwarf_getcfi_elf(e);
    FrameAt f = frame_from(cfi, arch, pc);
    if (cfi) dwarf_cfi_end(cfi);
    if (f.found) return f;
  }
  return frame_from(dwarf_getcfi(dbg), arch, pc);
}

// Where the prologue ends: the first address after the entry that the line
// table marks as a statement start (dwarf_entry_breakpoints). At -O0 the
// parameters' homes are written by then.
uint64_t prologue_end(Dwarf_Die* fn_die, const DwarfFunction& fn) {
  Dwarf_Addr* bkpts = nullptr;
  int n = dwarf_entry_breakpoints(fn_die, &bkpts);
  uint64_t end = fn.entry;
  for (int i = 0; i < n; i++)
    if (bkpts[i] > fn.entry && bkpts[i] < fn.high && (end == fn.entry || bkpts[i] < end)) end = bkpts[i];
  std::free(bkpts);
  return end;
}

struct DwarfPlace {
  ExprLocation where;
  bool single_expr = false;  // one expression for the whole function (-O0), not a location list
};

// The context with readers for the blocks libdw keeps behind DW_OP_entry_value
// and DW_OP_implicit_value of an expression of `attr`.
ExprContext with_operands(const ExprContext& base, Dwarf_Attribute* attr) {
  ExprContext ctx = base;
  ctx.entry_value_register = [attr](const Dwarf_Op& op) -> std::optional<int> {
    Dwarf_Attribute inner;
    Dwarf_Op* ops = nullptr;
    size_t n = 0;
    if (dwarf_getlocation_attr(attr, &op, &inner) != 0 || dwarf_getlocation(&inner, &ops, &n) != 0 || n != 1)
      return std::nullopt;
    if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) return ops[0].atom - DW_OP_reg0;
    // DW_OP_regx 64, or arm64 -O2 `DW_OP_regval_type 64 <double>` for a double in v0.
    if (ops[0].atom == DW_OP_regx || ops[0].atom == DW_OP_regval_type) return static_cast<int>(ops[0].number);
    return std::nullopt;
  };
  ctx.implicit_value = [attr](const Dwarf_Op& op) -> std::optional<std::vector<uint8_t>> {
    Dwarf_Block b;
    if (dwarf_getlocation_implicit_value(attr, &op, &b) != 0) return std::nullopt;
    return std::vector<uint8_t>(b.data, b.data + b.length);
  };
  return ctx;
}

// The parameter's own DW_AT_location at `pc` (not its abstract origin's: a
// clone's parameter DIE carries the location of that copy of the code).
DwarfPlace dwarf_place(Dwarf_Die* param, uint64_t pc, const ExprContext& ctx) {
  Dwarf_Attribute a;
  if (dwarf_attr(param, DW_AT_location, &a)) {
    DwarfPlace out;
    out.single_expr = a.form == DW_FORM_exprloc || a.form == DW_FORM_block1 || a.form == DW_FORM_block;
    Dwarf_Op* expr = nullptr;
    size_t len = 0;
    int n = dwarf_getlocation_addr(&a, pc, &expr, &len, 1);
    if (n < 0) out.where = unplaced(std::string("unreadable DWARF location: ") + dwarf_errmsg(-1));
    else if (n == 0) out.where = unplaced("optimized out");  // no entry of the list covers pc
    else out.where = translate_location({expr, len}, with_operands(ctx, &a));
    return out;
  }
  // `scale.constprop.0 (x, k=3)`: DW_AT_const_value instead of a location.
  if (dwarf_attr(param, DW_AT_const_value, &a)) {
    Dwarf_Sword s = 0;
    Dwarf_Word u = 0;
    Dwarf_Block b;
    int64_t v = 0;
    if (dwarf_formsdata(&a, &s) == 0) v = s;
    else if (dwarf_formudata(&a, &u) == 0) v = static_cast<int64_t>(u);
    else if (dwarf_formblock(&a, &b) == 0 && b.length <= 8) {
      uint64_t bytes = 0;
      for (size_t i = 0; i < b.length; i++) bytes |= uint64_t{b.data[i]} << (8 * i);
      v = static_cast<int64_t>(bytes);
    } else {
      return {unplaced("unreadable DW_AT_const_value"), true};
    }
    return {placed({{.where = LocationPiece::Where::Constant, .size = ctx.value_size, .constant = v}}), true};
  }
  return {unplaced("optimized out"), true};
}

// DWARF's own word that a class parameter is passed by reference: gcc -O0
// `DW_OP_fbreg -24; DW_OP_deref`, -O2 `DW_OP_breg5 0` (the address in rdi).
bool dwarf_says_by_reference(Dwarf_Die* param, Arch arch) {
  Dwarf_Attribute a;
  if (!dwarf_attr(param, DW_AT_location, &a)) return false;
  Dwarf_Addr base = 0, start = 0, end = 0;
  Dwarf_Op* expr = nullptr;
  size_t len = 0;
  if (dwarf_getlocations(&a, 0, &base, &start, &end, &expr, &len) <= 0 || len == 0) return false;
  if (expr[len - 1].atom == DW_OP_deref) return true;
  if (len != 1 || expr[0].atom < DW_OP_breg0 || expr[0].atom > DW_OP_breg31) return false;
  int reg = expr[0].atom - DW_OP_breg0;
  const ArchInfo& info = arch_info(arch);
  const RegInfo* sp = find_reg_by_perf_index(info, info.sp_reg);
  return (!sp || reg != sp->dwarf_number) && !dwarf_reg_callee_saved(arch, reg);
}

// gcc 12 says DW_LANG_C_plus_plus_14 for -std=c++17 and c++20 too; 0x2a and
// 0x2b are the newer C++17 / C++20 codes.
bool is_cplusplus(int lang) {
  return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 || lang == DW_LANG_C_plus_plus_11 ||
         lang == DW_LANG_C_plus_plus_14 || lang == 0x2a || lang == 0x2b;
}

std::string reg_name(Arch arch, int dwarf_reg) {
  const RegInfo* r = find_reg_by_dwarf(arch_info(arch), dwarf_reg);
  return r ? std::string(r->name) : "DWARF " + std::to_string(dwarf_reg);
}

// The DWARF place at `pc`, or the calling convention's at the entry.
ExprLocation choose(Arch arch, const DwarfPlace& dw, const ExprLocation* abi, ParamsOptions::AtEntry policy,
                    bool at_entry, bool before_body, uint64_t saved_regs) {
  const ExprLocation& w = dw.where;
  bool prologue_state = w.frame_slot || w.callee_saved_regs;
  // At the first instruction a home in the frame or a callee-saved register
  // still holds the caller's data: the registers the caller filled are the truth.
  if (at_entry && abi && (policy == ParamsOptions::AtEntry::AbiOnly || !w.available || prologue_state)) return *abi;
  if (!(at_entry || dw.single_expr)) return w;  // a location list is exact at every address
  if (w.frame_slot && (at_entry || before_body)) return unplaced("frame base not valid before the prologue");
  if (!w.available) return w;
  if (uint64_t stale = w.callee_saved_regs & ~saved_regs) {
    // arm64 -O0 `DW_OP_breg19 0` at the `ret`: the epilogue has reloaded x19.
    return unplaced("register " + reg_name(arch, std::countr_zero(stale)) +
                    " holds the caller's value here (before the prologue saves it or after the epilogue restores it)");
  }
  return w;
}

}  // namespace

Result<FunctionParams> params_at(const DwarfIndex& index, Elf* elf_with_dwarf, Arch arch, uint64_t entry, uint64_t pc,
                                 const ParamsOptions& options) {
  const DwarfFunction* fn = index.at_entry(entry);
  if (!fn) return err("params: no function with DWARF starts at ", hex(entry));
  auto fail = [&](auto&&... why) { return err("params: ", fn->name, " (", hex(entry), "): ", why...); };
  bool inside = std::any_of(fn->ranges.begin(), fn->ranges.end(), [&](auto& r) { return pc >= r.first && pc < r.second; });
  if (!inside && !(fn->ranges.empty() && pc == entry)) return fail("pc ", hex(pc), " is outside it");
  Dwarf* dbg = index.dwarf();
  Dwarf_Die die, cu;
  if (!dbg || !dwarf_offdie(dbg, fn->die_offset, &die) || !dwarf_diecu(&die, &cu, nullptr, nullptr))
    return fail("DIE ", hex(fn->die_offset), " unreadable: ", dwarf_errmsg(-1));
  const bool cplusplus = is_cplusplus(dwarf_srclang(&cu));

  FunctionParams out;
  out.function = fn->name;
  out.clone = clone_symbol_at(elf_with_dwarf, entry) || clone_symbol_at(options.elf_with_cfi, entry);

  Dwarf_Die type_die;
  Dwarf_Attribute ta;
  bool has_ret = dwarf_attr_integrate(&die, DW_AT_type, &ta) && dwarf_formref_die(&ta, &type_die);
  AbiValue ret = read_abi_value(has_ret ? &type_die : nullptr, fn->return_type, cplusplus);
  out.return_type = ret.type;
  out.return_value = abi_return_location(arch, &ret);

  ExprContext ctx;
  ctx.arch = arch;
  FrameAt frame = frame_at(options.elf_with_cfi, elf_with_dwarf, dbg, arch, pc);
  ctx.cfa = frame.cfa;
  ctx.at_entry = pc == entry;
  Dwarf_Attribute fba;
  Dwarf_Op* fb = nullptr;
  size_t fb_len = 0;
  if (dwarf_attr_integrate(&die, DW_AT_frame_base, &fba) && dwarf_getlocation_addr(&fba, pc, &fb, &fb_len, 1) > 0)
    ctx.frame_base = {fb, fb_len};
  // Only the main range has a prologue: a `.cold` part lies elsewhere, often below the entry.
  const bool before_body = pc >= fn->low && pc < prologue_end(&die, *fn);

  // Go lists its results as parameters too (`~r0`, or the result's name), marked
  // DW_AT_variable_parameter, with no location at the entry: they are no arguments. Nor
  // does the C ABI say where Go's arguments are (Go's ABIInternal passes them in rax,
  // rbx, rcx, ...): where Go's DWARF gives no location, the value is not placed.
  const bool go = dwarf_srclang(&cu) == DW_LANG_Go;
  out.go = go;
  std::vector<DwarfParam> vars =
      options.in_scope ? scope_variables(dbg, fn->die_offset, pc, options.scope_die) : std::vector<DwarfParam>{};
  if (go && !options.in_scope)
    for (const DwarfParam& p : fn->params) {
      Dwarf_Die pd;
      if (dwarf_offdie(dbg, p.die_offset, &pd) && !dwarf_flag_integrate(&pd, DW_AT_variable_parameter))
        vars.push_back(p);
    }
  const std::vector<DwarfParam>& params = options.in_scope || go ? vars : fn->params;
  std::vector<AbiValue> abi_in;
  std::vector<DwarfPlace> places;
  for (auto& p : params) {
    Dwarf_Die pd;
    if (!dwarf_offdie(dbg, p.die_offset, &pd)) return fail("parameter DIE ", hex(p.die_offset), " unreadable");
    bool typed = dwarf_attr_integrate(&pd, DW_AT_type, &ta) && dwarf_formref_die(&ta, &type_die);
    AbiValue v = read_abi_value(typed ? &type_die : nullptr, p.type, cplusplus);
    if (v.type.kind == ValueType::Kind::Struct) v.shape.by_reference |= dwarf_says_by_reference(&pd, arch);
    ctx.value_size = v.type.size;
    places.push_back(dwarf_place(&pd, pc, ctx));
    abi_in.push_back(std::move(v));
  }
  std::vector<ExprLocation> abi;
  if (pc == entry && !out.clone && !options.in_scope && !go)
    abi = abi_entry_locations(arch, has_ret ? &ret : nullptr, abi_in);
  for (std::size_t i = 0; i < params.size(); i++) {
    const DwarfParam& p = params[i];
    bool use_abi = options.at_entry != ParamsOptions::AtEntry::DwarfOnly && i < abi.size();
    // Go's ABIInternal has no callee-saved registers: rbx at the entry is the argument.
    ExprLocation loc = choose(arch, places[i], use_abi ? &abi[i] : nullptr, options.at_entry, pc == entry, before_body,
                              go ? ~uint64_t{0} : frame.saved_regs);
    Dwarf_Die pd, td;
    uint64_t type_offset = dwarf_offdie(dbg, p.die_offset, &pd) && type_of(&pd, &td) ? dwarf_dieoffset(&td) : 0;
    out.params.push_back({.name = p.name, .type = std::move(abi_in[i].type), .available = loc.available,
                          .reason = std::move(loc.reason), .pieces = std::move(loc.pieces),
                          .artificial = p.artificial, .type_offset = type_offset});
  }
  return out;
}

namespace {

std::string type_name(Dwarf_Die* t) {
  static const DwarfScopes kNoScopes;
  return dwarf_type_name(t, kNoScopes, type_style_for_language(DW_LANG_C99));
}

// "id, name, label, weight": the members of a struct, for an error.
std::string member_names(Dwarf_Die* st) {
  std::string s;
  Dwarf_Die c;
  for (int r = dwarf_child(st, &c); r == 0; r = dwarf_siblingof(&c, &c))
    if (dwarf_tag(&c) == DW_TAG_member && dwarf_diename(&c)) s += (s.empty() ? "" : ", ") + std::string(dwarf_diename(&c));
  return s.empty() ? "none" : s;
}

bool is_char(Dwarf_Die* t) { return kind_of(t) == ValueType::Kind::Char && byte_size(t, 0) == 1; }

}  // namespace

Result<MemberAccess> resolve_access(Dwarf* dbg, uint64_t type_offset, const std::vector<AccessStep>& path,
                                    std::string_view text) {
  auto fail = [&](auto&&... why) { return err("params: '", text, "': ", why...); };
  Dwarf_Die t;
  if (!dbg || type_offset == 0 || !dwarf_offdie(dbg, type_offset, &t) || dwarf_peel_type(&t, &t) != 0)
    return fail("DWARF gives the parameter no type to follow");
  MemberAccess out;
  bool in_memory = false;  // false: still the parameter's own value, not bytes it points to
  // Moves to the bytes the current pointer value points to, plus `offset`.
  auto follow = [&](int64_t offset) {
    if (in_memory) {
      out.hops.push_back(out.offset);  // the pointer is itself in memory: load it first
      out.offset = 0;
    }
    in_memory = true;
    out.offset += static_cast<int32_t>(offset);
  };
  for (const AccessStep& step : path) {
    const int tag = dwarf_tag(&t);
    if (step.kind == AccessStep::Kind::Member) {
      if (kind_of(&t) != ValueType::Kind::Struct) return fail(type_name(&t), " is not a struct: it has no member '", step.member, "'");
      if (!in_memory) return fail("a struct passed by value: its members print with it (write the parameter's name)");
      Dwarf_Die c, found;
      bool hit = false;
      for (int r = dwarf_child(&t, &c); r == 0 && !hit; r = dwarf_siblingof(&c, &c))
        if (dwarf_tag(&c) == DW_TAG_member && dwarf_diename(&c) && step.member == dwarf_diename(&c)) {
          found = c;
          hit = true;
        }
      if (!hit) return fail(type_name(&t), " has no member '", step.member, "' (it has ", member_names(&t), ")");
      if (dwarf_hasattr(&found, DW_AT_bit_size)) return fail("'", step.member, "' is a bit-field, which uprof does not read");
      out.offset += static_cast<int32_t>(udata(&found, DW_AT_data_member_location, 0));
      if (!type_of(&found, &t) || dwarf_peel_type(&t, &t) != 0) return fail("'", step.member, "' has no type in DWARF");
    } else if (tag == DW_TAG_array_type && step.kind == AccessStep::Kind::Index) {
      if (!in_memory) return fail("an array that is not in memory");
      Dwarf_Die elem;
      if (!type_of(&t, &elem) || dwarf_peel_type(&elem, &elem) != 0) return fail("an array of unknown elements");
      out.offset += static_cast<int32_t>(step.index * static_cast<int64_t>(byte_size(&elem, 0)));
      t = elem;
    } else {  // Deref, or Index on a pointer: the element it points to
      if (tag != DW_TAG_pointer_type) return fail(type_name(&t), " is not a pointer: it cannot be followed");
      Dwarf_Die pointee;
      if (!type_of(&t, &pointee) || dwarf_peel_type(&pointee, &pointee) != 0)
        return fail("a void pointer: give the bytes a type with +OFF(%REG):u32 instead");
      const int64_t elem = step.kind == AccessStep::Kind::Index ? step.index * static_cast<int64_t>(byte_size(&pointee, 0)) : 0;
      follow(elem);
      t = pointee;
    }
  }
  const int tag = dwarf_tag(&t);
  Dwarf_Die elem;
  if (tag == DW_TAG_array_type && type_of(&t, &elem) && dwarf_peel_type(&elem, &elem) == 0 && is_char(&elem) && in_memory) {
    out.string = true;  // char name[16]: the string is right there
  } else if (tag == DW_TAG_pointer_type && type_of(&t, &elem) && dwarf_peel_type(&elem, &elem) == 0 && is_char(&elem)) {
    follow(0);  // a char pointer: the string is where it points
    out.string = true;
  } else if (tag == DW_TAG_array_type) {
    return fail("an array: name an element, as in ", text, "[0]");
  } else if (kind_of(&t) == ValueType::Kind::Struct) {
    return fail("a struct: name one of its members (", member_names(&t), ")");
  } else if (!in_memory) {
    return fail("no member, element or pointer followed");
  }
  AbiValue v = read_abi_value(&t, type_name(&t), false);
  out.type = v.type;
  if (out.string) out.type.name = type_name(&t);
  const uint32_t size = out.type.size;
  if (!out.string && size != 1 && size != 2 && size != 4 && size != 8)
    return fail(out.type.name, " is ", size, " bytes: uprof reads 1, 2, 4 or 8");
  return out;
}

Result<FunctionParams> params_at(Elf* elf_with_dwarf, Arch arch, uint64_t entry, uint64_t pc,
                                 const ParamsOptions& options) {
  UPROF_ASSIGN(DwarfIndex index, DwarfIndex::build(elf_with_dwarf, "<elf>"));
  if (index.empty()) return err("params: no DWARF to place parameters of the function at ", hex(entry));
  return params_at(index, elf_with_dwarf, arch, entry, pc, options);
}

}  // namespace uprof
