#include "uprof/util/crc32.h"

#include <array>
#include <bit>
#include <cstring>

namespace uprof {
namespace {

// kTables[0] is the byte-at-a-time table; kTables[k][b] is the CRC of byte b followed
// by k zero bytes, so that eight bytes are folded in with eight lookups that do not
// wait on each other ("slicing by 8"): the data file's sections are checksummed as
// they are written, and one lookup chain per byte was an eighth of the drain's time.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (std::size_t k = 1; k < 8; k++) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  return t;
}
constexpr Tables kTables = make_tables();

}  // namespace

uint32_t crc32_update(uint32_t crc, const void* data, std::size_t n) {
  auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  static_assert(std::endian::native == std::endian::little, "the 8-byte fold below reads little-endian words");
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;
    crc = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^ kTables[4][lo >> 24] ^
          kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^ kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
  }
  for (; n > 0; n--, p++) crc = kTables[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return ~crc;
}

}  // namespace uprof
