// Which characters of a function name are wildcards. A name is a glob when it has a '*'
// or a '?' (fnmatch(3)'s, matched over symbol and demangled names), except where the
// character is part of a name as the language prints it:
//
//   '[' and ']'   plain: "operator[]", Go's generic "main.Map[...]"
//   Go's pointer receiver: the '*' of "(*T)" in "main.(*T).Run" and
//                 "net/http.(*conn).serve" is the method's receiver type, a pointer:
//                 "main.(*T).Run" names one method, "main.(*T).*" each method of *T
//                 (and not of *BigT), "net/http.*" every function of the package
#pragma once

#include <string>
#include <string_view>

namespace uprof {

// Whether the '*' at `i` in `name` is a Go pointer receiver's: right after '(' and
// followed by a type name and ')' ("(*T)", "(*conn)", "(*List[...])").
bool is_go_receiver_star(std::string_view name, std::size_t i);

// Whether `name` has a wildcard: a '*' or '?' that is not a Go receiver's '*'.
bool has_wildcard(std::string_view name);

// The fnmatch(3) pattern for `name`: its wildcards stay, '[', ']', '\' and Go receivers'
// '*' are escaped to stand for themselves ("main.(*T).*" -> "main.(\*T).*").
std::string fnmatch_pattern(std::string_view name);

}  // namespace uprof
