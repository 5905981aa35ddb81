#include "uprof/resolve/dwarf/dwarf_types.h"

#include <dwarf.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace uprof {
namespace {

// Corrupt DWARF can make a typedef refer to itself; real types nest a few
// levels ("const char* const*" is 4).
constexpr int kMaxDepth = 64;

const char* attr_string(Dwarf_Die* die, unsigned attr) {
  Dwarf_Attribute a;
  if (!dwarf_attr_integrate(die, attr, &a)) return nullptr;
  return dwarf_formstring(&a);
}

// Calls f(child) for each child of `die`, in order.
template <class F>
void for_each_child(Dwarf_Die* die, F&& f) {
  Dwarf_Die child, next;
  if (dwarf_child(die, &child) != 0) return;
  do {
    f(&child);
    if (dwarf_siblingof(&child, &next) != 0) break;
    child = next;
  } while (true);
}

// A bound or count of constant class; DW_FORM_sdata is signed, the fixed
// size forms carry the bits of the (signed) value gcc had.
bool constant(Dwarf_Die* die, unsigned attr, int64_t* out) {
  Dwarf_Attribute a;
  if (!dwarf_attr_integrate(die, attr, &a)) return false;
  if (dwarf_whatform(&a) == DW_FORM_sdata) {
    Dwarf_Sword v;
    if (dwarf_formsdata(&a, &v) != 0) return false;
    *out = v;
    return true;
  }
  Dwarf_Word v;
  if (dwarf_formudata(&a, &v) != 0) return false;  // an expression: a VLA bound
  *out = static_cast<int64_t>(v);
  return true;
}

bool is_tagged_type(int tag) {
  return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type ||
         tag == DW_TAG_enumeration_type || tag == DW_TAG_interface_type;
}

const char* tag_keyword(int tag) {
  switch (tag) {
    case DW_TAG_structure_type: return "struct";
    case DW_TAG_class_type: return "class";
    case DW_TAG_union_type: return "union";
    case DW_TAG_enumeration_type: return "enum";
    default: return "interface";
  }
}

// gcc names base types the long way ("long unsigned int"); clang and people
// write "unsigned long".
std::string base_type_name(const char* dwarf_name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kShort{{
      {"long int", "long"},
      {"long unsigned int", "unsigned long"},
      {"short int", "short"},
      {"short unsigned int", "unsigned short"},
      {"long long int", "long long"},
      {"long long unsigned int", "unsigned long long"},
      {"__int128 unsigned", "unsigned __int128"},
  }};
  std::string_view n = dwarf_name ? dwarf_name : "<?>";
  for (auto& [from, to] : kShort)
    if (n == from) return std::string(to);
  return std::string(n);
}

// A type split around where a declared name would go, so that pointers to
// functions and arrays come out as C writes them: for `int (*cb)(int)`,
// left = "int (*" and right = ")(int)". The type alone is left + right.
struct Declarator {
  std::string left, right;
};

class TypePrinter {
 public:
  TypePrinter(const DwarfScopes& scopes, TypeStyle style) : scopes_(scopes), style_(style) {}

  Declarator print(Dwarf_Die* type, int depth) {
    if (!type) return {"void", ""};
    if (depth > kMaxDepth) return {"<?>", ""};
    int tag = dwarf_tag(type);
    switch (tag) {
      case DW_TAG_base_type: return {base_type_name(dwarf_diename(type)), ""};
      case DW_TAG_unspecified_type: {
        // Named in C++ ("decltype(nullptr)"); gas gives assembly functions
        // an unnamed one: a type nobody wrote down.
        const char* n = dwarf_diename(type);
        return {n ? n : "?", ""};
      }
      case DW_TAG_typedef: return {named(type, "<anon typedef>"), ""};
      case DW_TAG_pointer_type: return indirect(type, "*", depth);
      case DW_TAG_reference_type: return indirect(type, "&", depth);
      case DW_TAG_rvalue_reference_type: return indirect(type, "&&", depth);
      case DW_TAG_ptr_to_member_type: return member_pointer(type, depth);
      case DW_TAG_const_type: return qualified(type, "const", depth);
      case DW_TAG_volatile_type: return qualified(type, "volatile", depth);
      case DW_TAG_restrict_type: return qualified(type, "restrict", depth);
      case DW_TAG_atomic_type: return qualified(type, "_Atomic", depth);
      case DW_TAG_array_type: return array(type, depth);
      case DW_TAG_subroutine_type: return function(type, depth);
      default:
        if (is_tagged_type(tag)) return {tagged(type, tag), ""};
        const char* n = dwarf_diename(type);
        return {n ? n : "<?>", ""};
    }
  }

