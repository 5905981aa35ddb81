#include "uprof/resolve/typed_values.h"

#include <algorithm>
#include <cctype>

namespace uprof {
namespace {

ValueKind kind_for(ValueType::Kind k) {
  using K = ValueType::Kind;
  switch (k) {
    case K::Bool: return ValueKind::Bool;
    case K::Char: return ValueKind::Char;
    case K::Enum: return ValueKind::Enum;
    case K::Pointer: return ValueKind::Pointer;
    case K::Struct: return ValueKind::Struct;
    case K::Float: return ValueKind::Float;
    default: return ValueKind::Integer;
  }
}

// Plain `char` is signed on x86-64 and unsigned on arm64 (AAPCS64).
bool signed_for(const ValueType& t, Arch arch) {
  using K = ValueType::Kind;
  switch (t.kind) {
    case K::Signed: return true;
    case K::Char:
      if (t.name.find("unsigned") != std::string::npos) return false;
      if (t.name.find("signed") != std::string::npos) return true;
      return arch_info(arch).char_is_signed;
    case K::Enum:
      return std::any_of(t.enumerators.begin(), t.enumerators.end(), [](auto& e) { return e.first < 0; });
    default: return false;
  }
}

// The first slot of a value: its name and everything needed to print it.
ValueSpec head_slot(const std::string& name, const ValueType& t, Arch arch) {
  ValueSpec v;
  v.name = name;
  v.type = t.name.empty() ? "?" : t.name;
  v.kind = kind_for(t.kind);
  v.is_signed = signed_for(t, arch);
  v.hex = t.kind == ValueType::Kind::Pointer || t.kind == ValueType::Kind::Unknown;
  v.enumerators = t.enumerators;
  v.total_size = t.size;
  for (const auto& m : t.members)
    v.members.push_back({.name = m.name, .offset = m.offset, .size = static_cast<uint8_t>(m.size),
                         .kind = kind_for(m.kind), .is_signed = signed_for(ValueType{.kind = m.kind}, arch)});
  return v;
}

ValueSpec unavailable(const std::string& name, const ValueType& t, Arch arch, std::string reason) {
  ValueSpec v = head_slot(name, t, arch);
  v.source = ValueSource::Unavailable;
  v.reason = std::move(reason);
  v.members.clear();
  return v;
}

std::string join_names(const FunctionParams& f) {
  std::string s;
  for (const auto& p : f.params) s += (s.empty() ? "" : ", ") + p.name;
  return s.empty() ? "none" : s;
}

}  // namespace

std::vector<ValueSpec> param_value_specs(const ParamLocation& p, Arch arch, bool for_return) {
  if (!p.available) return {unavailable(p.name, p.type, arch, p.reason.empty() ? "optimized out" : p.reason)};
  if (p.type.kind == ValueType::Kind::Float && arch_info(arch).float_in_register_unavailable && !p.pieces.empty() &&
      p.pieces.front().where == LocationPiece::Where::Register)
    return {unavailable(p.name, p.type, arch, "in a floating-point register")};
  std::vector<ValueSpec> out;
  const ValueSpec head = head_slot(p.name, p.type, arch);
  auto add = [&](ValueSpec v) {
    if (out.size() >= kMaxSlotsPerValue) return;
    if (!out.empty()) {
      v.continues = true;
      v.members.clear();
      v.enumerators.clear();
    }
    out.push_back(std::move(v));
  };
  for (const LocationPiece& piece : p.pieces) {
    ValueSpec v = head;
    switch (piece.where) {
      case LocationPiece::Where::Constant:
        v.source = ValueSource::Constant;
        v.constant = piece.constant;
        v.size = static_cast<uint8_t>(std::clamp<uint32_t>(piece.size, 1, 8));
        add(v);
        continue;
      case LocationPiece::Where::Register:
        v.source = for_return && !piece.deref ? ValueSource::ReturnValue : ValueSource::Register;
        v.reg = piece.perf_reg;
        break;
      case LocationPiece::Where::Stack:
        v.source = ValueSource::Stack;
        v.stack_offset = piece.stack_offset;
        break;
    }
    v.deref = piece.deref;
    v.deref_offset = piece.deref_offset;
    // A piece wider than 8 bytes (a struct in memory) becomes 8-byte slots.
    const bool in_register = piece.where == LocationPiece::Where::Register && !piece.deref;
    for (uint32_t done = 0; done < piece.size; done += 8) {
      ValueSpec slot = v;
      slot.size = static_cast<uint8_t>(std::min<uint32_t>(8, piece.size - done));
      if (in_register && done) break;  // a register holds 8 bytes at most
      if (piece.deref) slot.deref_offset = piece.deref_offset + static_cast<int32_t>(done);
      else if (piece.where == LocationPiece::Where::Stack) slot.stack_offset = piece.stack_offset + static_cast<int32_t>(done);
      add(slot);
    }
  }
  if (out.empty()) return {unavailable(p.name, p.type, arch, "optimized out")};
  // A char pointer is read as the string it points at: the pointer's own place
  // becomes the base, and the string starts at the address it holds
  // (record/probe_table.h sets how many bytes are kept).
  if (p.type.char_pointer && out.size() == 1 && out[0].source != ValueSource::Constant) {
    ValueSpec& v = out[0];
    if (v.deref) v.hops.push_back(v.deref_offset);  // the pointer itself is in memory (-O0 homes)
    v.deref = true;
    v.deref_offset = 0;
    v.kind = ValueKind::String;
    v.size = 8;
    v.hex = false;
  }
  return out;
}

static Result<ValueSpec> access_value_spec(Dwarf* dbg, const ParamLocation& p, const ParamRef& ref, const std::string& text,
                                    Arch arch) {
  std::vector<ValueSpec> base = param_value_specs(p, arch);
  if (!base.empty() && base[0].source == ValueSource::Unavailable) {
    ValueSpec v = base[0];
    v.name = text;
    return v;  // printed <optimized out> with the reason, as the parameter would be
  }
  if (base.size() != 1 || base[0].source == ValueSource::Constant)
    return err("params: '", text, "': ", p.name, " is not one value in a register or on the stack here");
  UPROF_ASSIGN(MemberAccess a, resolve_access(dbg, p.type_offset, ref.path, text));
  ValueSpec b = base[0];
  // The parameter's own place: a register or stack slot, or (-O0) memory the pointer is in.
  std::vector<int32_t> hops;
  if (b.is_string()) {  // undo the string reading of the char pointer itself
    hops = b.hops;
  } else if (b.deref) {
    hops.push_back(b.deref_offset);
  }
  ValueSpec v = head_slot(text, a.type, arch);
  v.source = b.source;
  v.reg = b.reg;
  v.stack_offset = b.stack_offset;
  v.hops = hops;
  v.hops.insert(v.hops.end(), a.hops.begin(), a.hops.end());
  v.deref = true;
  v.deref_offset = a.offset;
  v.pointee = true;
  v.size = static_cast<uint8_t>(std::clamp<uint32_t>(a.type.size, 1, 8));
  v.members.clear();
  if (a.string) {
    v.kind = ValueKind::String;
    v.size = 8;
    v.hex = false;
  }
  return v;
}

std::vector<ValueSpec> return_value_specs(const FunctionParams& f, Arch arch) {
  if (f.return_type.kind == ValueType::Kind::Unknown && f.return_type.name == "void") return {};
  ParamLocation r{.name = "$retval", .type = f.return_type, .available = !f.return_value.empty(), .reason = {},
                  .pieces = f.return_value, .artificial = false};
  if (!r.available)
    r.reason = f.return_type.kind == ValueType::Kind::Float ? "returned in a floating-point register"
                                                             : "returned in memory the caller chose";
  return param_value_specs(r, arch, true);
}

Result<std::optional<FunctionParams>> TypedValueResolver::params(const Image& img, const ResolvedProbe& p) {
  const ElfFile* dw = img.dwarf_file();
  if (!dw || p.function.empty()) return std::optional<FunctionParams>{};
  auto it = indexes_.find(&img);
  if (it == indexes_.end()) {
    UPROF_ASSIGN(DwarfIndex index, DwarfIndex::build(dw->elf(), dw->path()));
    it = indexes_.emplace(&img, std::move(index)).first;
  }
  if (!it->second.at_entry(p.function_addr)) return std::optional<FunctionParams>{};
  ParamsOptions o;
  if (dw != &img.elf) o.elf_with_cfi = img.elf.elf();
  o.in_scope = p.is_site();
  o.scope_die = p.as<InlinedSite>() ? p.as<InlinedSite>()->die : 0;
  UPROF_ASSIGN(FunctionParams f, params_at(it->second, dw->elf(), p.arch, p.function_addr, p.vaddr, o));
  return std::optional<FunctionParams>{std::move(f)};
}

Status apply_typed_values(TypedValueResolver& dwarf, const Image& img, ResolvedProbe& p, bool all_by_default,
                          std::vector<std::string>& notes) {
  std::vector<std::string> names;
  std::vector<const ValueRequest*> paths;  // p->name, *p, a[2]
  std::vector<ValueRequest> raw;
  bool all_params = false, retval = false;
  std::optional<ValueRequest> retval_request;
  for (const auto& v : p.values) {
    if (!v.wants_dwarf()) raw.push_back(v);
    else if (std::holds_alternative<AllParamsRef>(v.target)) all_params = true;
    else if (auto* n = std::get_if<ParamRef>(&v.target); n && !n->path.empty()) paths.push_back(&v);
    else if (n) names.push_back(n->name);
    else {
      retval = true;
      retval_request = v;
    }
  }
  const bool by_default = p.values.empty() && all_by_default;
  if (!by_default && !all_params && !retval && names.empty() && paths.empty()) return ok();  // raw values only

  UPROF_ASSIGN(auto params, dwarf.params(img, p));
  if (!params) {
    if (!all_params && names.empty() && paths.empty()) {
      if (by_default)
        notes.push_back(p.label() + ": no DWARF for it in " + img.path +
                        ": arguments not captured (name registers, e.g. %di, or install debug info)");
      return ok();  // an untyped $retval stays raw
    }
    return err("spec: '", p.spec, "': no DWARF describes ", p.function.empty() ? p.label() : p.function, " in ",
               img.path, ": its parameters have no names here (name registers instead, e.g. %di)");
  }
  std::vector<ValueSpec> followed;
  for (const ValueRequest* v : paths) {
    const auto& ref = std::get<ParamRef>(v->target);
    auto q = std::find_if(params->params.begin(), params->params.end(), [&](auto& x) { return x.name == ref.name; });
    if (q == params->params.end())
      return err("spec: '", p.spec, "': ", params->function, (p.is_site() ? " sees no variable '" : " has no parameter '"), ref.name, "' (it has ",
                 join_names(*params), ")");
    auto spec = access_value_spec(dwarf.dwarf(img), *q, ref, v->display_name(), p.arch);
    if (!spec) return err("spec: '", p.spec, "': ", spec.error().message);
    followed.push_back(std::move(*spec));
  }
  p.values = raw;
  // Go's DWARF types no result: `$retval` asked for is read as the raw register (Go's
  // first integer result).
  if (retval_request && params->go) p.values.push_back(*retval_request);
  if (!names.empty() || all_params || by_default) {
    for (const auto& n : names)
      if (std::none_of(params->params.begin(), params->params.end(), [&](auto& q) { return q.name == n; }))
        return err("spec: '", p.spec, "': ", params->function, (p.is_site() ? " sees no variable '" : " has no parameter '"), n, "' (it has ",
                   join_names(*params), ")");
    for (const auto& q : params->params) {
      bool wanted = all_params || by_default || std::find(names.begin(), names.end(), q.name) != names.end();
      if (!wanted) continue;
      auto slots = param_value_specs(q, p.arch);
      p.typed_entry.insert(p.typed_entry.end(), slots.begin(), slots.end());
    }
  }
  p.typed_entry.insert(p.typed_entry.end(), followed.begin(), followed.end());
  // Everything by default must fit a sample's slots: whole values are dropped from the end.
  if (by_default && p.typed_entry.size() > kMaxValues) {
    std::size_t keep = kMaxValues;
    while (keep > 0 && p.typed_entry[keep].continues) keep--;
    notes.push_back(p.label() + ": only the first " + std::to_string(keep) + " of " +
                    std::to_string(p.typed_entry.size()) + " value slots are captured (name the parameters you want)");
    p.typed_entry.resize(keep);
  }
  if (retval || by_default || !names.empty() || !paths.empty()) {
    p.typed_return = return_value_specs(*params, p.arch);
    p.typed_return_implicit = !retval;
  }
  if (params->clone)
    notes.push_back(p.label() + (p.label().find(p.symbol) == std::string::npos ? " (" + p.symbol + ")" : "") +
                    ": a compiler clone: its parameters may differ from the source's; only DWARF places them");
  return ok();
}

}  // namespace uprof
