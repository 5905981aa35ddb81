#include "uprof/present/value_text.h"

#include <cctype>
#include <cstdio>
#include <cstring>

#include "uprof/analyse/aggregate.h"
#include "uprof/model/string_value.h"
#include "uprof/util/hex.h"

namespace uprof {
namespace {

std::string number(uint64_t v, bool is_signed) {
  return is_signed ? std::to_string(static_cast<int64_t>(v)) : std::to_string(v);
}

std::string char_text(uint64_t v, bool is_signed) {
  const auto byte = static_cast<unsigned char>(v);
  if (std::isprint(byte) && byte != '\'' && byte != '\\') return std::string("'") + static_cast<char>(byte) + "'";
  return number(v, is_signed);
}

std::string float_text(uint64_t bits, unsigned size) {
  char buf[40];
  if (size == 4) {
    float f;
    auto b32 = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b32, 4);
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(f));
  } else {
    double d;
    std::memcpy(&d, &bits, 8);
    std::snprintf(buf, sizeof buf, "%g", d);
  }
  return buf;
}

std::string scalar(uint64_t normalized, ValueKind kind, bool is_signed, bool as_hex, unsigned size,
                   const std::vector<std::pair<int64_t, std::string>>* enumerators) {
  switch (kind) {
    case ValueKind::Bool: return normalized ? "true" : "false";
    case ValueKind::Char: return char_text(normalized, is_signed);
    case ValueKind::Pointer: return hex(normalized);
    case ValueKind::Float: return float_text(normalized, size);
    case ValueKind::Enum:
      if (enumerators)
        for (const auto& [value, name] : *enumerators)
          if (static_cast<uint64_t>(value) == normalized ||
              (size < 8 && static_cast<uint64_t>(value) == (normalized & ((uint64_t{1} << (size * 8)) - 1))))
            return name;
      return number(normalized, is_signed);
    default: return as_hex ? hex(normalized) : number(normalized, is_signed);
  }
}

uint64_t sized(uint64_t raw, unsigned size, bool is_signed) {
  ValueSpec s;
  s.size = static_cast<uint8_t>(size);
  s.is_signed = is_signed;
  return normalize_value(raw, s);
}

}  // namespace

std::string quoted(std::string_view bytes, bool cut) {
  std::string s = "\"";
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': s += "\\\""; break;
      case '\\': s += "\\\\"; break;
      case '\n': s += "\\n"; break;
      case '\t': s += "\\t"; break;
      case '\r': s += "\\r"; break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          s += ch;
        } else {
          char buf[5];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          s += buf;
        }
    }
  }
  s += "\"";
  if (cut) s += "...";
  return s;
}

std::string format_scalar(uint64_t normalized, const ValueSpec& spec) {
  if (spec.is_string()) {
    StringBytes t = recorded_strings().text(normalized);
    return quoted(t.bytes, t.cut);
  }
  return scalar(normalized, spec.kind, spec.is_signed, spec.hex, spec.size, &spec.enumerators);
}

ValueText value_text(std::span<const ValueSpec> specs, std::span<const uint64_t> values, uint32_t missing,
                     std::size_t first) {
  const ValueSpec& head = specs[first];
  ValueText out{.name = head.name, .text = {}, .slots = 1};
  while (first + out.slots < specs.size() && specs[first + out.slots].continues) out.slots++;
  auto known = [&](std::size_t i) { return i < values.size() && (i >= 32 || !(missing >> i & 1)); };

  if (head.source == ValueSource::Unavailable) {
    out.text = head.reason == "optimized out" ? "<optimized out>" : "<unavailable>";
    return out;
  }
  // A value behind a pointer that could not be read (a bad or NULL pointer).
  const char* missing_text = head.reads_memory() ? "<unreadable>" : "<unavailable>";
  if (head.kind != ValueKind::Struct || head.source == ValueSource::Constant) {
    out.text = known(first) ? format_scalar(normalize_value(values[first], head), head) : missing_text;
    return out;
  }
  // A struct: its bytes, slot after slot, then its members out of them.
  std::string bytes;
  bool whole = true;
  for (std::size_t i = first; i < first + out.slots; i++) {
    if (!known(i)) whole = false;
    uint64_t v = known(i) ? values[i] : 0;
    bytes.append(reinterpret_cast<const char*>(&v), specs[i].size);  // little-endian on both arches
  }
  if (!whole) {
    out.text = "<unavailable>";
    return out;
  }
  std::string s = "{";
  if (head.members.empty()) {
    for (std::size_t i = first; i < first + out.slots; i++) s += (i > first ? ", " : "") + hex(values[i]);
  } else {
    bool any = false;
    for (const auto& m : head.members) {
      // Not `m.offset + m.size`: a damaged file's offset near 2^32 wraps that sum.
      if (m.offset > bytes.size() || m.size > bytes.size() - m.offset) continue;
      uint64_t raw = 0;
      std::memcpy(&raw, bytes.data() + m.offset, m.size);
      s += (any ? ", " : "") + m.name + "=" +
           scalar(sized(raw, m.size, m.is_signed), m.kind, m.is_signed, false, m.size, nullptr);
      any = true;
    }
  }
  if (head.total_size > bytes.size()) s += ", ...";
  out.text = s + "}";
  return out;
}

std::string values_list(std::span<const ValueSpec> specs, std::span<const uint64_t> values, uint32_t missing,
                        std::size_t first, std::size_t count) {
  std::string s;
  const std::size_t end = std::min(first + count, specs.size());
  for (std::size_t i = first; i < end;) {
    ValueText v = value_text(specs, values, missing, i);
    s += (s.empty() ? "" : ", ") + v.name + "=" + v.text;
    i += v.slots;
  }
  return s;
}

std::string format_value(uint64_t normalized, const ValueSpec& spec) { return format_scalar(normalized, spec); }

bool has_value_stats(const ValueSpec& spec) {
  return !spec.continues && spec.kind != ValueKind::Struct && spec.source != ValueSource::Unavailable;
}

}  // namespace uprof
