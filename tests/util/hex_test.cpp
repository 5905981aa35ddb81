#include "uprof/util/hex.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace uprof {
namespace {

TEST(Hex, LowerCaseWithoutPadding) {
  EXPECT_EQ(hex(0x1139), "0x1139");
  EXPECT_EQ(hex(0), "0x0");
  EXPECT_EQ(hex(0xABCDEF), "0xabcdef");
  EXPECT_EQ(hex(0x10), "0x10");
  EXPECT_EQ(hex(UINT64_MAX), "0xffffffffffffffff");
}

}  // namespace
}  // namespace uprof
