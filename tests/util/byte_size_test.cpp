#include "uprof/util/byte_size.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

TEST(ByteSize, NumbersWithPerfsUnits) {
  EXPECT_EQ(parse_byte_size("4096"), 4096u);
  EXPECT_EQ(parse_byte_size("100B"), 100u);
  EXPECT_EQ(parse_byte_size("512k"), 512u << 10);
  EXPECT_EQ(parse_byte_size("32M"), 32u << 20);
  EXPECT_EQ(parse_byte_size("2g"), uint64_t{2} << 30);
  EXPECT_EQ(parse_byte_size("0"), 0u);
}

TEST(ByteSize, AnythingElseIsRefused) {
  for (const char* bad : {"", "M", "-1", "1.5G", "32MB", "32 M", "x", "8T", "99999999999999999999"})
    EXPECT_EQ(parse_byte_size(bad), std::nullopt) << bad;
  EXPECT_EQ(parse_byte_size("8589934592G"), std::nullopt);  // 2^33 GiB: past 2^63 bytes
}

}  // namespace
}  // namespace uprof
