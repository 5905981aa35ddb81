#include "uprof/analyse/duration_format.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

TEST(DurationFormat, Table) {
  const struct {
    uint64_t ns;
    const char* text;
  } cases[] = {
      {0, "0ns"},
      {1, "1ns"},
      {812, "812ns"},
      {999, "999ns"},
      {1'000, "1.00us"},
      {3'410, "3.41us"},
      {3'414, "3.41us"},
      {3'415, "3.42us"},          // half up
      {9'994, "9.99us"},
      {9'995, "10.0us"},          // rounding reaches the next decade
      {99'950, "100us"},
      {812'000, "812us"},
      {999'499, "999us"},
      {999'500, "1.00ms"},        // not "1000us"
      {999'999, "1.00ms"},
      {12'000'000, "12.0ms"},
      {12'340'000, "12.3ms"},
      {999'999'999, "1.00s"},
      {1'520'000'000, "1.52s"},
      {60'000'000'000, "60.0s"},
      {1'520'000'000'000, "1520s"},  // no minutes: seconds compare at a glance
      {UINT64_MAX, "18446744074s"},
  };
  for (const auto& c : cases) EXPECT_EQ(format_duration(c.ns), c.text) << c.ns;
}

TEST(DurationFormat, BucketLabels) {
  EXPECT_EQ(format_bucket_label(256, 512), "[256ns, 512ns)");
  EXPECT_EQ(format_bucket_label(512, 1024), "[512ns, 1.02us)");
  EXPECT_EQ(format_bucket_label(100'000, 200'000), "[100us, 200us)");
  EXPECT_EQ(format_underflow_label(100'000), "(..., 100us)");
  EXPECT_EQ(format_overflow_label(1'000'000), "[1.00ms, ...)");
}

TEST(DurationFormat, Bars) {
  EXPECT_EQ(format_bar(4, 10, 10), "|@@@@      |");
  EXPECT_EQ(format_bar(10, 10, 10), "|@@@@@@@@@@|");
  EXPECT_EQ(format_bar(0, 10, 10), "|          |");
  EXPECT_EQ(format_bar(3, 1'000'000, 10), "|.         |");  // a tail stays visible, thinner
  EXPECT_EQ(format_bar(1, 321, 40), "|." + std::string(39, ' ') + "|");   // not as wide as 321
  EXPECT_EQ(format_bar(9, 321, 40), "|@" + std::string(39, ' ') + "|");   // one '@' is 1/40 of the largest
  EXPECT_EQ(format_bar(0, 0, 3), "|   |");
  EXPECT_EQ(format_bar(UINT64_MAX, UINT64_MAX, 4), "|@@@@|");
}

TEST(DurationFormat, ParsesUnits) {
  EXPECT_EQ(*parse_duration("250"), 250u);
  EXPECT_EQ(*parse_duration("250ns"), 250u);
  EXPECT_EQ(*parse_duration("3.5us"), 3'500u);
  EXPECT_EQ(*parse_duration("12ms"), 12'000'000u);
  EXPECT_EQ(*parse_duration("1.5s"), 1'500'000'000u);
  EXPECT_EQ(*parse_duration("0.000000001s"), 1u);
  EXPECT_FALSE(parse_duration("1.5ns").ok());
  EXPECT_FALSE(parse_duration("").ok());
  EXPECT_FALSE(parse_duration("-1ms").ok());
  EXPECT_FALSE(parse_duration("99999999999999s").ok());
  const auto bad = parse_duration("3xs");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "duration: '3xs': unknown unit 'xs' (e.g. 250, 250ns, 3.5us, 12ms, 1.5s)");
}

}  // namespace
}  // namespace uprof
