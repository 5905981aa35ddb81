#include "uprof/spec/value_request.h"

#include <algorithm>
#include <cctype>

#include "uprof/spec/probe_spec.h"

namespace uprof {
namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

constexpr std::string_view kTypeHelp = "(use s8..s64, u8..u64, x8..x64 or string)";

// "s32" -> {4, signed}; "x64" -> {8, unsigned, hex}.
Result<RawType> parse_type(std::string_view token, std::string_view type) {
  if (type == "string" || type == "ustring") return RawType{.size = 8, .is_signed = false, .hex = false, .string = true};
  uint64_t bits = 0;
  if (type.size() >= 2) bits = parse_number(type.substr(1)).value_or(0);
  if (type.empty() || (type[0] != 's' && type[0] != 'u' && type[0] != 'x') ||
      (bits != 8 && bits != 16 && bits != 32 && bits != 64))
    return err("spec: value '", token, "': unknown type '", type, "' ", kTypeHelp);
  return RawType{.size = static_cast<uint8_t>(bits / 8), .is_signed = type[0] == 's', .hex = type[0] == 'x'};
}

// "p->q->name", "*p", "arr[2]", "it.name": a parameter and what to follow from it, as C
// writes it (a leading * applies last: *p->q is *(p->q)). nullopt when it is not one.
std::optional<ParamRef> parse_access_path(std::string_view s) {
  std::size_t stars = 0;
  while (stars < s.size() && s[stars] == '*') stars++;
  s = s.substr(stars);
  auto ident_end = [](std::string_view t) {
    std::size_t n = 0;
    while (n < t.size() && (std::isalnum(static_cast<unsigned char>(t[n])) || t[n] == '_')) n++;
    return n;
  };
  std::size_t n = ident_end(s);
  if (!is_identifier(s.substr(0, n))) return std::nullopt;
  ParamRef ref{.name = std::string(s.substr(0, n)), .path = {}};
  s = s.substr(n);
  using K = AccessStep::Kind;
  while (!s.empty()) {
    if (s.substr(0, 2) == "->" || s[0] == '.') {
      const bool arrow = s[0] == '-';
      s = s.substr(arrow ? 2 : 1);
      n = ident_end(s);
      if (!is_identifier(s.substr(0, n))) return std::nullopt;
      if (arrow) ref.path.push_back({.kind = K::Deref, .member = {}, .index = 0});
      ref.path.push_back({.kind = K::Member, .member = std::string(s.substr(0, n)), .index = 0});
      s = s.substr(n);
    } else if (s[0] == '[') {
      auto close = s.find(']');
      auto idx = close == std::string_view::npos ? std::nullopt : parse_number(s.substr(1, close - 1));
      if (!idx || *idx > 1u << 20) return std::nullopt;
      ref.path.push_back({.kind = K::Index, .member = {}, .index = static_cast<int64_t>(*idx)});
      s = s.substr(close + 1);
    } else {
      return std::nullopt;
    }
  }
  for (std::size_t i = 0; i < stars; i++) ref.path.push_back({.kind = K::Deref, .member = {}, .index = 0});
  if (ref.path.empty()) return std::nullopt;
  return ref;
}

// What the body of a token (no label, no type) names.
Result<ValueTarget> parse_target(std::string_view token, std::string_view body) {
  if (body == "$comm") return ValueTarget{CommRef{}};
  if (body == "$retval") return ValueTarget{ReturnValueRef{}};
  // $vars (perf probe's word): at a source line, every variable in scope; elsewhere the
  // same as $params.
  if (body == "$params" || body == "$vars") return ValueTarget{AllParamsRef{}};
  if (body.size() > 1 && body[0] == '%') return ValueTarget{RegisterRef{std::string(body.substr(1))}};
  if (body.substr(0, 6) == "$stack") {
    auto n = parse_number(body.substr(6));
    if (!n || *n > 4095) return err("spec: value '", token, "': expected $stackN with N from 0 to 4095");
    return ValueTarget{StackRef{static_cast<unsigned>(*n)}};
  }
  if (body.substr(0, 4) == "$arg") {
    auto n = parse_number(body.substr(4));
    if (!n || *n < 1 || *n > 64) return err("spec: value '", token, "': expected $argN with N from 1 to 64");
    return ValueTarget{ArgumentRef{static_cast<unsigned>(*n)}};
  }
  if (body.size() > 1 && body[0] == '@') {
    std::string_view g = body.substr(1);
    if (auto n = parse_number(g)) return ValueTarget{GlobalRef{.symbol = {}, .address = *n, .offset = 0, .size = 0}};
    auto sign = g.find_first_of("+-");
    GlobalRef ref{.symbol = std::string(g.substr(0, sign)), .address = {}, .offset = 0, .size = 0};
    if (sign != std::string_view::npos) {
      auto off = parse_number(g.substr(sign + 1));
      if (!off || *off > 0x7fffffff)
        return err("spec: value '", token, "': bad offset '", g.substr(sign), "' after @", ref.symbol);
      ref.offset = g[sign] == '-' ? -static_cast<int64_t>(*off) : static_cast<int64_t>(*off);
    }
    // A symbol: a C identifier, or a mangled or versioned name (letters, digits, _ . $).
    const bool name_ok = !ref.symbol.empty() && !std::isdigit(static_cast<unsigned char>(ref.symbol[0])) &&
                         std::all_of(ref.symbol.begin(), ref.symbol.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
                         });
    if (!name_ok)
      return err("spec: value '", token, "': expected @SYMBOL, @SYMBOL+OFFSET or @0xADDRESS (a global of the probed file)");
    return ValueTarget{std::move(ref)};
  }
  if (is_identifier(body)) return ValueTarget{ParamRef{std::string(body)}};
  if (auto path = parse_access_path(body)) return ValueTarget{std::move(*path)};
  return err("spec: value '", token,
             "': unknown (use %REG, $argN, $stackN, $retval, $comm, @GLOBAL, a parameter or p->member)");
}

}  // namespace

