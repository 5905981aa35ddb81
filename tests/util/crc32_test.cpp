#include "uprof/util/crc32.h"

#include <gtest/gtest.h>

#include <string>

namespace uprof {
namespace {

TEST(Crc32, KnownVectors) {
  // The standard check value of CRC-32/ISO-HDLC.
  std::string s = "123456789";
  EXPECT_EQ(crc32_update(0, s.data(), s.size()), 0xCBF43926u);
  EXPECT_EQ(crc32_update(0, "", 0), 0u);
  // Incremental equals one-shot.
  uint32_t c = crc32_update(0, s.data(), 4);
  EXPECT_EQ(crc32_update(c, s.data() + 4, s.size() - 4), 0xCBF43926u);
}


// Eight bytes at a time must agree with the definition, one bit at a time, at every
// length and alignment.
TEST(Crc32, AgreesWithTheBitwiseDefinition) {
  auto bitwise = [](const unsigned char* p, std::size_t n) {
    uint32_t c = ~0u;
    for (std::size_t i = 0; i < n; i++) {
      c ^= p[i];
      for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
  };
  unsigned char buf[300];
  uint32_t x = 12345;
  for (auto& b : buf) b = static_cast<unsigned char>((x = x * 1103515245 + 12345) >> 16);
  for (std::size_t start = 0; start < 8; start++)
    for (std::size_t n = 0; n + start <= sizeof buf; n += 7)
      ASSERT_EQ(crc32_update(0, buf + start, n), bitwise(buf + start, n)) << start << "+" << n;
}

}  // namespace
}  // namespace uprof
