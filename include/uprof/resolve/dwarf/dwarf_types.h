// How DWARF entities are spelled for people: the qualified C++ name of a DIE
// ("ns::Klass::method") and C-like names of types ("const char*",
// "int (*)(int, long)", "struct <anon>"). Used by DwarfIndex to print
// signatures such as `int ns::Klass::method(ns::Klass* this, double x)`.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <string>
#include <vector>

namespace uprof {

// A DIE's identity across .debug_info and the DWARF 4 .debug_types section,
// whose offsets overlap (both start at 0): the offset, with bit 63 set for
// .debug_types. DWARF 5 type units live in .debug_info and need no bit.
uint64_t dwarf_die_key(Dwarf_Die* die);
inline constexpr uint64_t kDwarfTypesSectionBit = uint64_t{1} << 63;

// The namespaces, classes, structs and unions of one Dwarf, kept as nested
// intervals of DIE keys. libdw has no parent pointers, so "which namespace is
// this DIE in?" is answered by finding the innermost interval around its key:
//   0x357 namespace ns          [0x357, 0xc98)
//   0xc09   struct Klass        [0xc09, 0xc7b)
//   0xc23     method (decl)     -> inside both: "ns::Klass::method"
class DwarfScopes {
 public:
  // Records `scope` (a namespace, class, struct or union DIE) whose subtree
  // ends before `end_key`: its next sibling's key, or its parent's end.
  void add(Dwarf_Die* scope, uint64_t end_key);
  // Sorts and links the scopes; call once, after the last add().
  void finish();

  // "ns::Klass" for the scopes around `die`; "" at the top level of its unit.
  std::string prefix_of(Dwarf_Die* die) const;
  // The qualified name of a function, variable or type DIE. An out-of-class
  // method definition (DW_AT_specification) or an out-of-line copy of an
  // inline function (DW_AT_abstract_origin) has neither name nor scope
  // itself: both come from the declaration those attributes lead to.
  // "" when no DIE on that chain has a name.
  std::string qualified_name(Dwarf_Die* die) const;

  std::size_t size() const { return scopes_.size(); }

 private:
  struct Scope {
    uint64_t start = 0;     // key of the scope DIE
    uint64_t end = 0;       // key just past its subtree
    int32_t parent = -1;    // index of the enclosing scope, set by finish()
    uint64_t spec_key = 0;  // DW_AT_specification target, 0 when none
    std::string name;       // "ns", "Klass", "(anonymous namespace)"
  };
  int enclosing(uint64_t key) const;
  std::string qualified(int index, int depth) const;
  std::string prefix_of_key(uint64_t key, int depth) const;

  std::vector<Scope> scopes_;
};

struct TypeStyle {
  // C spells tagged types with their tag ("struct point*"); C++ does not
  // ("ns::Klass*"). Unnamed ones keep the tag in both: "struct <anon>".
  bool c_tags = false;
};

// The C-family style for a CU language (dwarf_srclang of the unit DIE).
TypeStyle type_style_for_language(int dw_lang);

// The name of a type DIE; `type` == nullptr (no DW_AT_type) is "void".
// Typedefs keep their name ("size_t", not "unsigned long"); gcc's base type
// names are shortened to what people write ("long unsigned int" is printed
// "unsigned long").
std::string dwarf_type_name(Dwarf_Die* type, const DwarfScopes& scopes, TypeStyle style);

// The type of a function (its return type), parameter or variable DIE:
// "void" when it has no DW_AT_type, "<?>" when that cannot be followed.
// `strip_top_cv` drops top-level const/volatile/restrict, as a parameter's
// type is seen by the caller: `ns::Klass* const this` is passed as `ns::Klass*`.
std::string dwarf_type_of(Dwarf_Die* entity, const DwarfScopes& scopes, TypeStyle style, bool strip_top_cv);

// `type` without its top-level const/volatile/restrict. Returns `type` itself when there is nothing to strip, `storage` otherwise,
// and nullptr for a qualified void.
Dwarf_Die* dwarf_strip_cv(Dwarf_Die* type, Dwarf_Die* storage);

// The DIE that `attr` of `die` refers to, following DW_AT_abstract_origin and
// DW_AT_specification; false when there is no such attribute or it is broken.
bool dwarf_ref_integrate(Dwarf_Die* die, unsigned attr, Dwarf_Die* out);
// Whether flag `attr` (DW_AT_artificial, ...) is set on `die` or its origin.
bool dwarf_flag_integrate(Dwarf_Die* die, unsigned attr);

}  // namespace uprof
