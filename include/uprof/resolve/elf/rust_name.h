// Rust's symbol names as their authors write them. rustc mangles a function's path in one
// of two ways, and uprof shows and matches both as the path:
//
//   legacy (rustc's default)  _ZN1m5inner6helper17h8fc5375735d8f164E
//                             an Itanium-style nested name whose last part is a hash
//                             (h + 16 hex digits); the C++ demangler prints
//                             "m::inner::helper::h8fc5375735d8f164", a name nobody writes
//   v0 (-C symbol-mangling-version=v0, the future default)
//                             _RNvNtCskK7mfDs1mzF_1m5inner6helper
//                             crate roots carry a disambiguator (Cs...), generic
//                             functions their arguments ("m::id::<u32>")
//
// Both print as "m::inner::helper": without the hash and without the crate's
// disambiguator, as rustc's own demangler (rustc-demangle's `{}` form) and perf print them.
// The demangler is libiberty's (Debian's libiberty-dev, the one binutils and gdb use; it
// reads v0 since GCC 11): Rust's grammar (generics, closures `{closure#0}`, trait impls
// `<m::S as m::T>::f`, punycode) is no small thing to keep right by hand.
#pragma once

#include <string>
#include <string_view>

namespace uprof {

// The path of a Rust symbol ("m::inner::helper", "<m::S as core::fmt::Debug>::fmt"); ""
// when `symbol` is no Rust symbol (or uprof was built without libiberty). A suffix LLVM
// adds to a local copy (".llvm.1234") is left out of the name.
std::string demangle_rust(std::string_view symbol);

// A v0 path without the generic arguments of its functions, as their author names them:
// "m::id::<u32>" -> "m::id", "m::outer::<u8>::{closure#0}" -> "m::outer::{closure#0}";
// a type's arguments inside <...> stay ("<m::W<u8> as m::T>::f").
std::string rust_without_generic_args(std::string_view demangled);

// Whether `symbol` is mangled the way rustc mangles: v0 ("_R...") or legacy (an Itanium
// nested name ending in a 16-hex-digit hash, "...17h8fc5375735d8f164E").
bool is_rust_symbol(std::string_view symbol);

}  // namespace uprof
