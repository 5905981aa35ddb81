// The functions that DWARF describes in one ELF file (the binary itself or its
// separate debug file), with their C/C++ signatures, found by entry address or
// by an address inside them. `uprof probe --list` prints from it:
//   0x1160  int add(int a, int b)
//   0x11c0  int ns::Klass::method(ns::Klass* this, double x)
// Every function and parameter keeps its DIE offset (and the function its CU)
// so later stages can go back to the DIE through dwarf() for what is not
// indexed here, such as parameter locations.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "uprof/util/result.h"

typedef struct Elf Elf;
typedef struct Dwarf Dwarf;

namespace uprof {

struct DwarfParam {
  std::string name;         // "" for an unnamed parameter (`int main(int argc, char**)`)
  std::string type;         // top-level const/volatile dropped: `this` is "ns::Klass*"
  uint64_t die_offset = 0;  // the DW_TAG_formal_parameter in .debug_info
  bool artificial = false;  // made by the compiler (C++ `this`), DW_AT_artificial
};

struct DwarfFunction {
  uint64_t entry = 0;           // entry pc (DW_AT_entry_pc or low_pc), a link-time virtual address
  uint64_t low = 0, high = 0;   // [low, high) of the main range (the one holding entry) when known
  // Every range of code, main range first: gcc -O2 moves unlikely paths to a
  // separate "add.cold" range, usually at a lower address.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  std::string name;             // qualified for C++: "ns::Klass::method"
  std::string linkage_name;     // DW_AT_linkage_name when present ("_ZN2ns5Klass6methodEi")
  std::string return_type;      // "void" when none
  std::vector<DwarfParam> params;
  bool variadic = false;
  // False for functions written in assembly: gas describes where they are
  // but not their parameters, so `params` being empty means nothing.
  bool params_known = true;
  uint64_t die_offset = 0;      // the DW_TAG_subprogram holding the code
  uint64_t cu_offset = 0;       // its compile unit's DIE

  // "int add(int a, int b)", "void f(int x, ...)", "int main(int argc, char**)",
  // and for assembly "? munmap(?)".
  std::string signature() const;
};

class DwarfIndex {
 public:
  // Reads every unit of `elf`, which must stay open while the index lives. A
  // file without DWARF gives an empty index, not an error; corrupt DWARF gives
  // an Error naming `path_for_messages`.
  static Result<DwarfIndex> build(Elf* elf, const std::string& path_for_messages);

  DwarfIndex();  // empty
  DwarfIndex(DwarfIndex&&) noexcept;
  DwarfIndex& operator=(DwarfIndex&&) noexcept;
  DwarfIndex(const DwarfIndex&) = delete;
  DwarfIndex& operator=(const DwarfIndex&) = delete;
  ~DwarfIndex();

  // The function whose entry is `addr`; the first by DIE order if several
  // share it (identical code folded together).
  const DwarfFunction* at_entry(uint64_t addr) const;
  // The function one of whose ranges holds `addr` (the narrowest, should
  // ranges overlap).
  const DwarfFunction* containing(uint64_t addr) const;
  // Every function with this qualified name: a static `helper` may exist once
  // per file it was written in, an overloaded method once per overload.
  std::vector<const DwarfFunction*> named(std::string_view qualified_name) const;

  std::size_t size() const { return functions_.size(); }
  bool empty() const { return functions_.empty(); }
  // Sorted by entry address.
  const std::vector<DwarfFunction>& functions() const { return functions_; }

  // The libdw handle the offsets above refer to (dwarf_offdie); nullptr when
  // the file has no DWARF.
  Dwarf* dwarf() const { return dwarf_.get(); }

 private:
  struct DwarfEnd {
    void operator()(Dwarf* d) const;
  };
  // One range of one function, for containing().
  struct Span {
    uint64_t low = 0, high = 0;
    uint32_t function = 0;
  };
  void finish();  // sorts functions_ and builds spans_

  std::unique_ptr<Dwarf, DwarfEnd> dwarf_;
  std::vector<DwarfFunction> functions_;
  std::vector<Span> spans_;                // sorted by low
  std::vector<uint64_t> spans_max_high_;   // max high of spans_[0..i]
};

}  // namespace uprof
