#include "uprof/resolve/elf/cxx_name.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <utility>

#include "uprof/resolve/elf/rust_name.h"

namespace uprof {
namespace {

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// gcc's clone marks, each optionally followed by ".N": "f.isra.0", "f.part.1", "f.cold".
constexpr std::string_view kCloneMarks[] = {".isra", ".constprop", ".part",  ".cold",
                                            ".lto_priv", ".localalias", ".clone", ".llvm"};

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// One space where two words meet ("unsigned long", "int const"), none elsewhere.
std::string single_spaces(std::string_view s) {
  std::string out;
  bool pending = false;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      pending = true;
      continue;
    }
    if (pending && !out.empty() && is_ident(out.back()) && is_ident(c)) out += ' ';
    pending = false;
    out += c;
  }
  return out;
}

// "const T" -> "T const" where a type starts (after '(', '<', ',' or at the start):
// "f(const char*, const std::string&)" -> "f(char const*, std::string const&)".
std::string const_after(std::string s) {
  constexpr std::string_view kConst = "const ";
  for (std::size_t at = s.find(kConst); at != std::string::npos; at = s.find(kConst, at + 1)) {
    if (at > 0 && s[at - 1] != '(' && s[at - 1] != '<' && s[at - 1] != ',') continue;
    std::size_t b = at + kConst.size(), e = b;
    int depth = 0;
    for (; e < s.size(); e++) {
      char c = s[e];
      if (c == '<') depth++;
      else if (c == '>' && depth > 0) depth--;
      else if (depth == 0 && !is_ident(c) && c != ':' && c != ' ') break;
    }
    if (e == b) continue;
    s = s.substr(0, at) + s.substr(b, e - b) + " const" + s.substr(e);
  }
  return s;
}

// Index past the template argument list that `s[i]` is inside of, at its closing '>'.
std::size_t to_closing_angle(std::string_view s, std::size_t i) {
  int depth = 0;
  for (; i < s.size(); i++) {
    char c = s[i];
    if (c == '<' || c == '(') depth++;
    else if (c == ')' && depth > 0) depth--;
    else if (c == '>') {
      if (depth == 0) return i;
      depth--;
    }
  }
  return s.size();
}

}  // namespace

std::string demangle(std::string_view name) {
  // Rust's legacy symbols are Itanium names too, whose last part is a hash: read as Rust
  // first ("m::work", not "m::work::h8fc5375735d8f164"), v0 ones ("_R...") only as Rust.
  if (std::string rust = demangle_rust(name); !rust.empty()) return rust;
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return "";
  int status = 0;
  std::string n(name);
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(n.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : "";
}

namespace {

// Where a demangled name's parameter list opens (npos when it has none) and where the
// name starts after a template function's return type ("int ns::twice<int>(int)": 4).
std::pair<std::size_t, std::size_t> name_bounds(std::string_view d) {
  // The '(' that opens the parameter list is the last top-level one, scanning back
  // from the end over qualifiers such as " const", "&&" and " [clone .isra.0]".
  int depth = 0;
  std::size_t open = std::string_view::npos;
  for (std::size_t i = d.size(); i-- > 0;) {
    char c = d[i];
    if (c == ')') depth++;
    else if (c == '(') {
      if (--depth == 0) { open = i; break; }
    }
  }
  std::string_view head = open == std::string_view::npos ? d : d.substr(0, open);
  // The return type is everything up to the last top-level space (none in
  // "operator new(unsigned long)", where the space is the operator's).
  int angle = 0;
  std::size_t cut = 0;
  for (std::size_t i = 0; i < head.size(); i++) {
    char c = head[i];
    if (c == '<' || c == '(') angle++;
    else if ((c == '>' || c == ')') && angle > 0) angle--;
    else if (c == ' ' && angle == 0 && head.substr(0, i).find("operator") == std::string_view::npos)
      cut = i + 1;
  }
  return {open, cut};
}

}  // namespace

std::string strip_cxx_parameters(std::string_view d) {
  auto [open, cut] = name_bounds(d);
  std::string_view head = open == std::string_view::npos ? d : d.substr(0, open);
  return std::string(head.substr(cut));
}

std::string_view clone_suffix(std::string_view sym) {
  std::size_t end = sym.size();
  for (;;) {
    std::size_t e = end, d = end;
    while (d > 0 && std::isdigit(static_cast<unsigned char>(sym[d - 1]))) d--;
    if (d < e && d > 1 && sym[d - 1] == '.') e = d - 1;
    auto mark = std::find_if(std::begin(kCloneMarks), std::end(kCloneMarks), [&](std::string_view m) {
      return e > m.size() && sym.substr(e - m.size(), m.size()) == m;
    });
    if (mark == std::end(kCloneMarks)) break;
    end = e - mark->size();
  }
  return sym.substr(end);
}

bool is_cold_part(std::string_view symbol) { return clone_suffix(symbol).find(".cold") != std::string_view::npos; }

bool names_a_clone(std::string_view written) {
  if (written.find("[clone") != std::string_view::npos) return true;
  return std::any_of(std::begin(kCloneMarks), std::end(kCloneMarks),
                     [&](std::string_view m) { return written.find(m) != std::string_view::npos; });
}

std::string cxx_match_key(std::string_view name, bool loose) {
  std::string s = single_spaces(name);
  // The demangler spells the old ABI's string "std::string" and the C++11 ABI's in full.
  replace_all(s, "std::__cxx11::basic_string<char,std::char_traits<char>,std::allocator<char>>", "std::__cxx11::string");
  if (loose) {
    for (std::size_t at = s.find("[abi:"); at != std::string::npos; at = s.find("[abi:", at)) {
      auto close = s.find(']', at);
      s.erase(at, close == std::string::npos ? std::string::npos : close + 1 - at);
    }
    replace_all(s, "std::__cxx11::", "std::");
  }
  s = const_after(std::move(s));
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}

bool cxx_name_matches(std::string_view written, std::string_view demangled, bool loose) {
  const std::string w = cxx_match_key(written, loose);
  auto matches = [&](const std::string& d) {
    std::size_t i = 0, j = 0;
    while (i < w.size() && j < d.size()) {
      if (w[i] == d[j]) {
        i++, j++;
      } else if (w[i] == '>' && d[j] == ',') {
        j = to_closing_angle(d, j);  // "vector<int>" for "vector<int,std::allocator<int>>"
      } else {
        return false;
      }
    }
    return i == w.size() && j == d.size();
  };
  // "ns::twice<int>(int)" names "int ns::twice<int>(int)": a template function's
  // demangled name starts with its return type.
  const std::size_t cut = name_bounds(demangled).second;
  return matches(cxx_match_key(demangled, loose)) || (cut > 0 && matches(cxx_match_key(demangled.substr(cut), loose)));
}

std::string strip_cxx_qualifiers(std::string_view d) {
  std::string s = single_spaces(d);
  std::size_t end = s.size();
  for (bool again = true; again;) {
    again = false;
    for (std::string_view q : {"const", "volatile", "&&", "&"}) {
      if (end > q.size() && s.compare(end - q.size(), q.size(), q) == 0 &&
          (q[0] == '&' || !is_ident(s[end - q.size() - 1]))) {
        end -= q.size();
        while (end > 0 && s[end - 1] == ' ') end--;
        again = true;
        break;
      }
    }
  }
  // Only qualifiers after a parameter list: "operator&" keeps its '&'.
  if (end == s.size() || end == 0 || s[end - 1] != ')') return s;
  return s.substr(0, end);
}

}  // namespace uprof
