#include "uprof/util/display_width.h"

#include <cstdint>

namespace uprof {
namespace {

// One code point at s[i]; `len` gets its byte length (1 for a byte that starts no
// valid sequence, which then stands for itself).
char32_t decode(std::string_view s, std::size_t i, std::size_t& len) {
  const auto b = static_cast<unsigned char>(s[i]);
  len = 1;
  int more = 0;
  char32_t cp = b;
  if (b >= 0xf0 && b < 0xf8) more = 3, cp = b & 0x07;
  else if (b >= 0xe0) more = 2, cp = b & 0x0f;
  else if (b >= 0xc2 && b < 0xe0) more = 1, cp = b & 0x1f;
  else return b;
  if (b >= 0xf8) return b;
  if (i + static_cast<std::size_t>(more) >= s.size()) return b;  // cut short
  for (int k = 1; k <= more; ++k) {
    const auto c = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
    if ((c & 0xc0) != 0x80) return b;
    cp = cp << 6 | (c & 0x3f);
  }
  len = static_cast<std::size_t>(more) + 1;
  return cp;
}

int columns(char32_t cp) {
  if ((cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
  if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f) ||
      (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) ||
      (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
      (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd))
    return 2;
  return 1;
}

}  // namespace

std::size_t display_width(std::string_view s) {
  std::size_t w = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 1;
    w += static_cast<std::size_t>(columns(decode(s, i, len)));
    i += len;
  }
  return w;
}

}  // namespace uprof
