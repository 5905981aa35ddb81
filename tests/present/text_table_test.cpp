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

}  // namespace
}  // namespace uprof
