#include "uprof/resolve/dwarf/source_lines.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

constexpr const char* kLines = "/src/tests/fixtures/lines.c";

LineRow row(uint64_t addr, uint32_t line, bool stmt = true, const char* file = kLines) {
  return {.addr = addr, .file = file, .line = line, .is_stmt = stmt, .end_sequence = false};
}
LineRow end(uint64_t addr) { return {.addr = addr, .file = kLines, .line = 0, .is_stmt = true, .end_sequence = true}; }

// A loop as gcc -O0 lays it out: the condition (line 12) after the body, a view row
// repeating line 13, a non-statement row, an inlined header's line.
const std::vector<LineRow> kRows = {
    row(0x1100, 10), row(0x1108, 12), row(0x1110, 13), row(0x1114, 13), row(0x1118, 13, false),
    row(0x1120, 12), row(0x1128, 5, true, "/src/tests/fixtures/util.h"), row(0x1130, 16), end(0x1140),
    row(0x2000, 13), end(0x2008),
};

TEST(SourceLines, PathSuffixesMatchAtASlash) {
  EXPECT_TRUE(source_path_matches(kLines, "lines.c"));
  EXPECT_TRUE(source_path_matches(kLines, "fixtures/lines.c"));
  EXPECT_TRUE(source_path_matches(kLines, "./fixtures/lines.c"));
  EXPECT_TRUE(source_path_matches(kLines, kLines));
  EXPECT_FALSE(source_path_matches(kLines, "s.c"));
  EXPECT_FALSE(source_path_matches(kLines, "xfixtures/lines.c"));
}

TEST(SourceLines, EachStatementStartOfTheLine) {
  auto s = pick_line_sites(kRows, "lines.c", 12);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->file, kLines);
  EXPECT_EQ(s->addresses, (std::vector<uint64_t>{0x1108, 0x1120}));
  // A run of rows of line 13 is one site; another sequence's row is another.
  auto body = pick_line_sites(kRows, "fixtures/lines.c", 13);
  ASSERT_TRUE(body);
  EXPECT_EQ(body->addresses, (std::vector<uint64_t>{0x1110, 0x2000}));
  auto header = pick_line_sites(kRows, "util.h", 5);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->addresses, (std::vector<uint64_t>{0x1128}));
}

TEST(SourceLines, OnlyInsideRanges) {
  auto s = pick_line_sites(kRows, "lines.c", 13, {{0x1000, 0x1140}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->addresses, (std::vector<uint64_t>{0x1110}));
}

TEST(SourceLines, ErrorsSayWhatIsThere) {
  EXPECT_EQ(pick_line_sites(kRows, "lines.c", 9999).error().message,
            "no code at that line; nearest lines with code: 16");
  EXPECT_EQ(pick_line_sites(kRows, "lines.c", 11).error().message,
            "no code at that line; nearest lines with code: 10, 12");
  EXPECT_EQ(pick_line_sites(kRows, "nope.c", 1).error().message,
            "no source file 'nope.c' in the line table (its files: lines.c, util.h)");
  std::vector<LineRow> two = kRows;
  two.push_back(row(0x3000, 1, true, "/src/a/util.h"));
  EXPECT_EQ(pick_line_sites(two, "util.h", 5).error().message,
            "'util.h' is ambiguous: /src/a/util.h, /src/tests/fixtures/util.h (name one by more of its path)");
  EXPECT_TRUE(pick_line_sites(two, "fixtures/util.h", 5));
}

}  // namespace
}  // namespace uprof
