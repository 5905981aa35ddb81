#include "uprof/present/json_writer.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

TEST(JsonEscape, ControlCharactersAndQuotes) {
  EXPECT_EQ(json_escape("a\"b\\c\n\t\x01"), "\"a\\\"b\\\\c\\n\\t\\u0001\"");
}

// Well-formed UTF-8 passes as it is; every byte that is not part of a well-formed
// sequence becomes U+FFFD, so the document stays valid JSON (RFC 8259: UTF-8).
TEST(JsonEscape, OnlyWellFormedUtf8PassesThrough) {
  EXPECT_EQ(json_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  EXPECT_EQ(json_escape("\xff"), "\"\\ufffd\"");
  EXPECT_EQ(json_escape("x\xe2\x82"), "\"x\\ufffd\\ufffd\"");      // a character cut at --string-size
  EXPECT_EQ(json_escape("\xc0\xaf"), "\"\\ufffd\\ufffd\"");         // overlong '/'
  EXPECT_EQ(json_escape("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
  EXPECT_EQ(json_escape("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // past U+10FFFF
  EXPECT_EQ(json_escape("\xe2\x82\xac\x80"), "\"\xe2\x82\xac\\ufffd\"");  // a stray continuation byte
}

}  // namespace
}  // namespace uprof
