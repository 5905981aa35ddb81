#include "uprof/spec/value_spec.h"

#include <string>

#include "uprof/spec/probe_spec.h"

namespace uprof {
namespace {

ValueSpec reg_value(std::string name, const RegInfo& r, ValueSource src = ValueSource::Register) {
  return {.name = std::move(name), .source = src, .reg = r.perf_index, .stack_offset = 0, .size = 8,
          .is_signed = true};
}

ValueSpec stack_value(std::string name, const ArchInfo& arch, int32_t offset) {
  return {.name = std::move(name), .source = ValueSource::Stack, .reg = arch.sp_reg, .stack_offset = offset,
          .size = 8, .is_signed = true};
}

}  // namespace

namespace {

// ":s32" -> size 4, signed; ":x64" -> size 8, unsigned, hex.
Status apply_type(std::string_view token, std::string_view type, ValueSpec& v) {
  if (type.size() < 2 || (type[0] != 's' && type[0] != 'u' && type[0] != 'x'))
    return err("spec: value '", token, "': unknown type '", type, "' (use s8..s64, u8..u64 or x8..x64)");
  auto bits = parse_number(type.substr(1));
  if (!bits || (*bits != 8 && *bits != 16 && *bits != 32 && *bits != 64))
    return err("spec: value '", token, "': unknown type '", type, "' (use s8..s64, u8..u64 or x8..x64)");
  v.size = static_cast<uint8_t>(*bits / 8);
  v.is_signed = type[0] == 's';
  v.hex = type[0] == 'x';
  return ok();
}

Result<std::optional<ParsedValue>> parse_untyped(std::string_view token, std::string_view body, std::string label,
                                                 const ArchInfo& arch);

}  // namespace

Result<std::optional<ParsedValue>> parse_value_token(std::string_view token, const ArchInfo& arch) {
  std::string label;
  std::string_view body = token;
  if (auto eq = token.find('='); eq != std::string_view::npos) {
    label = std::string(token.substr(0, eq));
    body = token.substr(eq + 1);
    if (label.empty() || body.empty()) return err("spec: value '", token, "': expected NAME=VALUE");
  }
  std::optional<std::string_view> type;
  if (auto colon = body.find(':'); colon != std::string_view::npos) {
    type = body.substr(colon + 1);
    body = body.substr(0, colon);
  }
  UPROF_ASSIGN(auto parsed, parse_untyped(token, body, label, arch));
  if (parsed && type) UPROF_TRY(apply_type(token, *type, parsed->spec));
  return parsed;
}

namespace {

Result<std::optional<ParsedValue>> parse_untyped(std::string_view token, std::string_view body, std::string label,
                                                 const ArchInfo& arch) {
  auto name = [&] { return label.empty() ? std::string(body) : label; };

  if (body == "$comm") return std::optional<ParsedValue>{};
  if (body == "$retval")
    return std::optional<ParsedValue>{{reg_value(name(), *find_reg_by_perf_index(arch, arch.return_reg),
                                                 ValueSource::ReturnValue), true}};
  if (body.size() > 1 && body[0] == '%') {
    const RegInfo* r = find_reg_by_name(arch, body.substr(1));
    if (!r) return err("spec: value '", token, "': no register '", body.substr(1), "' on ", arch.name);
    return std::optional<ParsedValue>{{reg_value(name(), *r), false}};
  }
  if (body.substr(0, 6) == "$stack") {
    auto n = parse_number(body.substr(6));
    if (!n || *n > 4095) return err("spec: value '", token, "': expected $stackN with N from 0 to 4095");
    return std::optional<ParsedValue>{{stack_value(name(), arch, static_cast<int32_t>(*n * 8)), false}};
  }
  if (body.substr(0, 4) == "$arg") {
    auto n = parse_number(body.substr(4));
    if (!n || *n < 1 || *n > 64) return err("spec: value '", token, "': expected $argN with N from 1 to 64");
    std::size_t i = static_cast<std::size_t>(*n - 1);
    if (i < arch.int_arg_regs.size())
      return std::optional<ParsedValue>{{reg_value(name(), *find_reg_by_perf_index(arch, arch.int_arg_regs[i])), false}};
    // Past the argument registers, arguments are 8-byte stack slots above the
    // entry stack pointer (after the return address on x86-64).
    auto off = arch.stack_args_offset + 8 * (i - arch.int_arg_regs.size());
    return std::optional<ParsedValue>{{stack_value(name(), arch, static_cast<int32_t>(off)), false}};
  }
  return err("spec: value '", token, "': unknown (use %REG, $argN, $stackN, $retval or $comm)");
}

}  // namespace

SampleNeeds sample_needs(const std::vector<ValueSpec>& values, const ArchInfo& arch) {
  SampleNeeds n;
  for (const auto& v : values) {
    switch (v.source) {
      case ValueSource::Constant:
      case ValueSource::Unavailable:
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
