// C++ names as people write them and as the demangler prints them, and the marks gcc
// puts on the copies it makes of a function.
//
// A user writes `std::vector<int>::push_back(const int&)`; the demangler prints
// `std::vector<int, std::allocator<int> >::push_back(int const&)`. Both name one
// function. cxx_name_matches() holds them equal when they differ only in what a person
// leaves out or writes another way:
//   - spaces:                 "f(int const &)"            for "f(int const&)"
//   - where const goes:       "f(const char*)"            for "f(char const*)"
//   - trailing template args: "std::vector<int>"          for "std::vector<int, std::allocator<int> >"
//   - the C++11 ABI's string: "std::__cxx11::string"      for "std::__cxx11::basic_string<char,
//                                                              std::char_traits<char>, std::allocator<char> >"
// and, when asked to be loose (for a name that matches nothing strictly), what tells the
// two ABIs of libstdc++ apart, which has both: "std::locale::name() const" and
// "std::locale::name[abi:cxx11]() const", "std::string::compare(char const*) const" (the
// old ABI's string, as the demangler spells it) and "std::__cxx11::string::compare(...)":
//   - ABI tags:               "std::locale::name() const" for "std::locale::name[abi:cxx11]() const"
//   - the namespace __cxx11:  "std::string::size() const" for "std::__cxx11::string::size() const"
//
// Clones: gcc copies a function when it specializes it for constant arguments
// (`scale.constprop.0`), drops or splits its parameters (`.isra.0`), splits off a part of
// it that the callers' inlined head calls (`.part.0`), or moves its rarely run code out
// (`.cold`). The demangler prints `ns::Klass::method(double) [clone .isra.0]`. All but
// `.cold` are entry points of the source function.
#pragma once

#include <string>
#include <string_view>

namespace uprof {

// Demangles an Itanium C++ name, or a Rust one (resolve/elf/rust_name.h: "m::work",
// without the hash); "" when `name` is neither.
std::string demangle(std::string_view name);

// "ns::Klass::method(int) const" -> "ns::Klass::method"; "int ns::twice<int>(int)" ->
// "ns::twice<int>"; "f(int) [clone .isra.0]" -> "f".
std::string strip_cxx_parameters(std::string_view demangled);

// gcc's clone marks at the end of a symbol: "_ZN2ns5Klass6methodEd.isra.0" -> ".isra.0",
// "scale.constprop.0.isra.0" -> ".constprop.0.isra.0", "inner.cold" -> ".cold"; "" when none.
std::string_view clone_suffix(std::string_view symbol);
// A split-off `.cold` part: entered by a jump from its function, never called.
bool is_cold_part(std::string_view symbol);
// True when a name a user wrote spells a clone mark: "scale.constprop.0", "f(int) [clone .isra.0]".
bool names_a_clone(std::string_view written);

// The form of a C++ name that comparisons use: no spaces, "T const" for "const T", the
// C++11 ABI's string as "std::__cxx11::string"; `loose`: no ABI tags, no "__cxx11::".
std::string cxx_match_key(std::string_view name, bool loose = false);

// True when `written` (what a user typed) names `demangled`: equal keys, where `written`
// may leave out trailing template arguments and a template function's return type.
bool cxx_name_matches(std::string_view written, std::string_view demangled, bool loose = false);

// "ns::V::get() const" -> "ns::V::get()": the name without the qualifiers after its
// parameter list (const, volatile, &, &&), for a user who left them out.
std::string strip_cxx_qualifiers(std::string_view demangled);

}  // namespace uprof
