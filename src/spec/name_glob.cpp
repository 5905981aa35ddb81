#include "uprof/spec/name_glob.h"

#include <cctype>

namespace uprof {
namespace {

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

bool is_go_receiver_star(std::string_view name, std::size_t i) {
  if (i == 0 || i >= name.size() || name[i] != '*' || name[i - 1] != '(') return false;
  // A type name: a letter or '_' first, then identifier characters and the package
  // path's '.' and '/'; a generic type's arguments in brackets ("List[...]",
  // "List[go.shape.int]").
  std::size_t j = i + 1;
  if (j >= name.size() || !(std::isalpha(static_cast<unsigned char>(name[j])) || name[j] == '_')) return false;
  int brackets = 0;
  for (; j < name.size(); j++) {
    const char c = name[j];
    if (c == '[') brackets++;
    else if (c == ']' && brackets > 0) brackets--;
    else if (c == ')' && brackets == 0) return true;
    else if (brackets == 0 && !is_ident(c) && c != '.' && c != '/') return false;
    else if (brackets > 0 && (c == '*' || c == '?')) return false;  // a wildcard inside: "(*List[*])"
  }
  return false;
}

bool has_wildcard(std::string_view name) {
  for (std::size_t i = 0; i < name.size(); i++)
    if ((name[i] == '*' && !is_go_receiver_star(name, i)) || name[i] == '?') return true;
  return false;
}

std::string fnmatch_pattern(std::string_view name) {
  std::string p;
  for (std::size_t i = 0; i < name.size(); i++) {
    const char c = name[i];
    if (c == '[' || c == ']' || c == '\\' || (c == '*' && is_go_receiver_star(name, i))) p += '\\';
    p += c;
  }
  return p;
}

}  // namespace uprof
