// The functions an ELF file defines, from its .symtab and .dynsym (and a separate
// debug file's .symtab), with the symbol policy the loader and a user expect:
// - only defined functions (STT_FUNC, STT_GNU_IFUNC) in executable sections: an
//   undefined .dynsym entry with a value is a PLT stub's canonical address, never
//   the function;
// - names at one address are one function with aliases ("add" and "add_alias");
//   the primary name is the global one, then weak, then local, then the shortest;
// - each name keeps its symbol version ("memcpy@@GLIBC_2.14", hidden "@GLIBC_2.2.5");
// - C++ names are demangled for matching and display, and match as people write them
//   (resolve/elf/cxx_name.h: "std::vector<int>::push_back(const int&)");
// - Rust names are demangled to their path, without the hash (resolve/elf/rust_name.h:
//   "m::inner::helper"); a generic function's instances answer to its path ("m::id" for
//   "m::id::<u32>" and "m::id::<u64>");
// - Go's names are as Go prints them: "main.(*T).Run" is a name, not a glob (spec/name_glob.h);
// - a compiler clone ("scale.constprop.0", "ns::f(int) [clone .isra.0]") answers to the
//   name of its source function ("scale", "ns::f(int)"), as the function itself does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/resolve/elf/cxx_name.h"
#include "uprof/resolve/elf/elf_file.h"

namespace uprof {

struct SymbolName {
  std::string name;
  std::string version;          // "" when unversioned
  bool version_default = true;
  uint8_t bind = 0;             // STB_GLOBAL, STB_WEAK, STB_LOCAL
};

struct Function {
  uint64_t addr = 0;
  uint64_t size = 0;
  std::vector<SymbolName> names;   // primary first
  std::string demangled;           // of the primary name; "" when not a C++ name
  // The source function's name to show a person, without clone marks: "scale" for
  // "scale.constprop.0", "ns::f(int)" for "ns::f(int) [clone .isra.0]".
  std::string source;
  bool is_ifunc = false;

  const std::string& name() const { return names.front().name; }
  // The name to show a person: demangled when C++, clone marks and all.
  const std::string& display_name() const { return demangled.empty() ? name() : demangled; }
  // The clone marks of the primary name (".isra.0"), "" for the function itself.
  std::string_view clone() const { return clone_suffix(name()); }
  uint8_t bind() const { return names.front().bind; }
};

class FunctionTable {
 public:
  static FunctionTable build(const std::vector<ElfSymbol>& symbols);

  const std::vector<Function>& functions() const { return functions_; }  // sorted by address
  bool empty() const { return functions_.empty(); }

  // Functions with a symbol named exactly `name`, and the clones of such a name
  // ("scale" finds "scale.constprop.0"); with a version, only that version (default
  // versions only when `default_only`). Without a version a default version beats a
  // hidden one of the same name.
  std::vector<const Function*> find_exact(std::string_view name, const std::optional<std::string>& version = {},
                                          bool default_only = false) const;
  // C++: "ns::Klass::method" matches every overload, "ns::Klass::method(int)" one
  // (and its clones); a parameter list without the qualifiers after it matches a
  // function that has them when none matches exactly ("V::get()" for "V::get() const").
  std::vector<const Function*> find_cxx(std::string_view name) const;
  // fnmatch(3) with '*' and '?' over symbol names and demangled names (with and without
  // parameters and clone marks); '[' and ']' are plain characters ("operator[]").
  std::vector<const Function*> find_glob(std::string_view pattern) const;
  // The function whose [addr, addr + size) holds `addr`.
  const Function* containing(uint64_t addr) const;
  // Up to `max` names close to `name` (edit distance), for "did you mean".
  std::vector<std::string> suggest(std::string_view name, std::size_t max = 3) const;

 private:
  std::vector<Function> functions_;
};

}  // namespace uprof
