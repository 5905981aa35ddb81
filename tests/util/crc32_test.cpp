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

}  // namespace
}  // namespace uprof
