#include "uprof/spec/probe_spec.h"

#include <algorithm>
#include <cctype>

#include "uprof/spec/name_glob.h"

namespace uprof {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }
bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// If the word `operator` starts at `i`, the index past the operator's own characters,
// which are its name and not brackets: "operator<" and "operator->*" past the symbols,
// "operator()" past "()", "operator new" past the space (the word after it is read as
// name). Otherwise `i`. "operator*%return" keeps its suffix.
std::size_t skip_operator(std::string_view s, std::size_t i) {
  constexpr std::string_view kOperator = "operator";
  if (s.compare(i, kOperator.size(), kOperator) != 0 || (i > 0 && is_ident(s[i - 1]))) return i;
  std::size_t j = i + kOperator.size();
  if (j < s.size() && is_ident(s[j])) return i;  // "operators", "operator_id"
  if (s.compare(j, 2, "()") == 0 || s.compare(j, 2, "[]") == 0) return j + 2;
  if (j < s.size() && is_space(s[j])) {
    while (j < s.size() && is_space(s[j])) j++;
    return j;
  }
  constexpr std::string_view kSymbols = "+-*/%^&|~!=<>,";
  auto at_return = [&](std::size_t k) {
    return s.compare(k, 7, "%return") == 0 && (k + 7 == s.size() || is_space(s[k + 7]));
  };
  while (j < s.size() && kSymbols.find(s[j]) != std::string_view::npos && !at_return(j)) j++;
  return j;
}

// A word that continues a C++ name after a space, as the demangler prints names: a
// qualifier, a built-in type of a conversion operator, a clone mark. No value is
// spelled so: "f() const", "operator unsigned long()", "f(int) [clone .isra.0]".
bool continues_name(std::string_view word) {
  if (word.substr(0, 6) == "[clone") return true;
  std::size_t n = 0;
  while (n < word.size() && is_ident(word[n])) n++;
  // What may follow the keyword in the same word: "char*", "long&", "long()".
  std::string_view tail = word.substr(n);
  tail.remove_prefix(std::min(tail.size(), tail.find_first_not_of("*&")));
  if (!tail.empty() && tail[0] != '(') return false;
  static constexpr std::string_view kWords[] = {"const",  "volatile", "unsigned", "signed",  "long",
                                                "short",  "int",      "char",     "bool",    "float",
                                                "double", "void",     "wchar_t",  "char8_t", "char16_t",
                                                "char32_t"};
  std::string_view head = word.substr(0, n);
  if (head.empty()) return word == "&" || word == "&&";
  return std::find(std::begin(kWords), std::end(kWords), head) != std::end(kWords);
}

// Walks `s` over what is structure rather than name: outside "quotes" and outside an
// operator's own characters, with the depth of (), <> and [] at each character. Returns
// the first index where `stop(i, depth)` holds, or s.size().
template <class Stop>
std::size_t scan(std::string_view s, Stop stop) {
  int depth = 0;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '"') {
      auto close = s.find('"', i + 1);
      if (close == std::string_view::npos) return s.size();
      i = close + 1;
      continue;
    }
    if (std::size_t past = skip_operator(s, i); past != i) {
      i = past;
      continue;
    }
    if (stop(i, depth)) return i;
    char c = s[i];
    if (c == '(' || c == '<' || c == '[') depth++;
    else if ((c == ')' || c == '>' || c == ']') && depth > 0) depth--;
    i++;
  }
  return s.size();
}

// Where the LOCATION of `text` (from `b`) ends: the first space that ends a name.
std::size_t location_end(std::string_view text, std::size_t b) {
  std::string_view s = text.substr(b);
  return b + scan(s, [&](std::size_t i, int depth) {
           if (!is_space(s[i]) || depth > 0) return false;
           std::size_t w = i;
           while (w < s.size() && is_space(s[w])) w++;
           std::size_t we = w;
           while (we < s.size() && !is_space(s[we])) we++;
           return we == w || !continues_name(s.substr(w, we - w));
         });
}

// Index of the OBJECT ':' in a location, or npos. "ns::f" has none, "bin:ns::f" has 3,
// "f[abi:cxx11]()" none.
std::size_t object_separator(std::string_view s) {
  std::size_t at = scan(s, [&](std::size_t i, int depth) {
    return s[i] == ':' && depth == 0 && (i + 1 == s.size() || s[i + 1] != ':') && (i == 0 || s[i - 1] != ':');
  });
  return at == s.size() ? std::string_view::npos : at;
}