  std::string full(Dwarf_Die* type, int depth) {
    auto d = print(type, depth);
    return d.left + d.right;
  }

  // The type of a function, parameter or variable DIE, optionally without
  // its top-level qualifiers.
  std::string type_of(Dwarf_Die* entity, bool strip_top_cv, int depth) {
    Dwarf_Attribute a;
    Dwarf_Die type, storage;
    if (!dwarf_attr_integrate(entity, DW_AT_type, &a)) return "void";
    if (!dwarf_formref_die(&a, &type)) return "<?>";
    return full(strip_top_cv ? dwarf_strip_cv(&type, &storage) : &type, depth + 1);
  }

 private:
  std::string named(Dwarf_Die* type, const char* fallback) {
    std::string n = scopes_.qualified_name(type);
    return n.empty() ? fallback : n;
  }

  std::string tagged(Dwarf_Die* type, int tag) {
    std::string n = scopes_.qualified_name(type);
    if (n.empty()) return std::string(tag_keyword(tag)) + " <anon>";
    if (style_.c_tags) return std::string(tag_keyword(tag)) + " " + n;
    return n;
  }

  // The type a pointer, qualifier, array or typedef is built on; false for void.
  static bool target(Dwarf_Die* type, Dwarf_Die* out) { return dwarf_ref_integrate(type, DW_AT_type, out); }

  // What DW_AT_type of `die` names, also left in `inner` (`found` says if it
  // was): "void" when there is none, "<?>" when the reference cannot be
  // followed (into a dwz supplementary file libdw was not given, say).
  Declarator print_type_of(Dwarf_Die* die, Dwarf_Die* inner, bool* found, int depth) {
    Dwarf_Attribute a;
    *found = false;
    if (!dwarf_attr_integrate(die, DW_AT_type, &a)) return {"void", ""};
    if (!dwarf_formref_die(&a, inner)) return {"<?>", ""};
    *found = true;
    return print(inner, depth + 1);
  }

  static bool binds_loosely(Dwarf_Die* inner) {
    int tag = dwarf_tag(inner);
    return tag == DW_TAG_subroutine_type || tag == DW_TAG_array_type;
  }

  // "int*", "char&", and "int (*)(int)" / "int (*)[3]" where the pointee is a
  // function or an array and the '*' must be parenthesised.
  Declarator indirect(Dwarf_Die* type, const char* op, int depth) {
    Dwarf_Die inner;
    bool has = false;
    auto d = print_type_of(type, &inner, &has, depth);
    if (has && binds_loosely(&inner)) return {d.left + " (" + op, ")" + d.right};
    return {d.left + op, d.right};
  }

  // "int ns::Klass::*" and "int (ns::Klass::*)(int)".
  Declarator member_pointer(Dwarf_Die* type, int depth) {
    Dwarf_Die inner, cls;
    bool has = false;
    std::string owner = dwarf_ref_integrate(type, DW_AT_containing_type, &cls) ? full(&cls, depth + 1) : "<?>";
    auto d = print_type_of(type, &inner, &has, depth);
    if (has && binds_loosely(&inner)) return {d.left + " (" + owner + "::*", ")" + d.right};
    return {d.left + " " + owner + "::*", d.right};
  }

  // Qualifiers go before a plain type ("const char") and after what they
  // qualify when that is a pointer ("char* const", "int (* const)(int)").
  Declarator qualified(Dwarf_Die* type, const char* qual, int depth) {
    Dwarf_Die inner;
    bool has = false;
    auto d = print_type_of(type, &inner, &has, depth);
    int tag = has ? dwarf_tag(&inner) : 0;
    bool after = tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
                 tag == DW_TAG_rvalue_reference_type || tag == DW_TAG_ptr_to_member_type;
    if (after) return {d.left + " " + qual, d.right};
    return {std::string(qual) + " " + d.left, d.right};
  }

