#include "uprof/record/value_binding.h"

#include <algorithm>

#include "uprof/util/hex.h"

namespace uprof {
namespace {

ValueSpec reg_slot(std::string name, const RegInfo& r, ValueSource src = ValueSource::Register) {
  return {.name = std::move(name), .source = src, .reg = r.perf_index, .stack_offset = 0, .size = 8,
          .is_signed = true};
}

ValueSpec stack_slot(std::string name, const ArchInfo& arch, int32_t offset) {
  return {.name = std::move(name), .source = ValueSource::Stack, .reg = arch.sp_reg, .stack_offset = offset,
          .size = 8, .is_signed = true};
}

}  // namespace

Result<std::optional<BoundValue>> bind_value(const ValueRequest& v, const ArchInfo& arch, uint16_t string_max) {
  using Out = std::optional<BoundValue>;
  std::string name = v.display_name();
  Out out;
  if (std::holds_alternative<CommRef>(v.target)) {
    // The thread's name when the probe fires (tracefs' $comm): a string of at most 15 bytes.
    ValueSpec s{.name = std::move(name), .source = ValueSource::Comm, .reg = 0, .stack_offset = 0, .size = 8,
                .is_signed = false};
    s.kind = ValueKind::String;
    s.type = "string";
    s.string_max = 16;
    return Out{BoundValue{std::move(s), false}};
  }
  if (std::holds_alternative<ReturnValueRef>(v.target)) {
    out = BoundValue{reg_slot(name, *find_reg_by_perf_index(arch, arch.return_reg), ValueSource::ReturnValue), true};
  } else if (auto* r = std::get_if<RegisterRef>(&v.target)) {
    const RegInfo* info = find_reg_by_name(arch, r->name);
    if (!info) return err("spec: value '", v.text, "': no register '", r->name, "' on ", arch.name);
    out = BoundValue{reg_slot(name, *info), false};
  } else if (auto* s = std::get_if<StackRef>(&v.target)) {
    out = BoundValue{stack_slot(name, arch, static_cast<int32_t>(s->word * 8)), false};
  } else if (auto* a = std::get_if<ArgumentRef>(&v.target)) {
    std::size_t i = a->n - 1;
    if (i < arch.int_arg_regs.size()) {
      out = BoundValue{reg_slot(name, *find_reg_by_perf_index(arch, arch.int_arg_regs[i])), false};
    } else {
      // Past the argument registers, arguments are 8-byte stack slots above the
      // entry stack pointer (after the return address on x86-64).
      auto off = arch.stack_args_offset + 8 * (i - arch.int_arg_regs.size());
      out = BoundValue{stack_slot(name, arch, static_cast<int32_t>(off)), false};
    }
  } else if (std::holds_alternative<GlobalRef>(v.target)) {
    return err("spec: value '", v.text, "': a global is placed by the probe's site (bind_global)");
  } else {
    return err("spec: value '", v.text, "': a DWARF parameter, which only DWARF places");
  }
  if (v.type) {
    out->spec.size = v.type->size;
    out->spec.is_signed = v.type->is_signed;
    out->spec.hex = v.type->hex;
  }
  // "+0(+8(%di))": every read but the last follows a pointer; the last reads the
  // value (or, for a string, is where the string starts).
  ValueSpec& s = out->spec;
  if (!v.memory.empty()) {
    s.hops.assign(v.memory.begin(), v.memory.end() - 1);
    s.deref = true;
    s.deref_offset = v.memory.back();
  }
  if (v.type && v.type->string) {
    if (v.memory.empty()) s.deref = true;  // "%di:string": the string %di points at
    s.kind = ValueKind::String;
    s.type = "string";
    s.string_max = std::clamp<uint16_t>(string_max, 1, kMaxStringMax);
    s.size = 8;
  }
  return out;
}

Result<BoundValue> bind_global(const ValueRequest& v, const ArchInfo& arch, uint64_t site, uint16_t string_max) {
  const auto& g = std::get<GlobalRef>(v.target);
  if (!g.address) return err("spec: value '", v.text, "': the global's address is not known (internal: not resolved)");
  const int64_t delta = static_cast<int64_t>(*g.address + static_cast<uint64_t>(g.offset) - site);
  if (delta < INT32_MIN || delta > INT32_MAX)
    return err("spec: value '", v.text, "': ", hex(*g.address + static_cast<uint64_t>(g.offset)),
               " is more than 2 GiB from the probe at ", hex(site));
  ValueSpec s{.name = v.display_name(), .source = ValueSource::Register, .reg = arch.ip_reg, .stack_offset = 0,
              .size = g.size ? g.size : uint8_t{8}, .is_signed = true};
  // @g is the bytes at g: one read at ip + delta; "+8(@g)" follows the pointer there.
  std::vector<int32_t> offsets{static_cast<int32_t>(delta)};
  offsets.insert(offsets.end(), v.memory.begin(), v.memory.end());
  s.hops.assign(offsets.begin(), offsets.end() - 1);
  s.deref = true;
  s.deref_offset = offsets.back();
  if (v.type) {
    s.size = v.type->size;
    s.is_signed = v.type->is_signed;
    s.hex = v.type->hex;
  }
  if (v.type && v.type->string) {
    s.kind = ValueKind::String;
    s.type = "string";
    s.string_max = std::clamp<uint16_t>(string_max, 1, kMaxStringMax);
    s.size = 8;
  }
  return BoundValue{std::move(s), false};
}

Result<std::optional<BoundValue>> bind_usdt_value(const ValueRequest& v, const std::vector<UsdtArg>& args,
                                                  const std::string& probe, const ArchInfo& arch, uint16_t string_max) {
  using Out = std::optional<BoundValue>;
  if (std::holds_alternative<ReturnValueRef>(v.target))
    return err("spec: value '", v.text, "': the USDT probe ", probe, " has no return value");
  if (std::holds_alternative<ParamRef>(v.target) || std::holds_alternative<AllParamsRef>(v.target))
    return err("spec: value '", v.text, "': the arguments of the USDT probe ", probe,
               " have no names: they are $arg1..$arg", args.size());
  const auto* a = std::get_if<ArgumentRef>(&v.target);
  if (!a) return bind_value(v, arch, string_max);
  if (a->n == 0 || a->n > args.size())
    return err("spec: value '", v.text, "': the USDT probe ", probe, " has ",
               args.empty() ? std::string("no arguments") : std::to_string(args.size()) + " argument" +
                                                              (args.size() > 1 ? "s" : ""));
  if (!v.memory.empty())
    return err("spec: value '", v.text, "': memory reads from a USDT argument are not supported (",
               "$argN:string reads the string it points to)");
  const UsdtArg& arg = args[a->n - 1];
  ValueSpec s{.name = v.display_name(), .source = ValueSource::Register, .reg = 0, .stack_offset = 0,
              .size = arg.size, .is_signed = arg.is_signed};
  if (auto* c = std::get_if<UsdtConstant>(&arg.location)) {
    s.source = ValueSource::Constant;
    s.constant = c->value;
    if (v.type && v.type->string)
      return err("spec: value '", v.text, "': argument ", a->n, " of ", probe, " is the constant ", c->value,
                 ", not a string's address");
  } else if (auto* r = std::get_if<UsdtRegister>(&arg.location)) {
    s.reg = r->reg;
  } else if (std::optional<std::string> why = usdt_arg_unreadable(arg)) {
    return err("spec: value '", v.text, "': argument ", a->n, " of ", probe, " is ", arg.text, ": ", *why);
  } else {
    const auto& m = std::get<UsdtMemory>(arg.location);
    s.reg = m.base;
    s.deref = true;
    s.deref_offset = static_cast<int32_t>(m.offset);
  }
  if (v.type && !v.type->string) {
    s.size = v.type->size;
    s.is_signed = v.type->is_signed;
    s.hex = v.type->hex;
  }
  if (v.type && v.type->string) {
    // The argument is a pointer: in a register, the string is behind it; in memory,
    // the pointer is read first (a hop) and the string is behind that.
    if (s.deref) s.hops.push_back(s.deref_offset);
    s.deref = true;
    s.deref_offset = 0;
    s.kind = ValueKind::String;
    s.type = "string";
    s.string_max = std::clamp<uint16_t>(string_max, 1, kMaxStringMax);
    s.size = 8;
  }
  return Out{BoundValue{std::move(s), false}};
}

ProbeReads reads_for(const std::vector<ValueSpec>& values, const ArchInfo& arch) {
  ProbeReads n;
  for (const auto& v : values) {
    // Read at the probe by the engine itself; a string's base register (or stack slot)
    // is no use to it in a sample.
    if (fetched_from_memory(v)) continue;
    switch (v.source) {
      case ValueSource::Constant:
      case ValueSource::Unavailable:
      case ValueSource::Comm:
        break;
      case ValueSource::Stack:
        n.stack_bytes = std::max<uint32_t>(n.stack_bytes, static_cast<uint32_t>(v.stack_offset) + (v.deref ? 8 : v.size));
        break;
      case ValueSource::Register:
      case ValueSource::ReturnValue:
        n.regs_mask |= uint64_t{1} << v.reg;
        break;
    }
    // A value behind an address is read from the stack copy: how far above sp
    // it lies is known only at run time, so a fixed window is copied.
    if (v.deref) n.stack_bytes = std::max(n.stack_bytes, kDerefStackBytes);
  }
  // A stack value is read relative to the stack pointer the sample carries.
  if (n.stack_bytes) {
    n.regs_mask |= uint64_t{1} << arch.sp_reg;
    n.stack_bytes = (n.stack_bytes + 7) & ~7u;
  }
  return n;
}

}  // namespace uprof