std::string unquote(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '"') out += c;
  return out;
}

Error spec_error(std::string_view text, std::size_t col, std::string_view what) {
  return err("spec: '", text, "': ", what, " (at column ", col + 1, ")");
}

// "42" -> 42: a line number is plain decimal, 1 or more.
std::optional<uint32_t> parse_line(std::string_view s) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return static_cast<uint32_t>(std::stoul(std::string(s)));
}

// Where "X:LINE" ends in its last ':' (not half of a C++ "::"), with LINE decimal: the
// index of that ':', or npos.
std::size_t line_separator(std::string_view s) {
  auto colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || s[colon - 1] == ':') return std::string_view::npos;
  return parse_line(s.substr(colon + 1)) ? colon : std::string_view::npos;
}

}  // namespace

bool is_source_file_name(std::string_view name) {
  static constexpr std::string_view kExtensions[] = {".c",  ".h",   ".cc",  ".cp",  ".cpp", ".cxx", ".c++", ".hh",
                                                     ".hpp", ".hxx", ".h++", ".inl", ".ipp", ".tcc", ".C",   ".H",
                                                     ".s",  ".S",   ".m",   ".mm",  ".rs",  ".go"};
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || name[dot - 1] == '/') return false;
  const std::string_view ext = name.substr(dot);
  return std::find(std::begin(kExtensions), std::end(kExtensions), ext) != std::end(kExtensions);
}

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

namespace {

// usdt:[BIN:]PROVIDER:NAME ("usdt:python:function__entry", "usdt:./app:myapp:*"), `loc`
// at column `loc_col` of `text`.
Status parse_usdt_location(std::string_view text, std::string_view loc, std::size_t loc_col, ProbeSpec& spec) {
  constexpr std::string_view kUsdt = "usdt:";
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
  return ok();
}

// [OBJECT:]SOURCE:LINE and [OBJECT:]FUNC:LINE ("lines.c:24", "./prog:loop_sum:3"), the line
// number after the ':' at `at`; false for "./prog:4409", a path and a decimal file offset.
Result<bool> parse_line_location(std::string_view text, std::string_view loc, std::size_t loc_col, std::size_t at,
                                 ProbeSpec& spec) {
  std::string_view where = loc.substr(0, at);
  const uint32_t line = *parse_line(loc.substr(at + 1));
  std::size_t obj = object_separator(where);
  std::string_view name = obj == std::string_view::npos ? where : where.substr(obj + 1);
  const bool source = is_source_file_name(name);
  // "./prog:4409": a path and a decimal file offset, as before lines were known.
  const bool offset = !source && obj == std::string_view::npos && where.find('/') != std::string_view::npos;
  if (!offset) {
    if (spec.is_return)
      return spec_error(text, loc_col + at, "a source line has no return: probe the function for its returns");
    if (obj != std::string_view::npos) {
      spec.object = unquote(where.substr(0, obj));
      if (spec.object.empty()) return spec_error(text, loc_col, "empty object name before ':'");
    }
    if (name.empty()) return spec_error(text, loc_col + at, "no file or function before the line number");
    if (source && line == 0) return spec_error(text, loc_col + at + 1, "line numbers start at 1");
    if (source) spec.what = SourceLine{.file = std::string(name), .line = line};
    else spec.what = FunctionLine{.function = unquote(name), .line = line};
    return true;
  }
  return false;
}

// FUNC['@'['@']VERSION]['+'OFFSET] and its quoted form ("add+0x8", "memcpy@@GLIBC_2.14",
// '"operator new[](unsigned long)"@VER'), `what` at column `what_col` of `text`.
Status parse_function_ref(std::string_view text, std::string_view what, std::size_t what_col, ProbeSpec& spec) {
  FunctionRef f;
  // '"operator new[](unsigned long)"@VER+OFF': the name is what the quotes hold.
  std::string quoted;
  if (what[0] == '"') {
    auto close = what.find('"', 1);
    quoted = std::string(what.substr(1, close - 1));
    if (quoted.empty()) return spec_error(text, what_col, "empty quoted name");
    std::string_view rest = what.substr(close + 1);
    if (!rest.empty() && rest[0] != '@' && rest[0] != '+')
      return spec_error(text, what_col + close + 1, "after a quoted name only @VERSION and +OFFSET may follow");
    what = rest;
  }
  // "+OFF" only when what follows the last '+' is a number: "operator+" stays a name.
  if (auto plus = what.rfind('+'); plus != std::string_view::npos && (plus > 0 || !quoted.empty()) &&
                                   plus + 1 < what.size() && std::isdigit(static_cast<unsigned char>(what[plus + 1]))) {
    auto off = parse_number(what.substr(plus + 1));
    if (!off)
      return spec_error(text, what_col + plus + 1, "bad offset '" + std::string(what.substr(plus + 1)) + "'");
    f.offset = *off;
    what = what.substr(0, plus);
    if (spec.is_return && *off != 0)
      return spec_error(text, what_col + plus, "a return probe goes on the function entry, not +OFF");
  }
  if (auto at = what.find('@'); at != std::string_view::npos && (at > 0 || !quoted.empty())) {
    bool dflt = what.compare(at, 2, "@@") == 0;
    std::string_view ver = what.substr(at + (dflt ? 2 : 1));
    if (ver.empty()) return spec_error(text, what_col + at, "empty symbol version after '@'");
    f.version = std::string(ver);
    f.default_version_only = dflt;
    what = what.substr(0, at);
  }
  if (quoted.empty() && what.empty()) return spec_error(text, what_col, "no function name");
  f.name = quoted.empty() ? std::string(what) : quoted;
  f.is_glob = has_wildcard(f.name);  // not the '*' of Go's "main.(*T).Run" (spec/name_glob.h)
  spec.what = std::move(f);
  return ok();
}

}  // namespace

