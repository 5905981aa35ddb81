// How many terminal columns a UTF-8 string takes, for aligned tables: a code point
// is one column, an East Asian wide or fullwidth one (CJK, Hangul, most emoji) two, a
// combining mark none. Bytes that are not UTF-8 count one column each.
//   display_width("add")        3
//   display_width("größe")      5   (7 bytes)
//   display_width("加算")       4   (6 bytes)
#pragma once

#include <cstddef>
#include <string_view>

namespace uprof {

std::size_t display_width(std::string_view s);

}  // namespace uprof
