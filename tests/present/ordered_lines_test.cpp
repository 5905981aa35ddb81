#include "uprof/present/ordered_lines.h"

#include <gtest/gtest.h>

#include <sstream>

namespace uprof {
namespace {

// An outer call's line is known after its inner call's, but shows an earlier time:
// nothing is written past the watermark, and what is written is in time order, lines
// of one time in the order they came.
TEST(OrderedLines, ReleasesUpToTheWatermarkInTimeOrder) {
  OrderedLines lines;
  lines.push(30, "inner\n");
  lines.push(10, "outer\n");
  lines.push(30, "inner, same time\n");
  EXPECT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines.earliest(), 10u);
  std::ostringstream out;
  lines.release_through(25, out);
  EXPECT_EQ(out.str(), "outer\n");
  lines.release_through(29, out);
  EXPECT_EQ(out.str(), "outer\n");
  lines.push(40, "last\n");
  lines.release_through(30, out);
  EXPECT_EQ(out.str(), "outer\ninner\ninner, same time\n");
  lines.release_all(out);
  EXPECT_EQ(out.str(), "outer\ninner\ninner, same time\nlast\n");
  EXPECT_EQ(lines.size(), 0u);
  EXPECT_FALSE(lines.earliest().has_value());
}

}  // namespace
}  // namespace uprof