Result<ProbeSpec> parse_probe_spec(std::string_view text) {
  ProbeSpec spec;
  spec.text = std::string(text);
  std::size_t b = 0;
  while (b < text.size() && is_space(text[b])) b++;
  if (b == text.size()) return err("spec: empty probe spec");

  if (std::count(text.begin(), text.end(), '"') % 2)
    return spec_error(text, text.find('"'), "unterminated quote");
  const std::size_t e = location_end(text, b);
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

  // The suffix is the first '%' that is not an operator's ("operator%" is a name).
  if (auto pct = scan(loc, [&](std::size_t i, int depth) { return loc[i] == '%' && depth == 0; }); pct < loc.size()) {
    if (loc.substr(pct) != "%return")
      return spec_error(text, loc_col + pct, "unknown suffix '" + std::string(loc.substr(pct)) +
                                                 "' (only %return is known)");
    spec.is_return = true;
    loc.remove_suffix(loc.size() - pct);
  }

  constexpr std::string_view kUsdt = "usdt:";
  if (loc.substr(0, kUsdt.size()) == kUsdt) {
    UPROF_TRY(parse_usdt_location(text, loc, loc_col, spec));
    return spec;
  }

  // SOURCE:LINE and FUNC:LINE, with or without an OBJECT before them.
  if (std::size_t at = line_separator(loc); at != std::string_view::npos) {
    UPROF_ASSIGN(const bool line, parse_line_location(text, loc, loc_col, at, spec));
    if (line) return spec;
  }

  std::size_t sep = object_separator(loc);
  std::string_view what = loc;
  std::size_t what_col = loc_col;
  if (sep != std::string_view::npos) {
    spec.object = unquote(loc.substr(0, sep));
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

  UPROF_TRY(parse_function_ref(text, what, what_col, spec));
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

bool names_plain_function(const ProbeSpec& spec) {
  const auto* ref = std::get_if<FunctionRef>(&spec.what);
  return ref && !ref->is_glob && !ref->offset && !ref->version && !spec.is_return;
}

bool is_glob(const ProbeSpec& spec) {
  if (const auto* ref = std::get_if<FunctionRef>(&spec.what)) return ref->is_glob;
  if (const auto* usdt = std::get_if<UsdtRef>(&spec.what)) return usdt->is_glob;
  return false;
}

bool names_cold_part(const FunctionRef& ref) { return ref.name.find(".cold") != std::string::npos; }

std::vector<ValueRequest> call_values(const CallArgs& call) {
  std::vector<ValueRequest> out;
  for (const auto& n : call.names) out.push_back({.text = n, .label = {}, .target = ParamRef{n}, .type = {}});
  if (out.empty()) out.push_back({.text = "$retval", .label = {}, .target = ReturnValueRef{}, .type = {}});
  return out;
}

std::string name_with_version(const FunctionRef& ref) {
  if (!ref.version) return ref.name;
  return ref.name + (ref.default_version_only ? "@@" : "@") + *ref.version;
}

std::string line_text(const SourceLine& line) { return line.file + ":" + std::to_string(line.line); }
std::string line_text(const FunctionLine& line) { return line.function + ":" + std::to_string(line.line); }

}  // namespace uprof
