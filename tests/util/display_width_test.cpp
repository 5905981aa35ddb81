#include "uprof/util/display_width.h"

#include <gtest/gtest.h>


namespace uprof {
namespace {

TEST(DisplayWidth, CountsColumnsNotBytes) {
  EXPECT_EQ(display_width(""), 0u);
  EXPECT_EQ(display_width("add"), 3u);
  EXPECT_EQ(display_width("gr\xc3\xb6\xc3\x9f" "e"), 5u);           // größe, 7 bytes
  EXPECT_EQ(display_width("\xe5\x8a\xa0\xe7\xae\x97"), 4u);          // 加算: two wide ideographs
  EXPECT_EQ(display_width("\xf0\x9f\x94\xa5"), 2u);                  // an emoji
  EXPECT_EQ(display_width("e\xcc\x81"), 1u);                         // e + combining acute
  EXPECT_EQ(display_width("\xff\xfe"), 2u);                          // not UTF-8: a column a byte
  EXPECT_EQ(display_width("a\xe5\x8a"), 3u);                         // cut short: its bytes count
}

}  // namespace
}  // namespace uprof
