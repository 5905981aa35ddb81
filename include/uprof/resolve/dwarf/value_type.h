// A value's type as the DWARF users need it: enough to print a value and to read
// the right bytes. Read from DWARF by param_location (`int` -> Signed, 4 bytes;
// `struct pair` -> Struct, 16 bytes, members a and b) and classified by the calling
// conventions in call_abi; it sits below both so neither includes the other.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace uprof {

// Enough of a type to print a value and to read the right bytes.
struct ValueType {
  enum class Kind : uint8_t { Signed, Unsigned, Bool, Char, Enum, Pointer, Float, Struct, Unknown } kind = Kind::Unknown;
  uint32_t size = 8;          // bytes (DW_AT_byte_size after typedefs and const/volatile)
  std::string name{};         // as declared: "int", "unsigned long", "enum color", "struct pair", "char*", "size_t"
  std::vector<std::pair<int64_t, std::string>> enumerators{}; // for Enum, in declaration order
  bool char_pointer = false;  // a Pointer to char, signed or unsigned char: printed as the string
  // For Struct: its direct members of 1, 2, 4 or 8 bytes that are integers,
  // bools, chars, enums or pointers (bit-fields, arrays and nested structs left out).
  struct Member {
    std::string name{};
    uint32_t offset = 0;
    uint32_t size = 0;
    Kind kind = Kind::Unknown;
  };
  std::vector<Member> members{};
};

}  // namespace uprof
