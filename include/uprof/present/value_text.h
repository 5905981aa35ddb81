// Captured values as a person reads them. Raw values print as numbers (signed,
// unsigned or hex, as the spec typed them); typed DWARF values by their type:
//
//   int a          -> 5            bool b        -> true
//   enum color c   -> BLUE         char c        -> 'A'
//   long* p        -> 0x7ffc1000   double d      -> 2.5
//   struct pair p  -> {x=5, y=-5}  (over two slots, rdi:rsi)
//   a value DWARF cannot place     -> <optimized out> / <unavailable>
//   a slot the sample did not hold -> <unavailable>; behind a bad pointer -> <unreadable>
//   char* s        -> "key17"      (a string cut at --string-size: "abc"...)
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "uprof/model/recording.h"

namespace uprof {

// A string as C would write it: "a\"b\n\x01"; `cut` adds "..." after the quote.
std::string quoted(std::string_view bytes, bool cut);

// One scalar slot, already normalised to its size and signedness (a String: its
// StringPool id, printed quoted).
std::string format_scalar(uint64_t normalized, const ValueSpec& spec);

// A normalised value in a report's statistics (min, max, a --by group's value): as
// format_scalar prints it, e.g. "-5", "0x7ffc1000", "BLUE".
std::string format_value(uint64_t normalized, const ValueSpec& spec);

// Whether min/max/frequent values mean something for this slot: not a
// struct, not a struct's continuation, not a value DWARF could not place.
bool has_value_stats(const ValueSpec& spec);

struct ValueText {
  std::string name;
  std::string text;
  std::size_t slots = 1;    // slots the value spans (a struct's continuation slots)
};

// The value whose first slot is `first`: reads its continuation slots too.
// `missing` has bit i set when slot i was not read (Event::missing).
ValueText value_text(std::span<const ValueSpec> specs, std::span<const uint64_t> values, uint32_t missing,
                     std::size_t first);

// "a=5, b=2" for the slots [first, first + count).
std::string values_list(std::span<const ValueSpec> specs, std::span<const uint64_t> values, uint32_t missing,
                        std::size_t first, std::size_t count);

}  // namespace uprof
