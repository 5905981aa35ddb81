#include "uprof/util/byte_size.h"

#include <charconv>

namespace uprof {

std::optional<uint64_t> parse_byte_size(std::string_view text) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end == text.data()) return std::nullopt;
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  unsigned shift = 0;
  if (unit.size() > 1) return std::nullopt;
  if (!unit.empty()) {
    switch (unit[0]) {
      case 'B': case 'b': shift = 0; break;
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      default: return std::nullopt;
    }
  }
  if (n >= (uint64_t{1} << (63 - shift))) return std::nullopt;
  return n << shift;
}

}  // namespace uprof
