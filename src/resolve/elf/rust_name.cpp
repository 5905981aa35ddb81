#include "uprof/resolve/elf/rust_name.h"

#include <cctype>
#include <cstdlib>
#include <memory>

#ifdef UPROF_HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

namespace uprof {
namespace {

bool is_hex(char c) { return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'); }

// Where a legacy symbol's hash part ends, past its 'E' ("_ZN1m4work17h8fc5375735d8f164E"
// -> its size; "..E.llvm.42" -> the index of ".llvm.42"), or npos when it has none.
std::size_t legacy_end(std::string_view s) {
  if (s.substr(0, 3) != "_ZN") return std::string_view::npos;
  // "17h" + 16 hex digits + "E": the hash is the path's last part.
  for (std::size_t at = s.find("17h"); at != std::string_view::npos; at = s.find("17h", at + 1)) {
    const std::size_t e = at + 3 + 16;
    if (e >= s.size() || s[e] != 'E') continue;
    bool hex = true;
    for (std::size_t i = at + 3; i < e && hex; i++) hex = is_hex(s[i]);
    if (hex && (e + 1 == s.size() || s[e + 1] == '.')) return e + 1;
  }
  return std::string_view::npos;
}

}  // namespace

std::string rust_without_generic_args(std::string_view d) {
  std::string out;
  for (std::size_t i = 0; i < d.size();) {
    if (d.compare(i, 3, "::<") == 0) {  // the turbofish of a function's instance
      int depth = 0;
      std::size_t j = i + 2;
      for (; j < d.size(); j++) {
        if (d[j] == '<') depth++;
        else if (d[j] == '>' && --depth == 0) break;
      }
      i = j + 1;
      continue;
    }
    out += d[i++];
  }
  return out;
}

bool is_rust_symbol(std::string_view s) {
  // v0: "_R", an optional decimal version, then a path, which starts with a capital.
  const auto c = static_cast<unsigned char>(s.size() > 2 ? s[2] : 0);
  if (s.substr(0, 2) == "_R" && (std::isupper(c) || std::isdigit(c))) return true;
  return legacy_end(s) != std::string_view::npos;
}

std::string demangle_rust(std::string_view symbol) {
#ifdef UPROF_HAVE_LIBIBERTY
  if (!is_rust_symbol(symbol)) return "";
  std::string s(symbol);
  // A legacy symbol with LLVM's suffix of a local copy ("...E.llvm.42"), which libiberty
  // refuses: the function's name is the symbol's without it.
  if (std::size_t end = legacy_end(symbol); end != std::string_view::npos) s.resize(end);
  // No DMGL_VERBOSE: without the hash and the crates' disambiguators.
  std::unique_ptr<char, void (*)(void*)> out(rust_demangle(s.c_str(), DMGL_NO_OPTS), std::free);
  return out ? std::string(out.get()) : "";
#else
  (void)symbol;
  return "";
#endif
}

}  // namespace uprof
