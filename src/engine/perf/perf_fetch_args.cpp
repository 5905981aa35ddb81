#include "uprof/engine/perf/perf_fetch_args.h"

#include <cstring>

#include "uprof/model/string_value.h"

namespace uprof {
namespace {

std::string offset_text(int64_t off) { return (off < 0 ? "-" : "+") + std::to_string(off < 0 ? -off : off); }

// The tracefs spelling of the address a value's last read is at, without that read:
// "%di", "+24(%di)", "+16($stack)" (a pointer in a stack slot).
Result<std::string> base_expr(const ProbeCapture& probe, const ValueSpec& v, const ArchInfo& arch) {
  std::string e;
  switch (v.source) {
    case ValueSource::Register: {
      const RegInfo* r = find_reg_by_perf_index(arch, v.reg);
      if (!r) return err("attach: ", probe.path, ": value '", v.name, "': register ", v.reg, " has no tracefs name");
      e = "%" + std::string(r->name);
      break;
    }
    case ValueSource::ReturnValue: e = "$retval"; break;
    case ValueSource::Stack: e = offset_text(v.stack_offset) + "($stack)"; break;
    case ValueSource::Comm: e = "$comm"; break;
    default: return err("attach: ", probe.path, ": value '", v.name, "' reads no memory");
  }
  for (int32_t hop : v.hops) e = offset_text(hop) + "(" + e + ")";
  return e;
}

const TraceField* field_named(std::span<const TraceField> fields, const std::string& name) {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

// A __data_loc's bytes: (length << 16) | offset, both from the record's start.
std::optional<std::string_view> data_loc(std::span<const std::byte> raw, uint32_t at) {
  if (at > raw.size() || raw.size() - at < 4) return std::nullopt;
  uint32_t loc = 0;
  std::memcpy(&loc, raw.data() + at, 4);
  const uint32_t off = loc & 0xffff, len = loc >> 16;
  if (off > raw.size() || len > raw.size() - off) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(raw.data() + off), len);
}

}  // namespace

Result<std::vector<FetchArg>> perf_fetch_args(const ProbeCapture& probe, const ArchInfo& arch) {
  std::vector<FetchArg> out;
  for (unsigned i = 0; i < probe.values.size(); i++) {
    const ValueSpec& v = probe.values[i];
    if (!fetched_from_memory(v)) continue;
    if (v.source == ValueSource::Comm) {  // tracefs' own string of the thread's name
      out.push_back({.slot = i, .name = "s" + std::to_string(i), .expr = "$comm", .string = true, .check = false});
      continue;
    }
    UPROF_ASSIGN(std::string base, base_expr(probe, v, arch));
    const std::string at = v.deref ? offset_text(v.deref_offset) + "(" + base + ")" : base;
    if (v.is_string()) {
      out.push_back({.slot = i, .name = "s" + std::to_string(i), .expr = at + ":string", .string = true, .check = false});
    } else {
      out.push_back({.slot = i, .name = "u" + std::to_string(i), .expr = at + ":u" + std::to_string(v.size * 8),
                     .string = false, .check = false});
      out.push_back({.slot = i, .name = "c" + std::to_string(i), .expr = at + ":string", .string = true, .check = true});
    }
  }
  return out;
}

std::string fetch_arg_definitions(std::span<const FetchArg> args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a.name + "=" + a.expr;
  return s;
}

Result<std::vector<RawSlot>> raw_layout(std::span<const FetchArg> args, std::span<const TraceField> fields,
                                        const ProbeCapture& probe) {
  std::vector<RawSlot> out;
  for (const auto& a : args) {
    const TraceField* f = field_named(fields, a.name);
    if (!f || (a.string && !f->data_loc) || f->size == 0 || f->size > 8)
      return err("attach: ", probe.path, " @ 0x", std::hex, probe.file_offset, std::dec,
                 ": the kernel's format has no field '", a.name, "' for ", a.expr);
    if (a.check) {
      if (!out.empty() && out.back().slot == a.slot) out.back().check_offset = f->offset;
      continue;
    }
    out.push_back({.slot = a.slot, .offset = f->offset, .size = f->size, .string = a.string,
                   .string_max = probe.values[a.slot].string_max, .check_offset = -1});
  }
  return out;
}

void apply_raw(std::span<const RawSlot> layout, std::span<const std::byte> raw, Event& e) {
  for (const RawSlot& s : layout) {
    if (s.slot >= e.nvalues) continue;
    const uint32_t bit = uint32_t{1} << s.slot;
    e.values[s.slot] = 0;
    if (s.string) {
      // The kernel's copy ends with the NUL; a fault leaves it empty.
      auto bytes = data_loc(raw, s.offset);
      if (!bytes || bytes->empty()) {
        e.missing |= bit;
        continue;
      }
      std::string_view str = bytes->substr(0, bytes->find('\0'));
      put_string_value(e, s.slot, str.substr(0, s.string_max), str.size() > s.string_max);
      e.missing &= ~bit;
      continue;
    }
    auto check = s.check_offset >= 0 ? data_loc(raw, static_cast<uint32_t>(s.check_offset)) : std::nullopt;
    if (s.offset > raw.size() || raw.size() - s.offset < s.size || (s.check_offset >= 0 && (!check || check->empty()))) {
      e.missing |= bit;
      continue;
    }
    uint64_t v = 0;
    std::memcpy(&v, raw.data() + s.offset, s.size);  // little-endian on both arches
    e.values[s.slot] = v;
    e.missing &= ~bit;
  }
}

}  // namespace uprof