  // "[4]" from DW_AT_count or the bounds of one DW_TAG_subrange_type;
  // "[]" when unknown (a flexible or variable-length array).
  static std::string dimension(Dwarf_Die* sub) {
    int64_t count = 0, upper = 0, lower = 0;
    if (constant(sub, DW_AT_count, &count) && count >= 0) return "[" + std::to_string(count) + "]";
    if (!constant(sub, DW_AT_upper_bound, &upper)) return "[]";
    constant(sub, DW_AT_lower_bound, &lower);
    if (upper < lower) return "[]";  // gcc writes upper_bound -1 for `int a[0]`
    return "[" + std::to_string(upper - lower + 1) + "]";
  }

  Declarator array(Dwarf_Die* type, int depth) {
    Dwarf_Die inner;
    bool has = false;
    auto d = print_type_of(type, &inner, &has, depth);
    std::string dims;
    for_each_child(type, [&](Dwarf_Die* child) {
      int tag = dwarf_tag(child);
      if (tag == DW_TAG_subrange_type || tag == DW_TAG_enumeration_type) dims += dimension(child);
    });
    if (dims.empty()) dims = "[]";
    return {d.left, dims + d.right};
  }

  // " const" for the type of a member function whose artificial `this`
  // points to const: `int (Klass::*)() const`.
  static std::string this_qualifier(Dwarf_Die* this_param) {
    Dwarf_Die ptr, pointee;
    if (!target(this_param, &ptr)) return "";
    Dwarf_Die* p = &ptr;
    Dwarf_Die storage;
    p = dwarf_strip_cv(p, &storage);  // `Klass* const this`
    if (!p || dwarf_tag(p) != DW_TAG_pointer_type || !target(p, &pointee)) return "";
    std::string q;
    for (int i = 0; i < 4; i++) {
      int tag = dwarf_tag(&pointee);
      if (tag == DW_TAG_const_type) q += " const";
      else if (tag == DW_TAG_volatile_type) q += " volatile";
      else break;
      Dwarf_Die next;
      if (!target(&pointee, &next)) break;
      pointee = next;
    }
    return q;
  }

  // "int(int, long)", "void(const char*, ...)"; a pointer to it adds "(*)".
  // The artificial `this` of a member function type is not written.
  Declarator function(Dwarf_Die* type, int depth) {
    Dwarf_Die ret;
    bool has = false;
    auto r = print_type_of(type, &ret, &has, depth);
    std::string params, qualifier;
    for_each_child(type, [&](Dwarf_Die* child) {
      int tag = dwarf_tag(child);
      if (tag != DW_TAG_formal_parameter && tag != DW_TAG_unspecified_parameters) return;
      if (tag == DW_TAG_formal_parameter && dwarf_flag_integrate(child, DW_AT_artificial)) {
        qualifier = this_qualifier(child);
        return;
      }
      if (!params.empty()) params += ", ";
      if (tag == DW_TAG_unspecified_parameters) {
        params += "...";
        return;
      }
      params += type_of(child, true, depth);
    });
    return {r.left, "(" + params + ")" + qualifier + r.right};
  }

  const DwarfScopes& scopes_;
  TypeStyle style_;
};

}  // namespace

uint64_t dwarf_die_key(Dwarf_Die* die) {
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  uint64_t key = dwarf_dieoffset(die);
  if (dwarf_cu_info(die->cu, &version, &unit_type, nullptr, nullptr, nullptr, nullptr, nullptr) == 0 &&
      version < 5 && unit_type == DW_UT_type)
    key |= kDwarfTypesSectionBit;
  return key;
}

bool dwarf_flag_integrate(Dwarf_Die* die, unsigned attr) {
  Dwarf_Attribute a;
  bool flag = false;
  return dwarf_attr_integrate(die, attr, &a) && dwarf_formflag(&a, &flag) == 0 && flag;
}

bool dwarf_ref_integrate(Dwarf_Die* die, unsigned attr, Dwarf_Die* out) {
  Dwarf_Attribute a;
  if (!dwarf_attr_integrate(die, attr, &a)) return false;
  return dwarf_formref_die(&a, out) != nullptr;
}

