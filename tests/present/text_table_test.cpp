#include "uprof/present/text_table.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

TEST(TextTable, AlignsColumns) {
  TextTable t({{"FUNCTION"}, {"CALLS", Align::Right}, {"NOTE"}});
  t.add_row({"add", "1000000", "x"});
  t.add_row({"ns::Klass::method", "7", ""});
  EXPECT_EQ(t.render(),
            "FUNCTION             CALLS  NOTE\n"
            "add                1000000  x\n"
            "ns::Klass::method        7\n");
}

TEST(TextTable, AlignsNamesThatAreNotAscii) {
  TextTable t({{"FUNCTION", Align::Left}, {"CALLS", Align::Right}});
  t.add_row({"\xe5\x8a\xa0\xe7\xae\x97", "7"});  // 加算
  t.add_row({"gr\xc3\xb6\xc3\x9f" "e", "12"});
  t.add_row({"add", "3"});
  EXPECT_EQ(t.render(),
            "FUNCTION  CALLS\n"
            "\xe5\x8a\xa0\xe7\xae\x97          7\n"
            "gr\xc3\xb6\xc3\x9f" "e        12\n"
            "add           3\n");
}

}  // namespace
}  // namespace uprof
