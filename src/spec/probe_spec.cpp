#include "uprof/spec/probe_spec.h"

#include <cctype>

namespace uprof {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// Index of the OBJECT ':' in a location, or npos. "ns::f" has none, "bin:ns::f" has 3.
std::size_t object_separator(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); i++) {
    if (s[i] != ':') continue;
    if (i + 1 < s.size() && s[i + 1] == ':') {
      i++;
      continue;
    }
    return i;
  }
  return std::string_view::npos;
}

Error spec_error(std::string_view text, std::size_t col, std::string_view what) {
  return err("spec: '", text, "': ", what, " (at column ", col + 1, ")");
}

}  // namespace

std::optional<uint64_t> parse_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) return std::nullopt;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return v;
}

Result<ProbeSpec> parse_probe_spec(std::string_view text) {
  ProbeSpec spec;
  spec.text = std::string(text);
  std::size_t b = 0;
  while (b < text.size() && is_space(text[b])) b++;
  if (b == text.size()) return err("spec: empty probe spec");

  // LOCATION ends at the first space outside parentheses ("ns::f(int, long) %di").
  std::size_t e = b;
  int depth = 0;
  for (; e < text.size(); e++) {
    char c = text[e];
    if (c == '(' || c == '<') depth++;
    else if ((c == ')' || c == '>') && depth > 0) depth--;
    else if (is_space(c) && depth == 0) break;
  }
  std::string_view loc = text.substr(b, e - b);
  std::size_t loc_col = b;

  for (std::size_t i = e; i < text.size();) {
    while (i < text.size() && is_space(text[i])) i++;
    std::size_t j = i;
    while (j < text.size() && !is_space(text[j])) j++;
    if (j > i) {
      UPROF_ASSIGN(ValueRequest v, parse_value_request(text.substr(i, j - i)));
      spec.values.push_back(std::move(v));
    }
    i = j;
  }

  constexpr std::string_view kReturn = "%return";
  if (loc.size() >= kReturn.size() && loc.substr(loc.size() - kReturn.size()) == kReturn) {
    spec.is_return = true;
    loc.remove_suffix(kReturn.size());
  } else if (auto pct = loc.find('%'); pct != std::string_view::npos) {
    return spec_error(text, loc_col + pct, "unknown suffix '" + std::string(loc.substr(pct)) +
                                               "' (only %return is known)");
  }

  constexpr std::string_view kUsdt = "usdt:";
  if (loc.substr(0, kUsdt.size()) == kUsdt) {
    if (spec.is_return)
      return spec_error(text, loc_col, "a USDT probe has no return: pair its entry and return probes instead");
    std::string_view rest = loc.substr(kUsdt.size());
    // The last two fields are PROVIDER and NAME; what is before them is the file.
    auto last = rest.rfind(':');
    if (last == std::string_view::npos || last == 0 || last + 1 == rest.size())
      return spec_error(text, loc_col, "a USDT spec is usdt:PROVIDER:NAME or usdt:BIN:PROVIDER:NAME");
    auto prev = rest.rfind(':', last - 1);
    std::size_t provider_at = prev == std::string_view::npos ? 0 : prev + 1;
    if (prev != std::string_view::npos) {
      if (prev == 0) return spec_error(text, loc_col + kUsdt.size(), "empty object name before ':'");
      spec.object = std::string(rest.substr(0, prev));
    }
    UsdtRef u{.provider = std::string(rest.substr(provider_at, last - provider_at)),
              .name = std::string(rest.substr(last + 1)), .is_glob = false};
    if (u.provider.empty())
      return spec_error(text, loc_col + kUsdt.size() + provider_at, "empty USDT provider");
    u.is_glob = (u.provider + u.name).find_first_of("*?[") != std::string::npos;
    spec.what = std::move(u);
    return spec;
  }

  std::size_t sep = object_separator(loc);
  std::string_view what = loc;
  std::size_t what_col = loc_col;
  if (sep != std::string_view::npos) {
    spec.object = std::string(loc.substr(0, sep));
    what = loc.substr(sep + 1);
    what_col = loc_col + sep + 1;
    if (spec.object.empty()) return spec_error(text, loc_col, "empty object name before ':'");
  }
  if (what.empty()) return spec_error(text, what_col, "no function or offset to probe");

  if (std::isdigit(static_cast<unsigned char>(what[0]))) {
    auto off = parse_number(what);
    if (!off) return spec_error(text, what_col, "bad offset '" + std::string(what) + "'");
    // BIN:0xOFF%return: the user says OFF is a function's entry (a stripped binary has
    // no symbol to say it); the resolver refuses it where a symbol says otherwise.
    spec.what = RawOffset{*off};
    return spec;
  }

  FunctionRef f;
  // "+OFF" only when what follows the last '+' is a number: "operator+" stays a name.
  if (auto plus = what.rfind('+'); plus != std::string_view::npos && plus > 0 && plus + 1 < what.size() &&
                                   std::isdigit(static_cast<unsigned char>(what[plus + 1]))) {
    auto off = parse_number(what.substr(plus + 1));
    if (!off)
      return spec_error(text, what_col + plus + 1, "bad offset '" + std::string(what.substr(plus + 1)) + "'");
    f.offset = *off;
    what = what.substr(0, plus);
    if (spec.is_return && *off != 0)
      return spec_error(text, what_col + plus, "a return probe goes on the function entry, not +OFF");
  }
  if (auto at = what.find('@'); at != std::string_view::npos && at > 0) {
    bool dflt = what.compare(at, 2, "@@") == 0;
    std::string_view ver = what.substr(at + (dflt ? 2 : 1));
    if (ver.empty()) return spec_error(text, what_col + at, "empty symbol version after '@'");
    f.version = std::string(ver);
    f.default_version_only = dflt;
    what = what.substr(0, at);
  }
  if (what.empty()) return spec_error(text, what_col, "no function name");
  f.name = std::string(what);
  f.is_glob = what.find_first_of("*?[") != std::string_view::npos && what.find("operator") == std::string_view::npos;
  spec.what = std::move(f);
  return spec;
}

std::optional<CallArgs> parse_call_args(std::string_view name) {
  auto open = name.find('(');
  if (open == std::string_view::npos || open == 0 || name.back() != ')') return std::nullopt;
  CallArgs c;
  c.function = std::string(name.substr(0, open));
  std::string_view inner = name.substr(open + 1, name.size() - open - 2);
  std::size_t i = 0;
  while (i < inner.size()) {
    while (i < inner.size() && (is_space(inner[i]) || inner[i] == ',')) i++;
    std::size_t j = i;
    while (j < inner.size() && (std::isalnum(static_cast<unsigned char>(inner[j])) || inner[j] == '_')) j++;
    if (j == i) {
      if (i < inner.size()) return std::nullopt;  // not an identifier: "*", "<", "::", ...
      break;
    }
    if (std::isdigit(static_cast<unsigned char>(inner[i]))) return std::nullopt;
    c.names.emplace_back(inner.substr(i, j - i));
    i = j;
    while (i < inner.size() && is_space(inner[i])) i++;
    if (i < inner.size() && inner[i] != ',') return std::nullopt;  // "unsigned int": two words
  }
  return c;
}

}  // namespace uprof