std::string ValueRequest::display_name() const {
  if (!label.empty()) return label;
  std::string_view body = text;
  if (auto colon = body.find(':'); colon != std::string_view::npos) body = body.substr(0, colon);
  return std::string(body);
}

bool ValueRequest::wants_dwarf() const {
  if (std::holds_alternative<ParamRef>(target) || std::holds_alternative<AllParamsRef>(target)) return true;
  return std::holds_alternative<ReturnValueRef>(target) && label.empty() && !type;
}

// Peels "+OFF(" ... ")" layers off `body`: "+0(+8(%di))" -> "%di", memory {8, 0}.
Result<std::string_view> peel_memory(std::string_view token, std::string_view body, std::vector<int32_t>& memory) {
  std::vector<int32_t> outer_first;
  while (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    auto open = body.find('(');
    if (open == std::string_view::npos || body.back() != ')')
      return err("spec: value '", token, "': expected +OFFSET(VALUE), as in +8(%di)");
    auto n = parse_number(body.substr(1, open - 1));
    if (!n || *n > 0x7fffffff)
      return err("spec: value '", token, "': bad offset '", body.substr(0, open), "' (a decimal or 0x number)");
    outer_first.push_back(body[0] == '-' ? -static_cast<int32_t>(*n) : static_cast<int32_t>(*n));
    body = body.substr(open + 1, body.size() - open - 2);
  }
  if (outer_first.size() > 3) return err("spec: value '", token, "': more than 3 memory reads in one value");
  memory.assign(outer_first.rbegin(), outer_first.rend());
  return body;
}

Result<ValueRequest> parse_value_request(std::string_view token) {
  ValueRequest v{.text = std::string(token), .label = {}, .target = CommRef{}, .type = std::nullopt};
  std::string_view body = token;
  if (auto eq = token.find('='); eq != std::string_view::npos) {
    v.label = std::string(token.substr(0, eq));
    body = token.substr(eq + 1);
    if (v.label.empty() || body.empty()) return err("spec: value '", token, "': expected NAME=VALUE");
  }
  if (auto colon = body.rfind(':'); colon != std::string_view::npos && body.find(')', colon) == std::string_view::npos) {
    UPROF_ASSIGN(RawType t, parse_type(token, body.substr(colon + 1)));
    v.type = t;
    body = body.substr(0, colon);
  }
  UPROF_ASSIGN(body, peel_memory(token, body, v.memory));
  UPROF_ASSIGN(v.target, parse_target(token, body));
  if (!v.memory.empty() && (std::holds_alternative<ParamRef>(v.target) || std::holds_alternative<AllParamsRef>(v.target) ||
                            std::holds_alternative<CommRef>(v.target)))
    return err("spec: value '", token, "': memory reads take a register, $argN, $stackN, $retval or @GLOBAL");
  // A parameter is typed by DWARF and shown by its own name: "x=a" or "a:s32" is
  // not a register or a stack word, so neither a label nor a type applies.
  if ((std::holds_alternative<ParamRef>(v.target) || std::holds_alternative<AllParamsRef>(v.target)) &&
      (!v.label.empty() || v.type))
    return err("spec: value '", token, "': a parameter is typed and named by DWARF (write '", body, "' alone)");
  return v;
}

}  // namespace uprof