void DwarfScopes::add(Dwarf_Die* scope, uint64_t end_key) {
  Scope s;
  s.start = dwarf_die_key(scope);
  s.end = end_key;
  Dwarf_Attribute a;
  Dwarf_Die spec;
  if (dwarf_attr(scope, DW_AT_specification, &a) && dwarf_formref_die(&a, &spec)) s.spec_key = dwarf_die_key(&spec);
  const char* n = attr_string(scope, DW_AT_name);
  if (n) {
    s.name = n;
  } else {
    s.name = dwarf_tag(scope) == DW_TAG_namespace ? "(anonymous namespace)" : "<anon>";
  }
  scopes_.push_back(std::move(s));
}

void DwarfScopes::finish() {
  // Sorted by start, outer before inner when two start together; then a
  // stack sweep finds each scope's parent (the innermost open one).
  std::sort(scopes_.begin(), scopes_.end(), [](const Scope& a, const Scope& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<int32_t> open;
  for (std::size_t i = 0; i < scopes_.size(); i++) {
    while (!open.empty() && scopes_[open.back()].end <= scopes_[i].start) open.pop_back();
    scopes_[i].parent = open.empty() ? -1 : open.back();
    open.push_back(static_cast<int32_t>(i));
  }
}

int DwarfScopes::enclosing(uint64_t key) const {
  // The last scope starting before `key` either holds it or is nested in the
  // ones that do: intervals of a tree never partly overlap.
  auto it = std::partition_point(scopes_.begin(), scopes_.end(), [&](const Scope& s) { return s.start < key; });
  int i = static_cast<int>(it - scopes_.begin()) - 1;
  while (i >= 0 && key >= scopes_[i].end) i = scopes_[i].parent;
  return i;
}

std::string DwarfScopes::qualified(int index, int depth) const {
  const Scope& s = scopes_[index];
  if (depth > kMaxDepth) return s.name;
  // `struct Outer::Inner { ... };` written outside Outer: its DIE sits beside
  // Outer and names it only through DW_AT_specification.
  std::string outer = s.spec_key ? prefix_of_key(s.spec_key, depth + 1)
                      : s.parent >= 0 ? qualified(s.parent, depth + 1)
                                      : std::string();
  return outer.empty() ? s.name : outer + "::" + s.name;
}

std::string DwarfScopes::prefix_of_key(uint64_t key, int depth) const {
  int i = enclosing(key);
  return i < 0 ? std::string() : qualified(i, depth);
}

std::string DwarfScopes::prefix_of(Dwarf_Die* die) const { return prefix_of_key(dwarf_die_key(die), 0); }

std::string DwarfScopes::qualified_name(Dwarf_Die* die) const {
  Dwarf_Die cur = *die;
  for (int hops = 0; hops < 8; hops++) {
    Dwarf_Attribute a;
    Dwarf_Die next;
    if (!dwarf_attr(&cur, DW_AT_specification, &a) && !dwarf_attr(&cur, DW_AT_abstract_origin, &a)) break;
    if (!dwarf_formref_die(&a, &next)) break;
    cur = next;
  }
  const char* n = dwarf_diename(&cur);
  if (!n) n = attr_string(die, DW_AT_name);
  if (!n) return "";
  std::string p = prefix_of(&cur);
  return p.empty() ? std::string(n) : p + "::" + n;
}

TypeStyle type_style_for_language(int dw_lang) {
  switch (dw_lang) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
    case DW_LANG_ObjC:
    case 0x2c:  // DW_LANG_C17 (DWARF 6), newer than some dwarf.h
      return {.c_tags = true};
    default:
      return {.c_tags = false};
  }
}

std::string dwarf_type_name(Dwarf_Die* type, const DwarfScopes& scopes, TypeStyle style) {
  return TypePrinter(scopes, style).full(type, 0);
}

std::string dwarf_type_of(Dwarf_Die* entity, const DwarfScopes& scopes, TypeStyle style, bool strip_top_cv) {
  return TypePrinter(scopes, style).type_of(entity, strip_top_cv, 0);
}

Dwarf_Die* dwarf_strip_cv(Dwarf_Die* type, Dwarf_Die* storage) {
  Dwarf_Die* cur = type;
  for (int i = 0; cur && i < kMaxDepth; i++) {
    int tag = dwarf_tag(cur);
    if (tag != DW_TAG_const_type && tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type) return cur;
    Dwarf_Die next;
    if (!dwarf_ref_integrate(cur, DW_AT_type, &next)) return nullptr;
    *storage = next;
    cur = storage;
  }
  return cur;
}

}  // namespace uprof
