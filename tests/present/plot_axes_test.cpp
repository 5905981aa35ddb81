#include "uprof/present/plot_axes.h"

#include <gtest/gtest.h>

namespace uprof {
namespace {

std::vector<std::string> labels(const std::vector<Tick>& ticks) {
  std::vector<std::string> out;
  for (const Tick& t : ticks) out.push_back(t.label);
  return out;
}

TEST(PlotAxes, DurationsWithTheirUnit) {
  EXPECT_EQ(plot_duration(3'414), "3.41µs");
  EXPECT_EQ(plot_duration(812), "812ns");
  EXPECT_EQ(plot_duration(12'000'000), "12.0ms");
  EXPECT_EQ(axis_duration(1e6), "1ms");
  EXPECT_EQ(axis_duration(2e7), "20ms");
  EXPECT_EQ(axis_duration(5e5), "500µs");
  EXPECT_EQ(axis_duration(2.5e3), "2.5µs");
  EXPECT_EQ(axis_duration(999.99e3), "1ms");
  EXPECT_EQ(axis_duration(1.5e9), "1.5s");
  EXPECT_EQ(axis_duration(50), "50ns");
  EXPECT_EQ(axis_count(950), "950");
  EXPECT_EQ(axis_count(1200), "1.2k");
  EXPECT_EQ(axis_count(5e6), "5M");
  EXPECT_EQ(coord(12.0), "12");
  EXPECT_EQ(coord(12.46), "12.5");
  EXPECT_EQ(coord(-0.01), "0");
}

TEST(PlotAxes, LogRangeGoesOutToOneTwoFive) {
  EXPECT_EQ(nice_log_range(1.05e6, 12e6), std::make_pair(1e6, 2e7));
  EXPECT_EQ(nice_log_range(1e6, 1e7), std::make_pair(1e6, 1e7));
  EXPECT_EQ(nice_log_range(3e3, 3e3), std::make_pair(2e3, 5e3));
  EXPECT_EQ(nice_log_range(1e3, 1e3), std::make_pair(5e2, 2e3));
  EXPECT_EQ(nice_log_range(0, 7), std::make_pair(1.0, 10.0));
}

TEST(PlotAxes, LogTicksLabelWhatFits) {
  // Few: all of 1-2-5 labelled.
  EXPECT_EQ(labels(log_ticks(1e6, 2e7, 8, axis_duration)),
            (std::vector<std::string>{"1ms", "2ms", "5ms", "10ms", "20ms"}));
  // Many: the powers of ten only; 2 and 5 stay as minor ticks.
  auto t = log_ticks(100, 2e9, 8, axis_duration);
  EXPECT_EQ(t.front().value, 100);
  std::vector<std::string> named;
  for (const auto& l : labels(t))
    if (!l.empty()) named.push_back(l);
  EXPECT_EQ(named, (std::vector<std::string>{"100ns", "1µs", "10µs", "100µs", "1ms", "10ms", "100ms", "1s"}));
  EXPECT_EQ(t.size(), 23u);
  // Too many powers of ten for the room: every other one.
  named.clear();
  for (const auto& l : labels(log_ticks(1, 1e10, 4, axis_duration)))
    if (!l.empty()) named.push_back(l);
  EXPECT_EQ(named, (std::vector<std::string>{"1ns", "1µs", "1ms", "1s"}));
}

TEST(PlotAxes, LinearTicksAtRoundSteps) {
  EXPECT_EQ(labels(linear_ticks(0, 37, 4, axis_count)), (std::vector<std::string>{"0", "10", "20", "30"}));
  EXPECT_EQ(labels(linear_ticks(0, 5e6, 4, axis_count)), (std::vector<std::string>{"0", "2M", "4M"}));
  EXPECT_EQ(labels(linear_ticks(0, 1.4e9, 3, axis_duration)), (std::vector<std::string>{"0ns", "500ms", "1s"}));
  EXPECT_EQ(labels(linear_ticks(3, 3, 4, axis_count)), (std::vector<std::string>{"3"}));
}

TEST(PlotAxes, AxesMapLinearlyAndByLogarithm) {
  const LinearAxis y{.lo = 0, .hi = 100, .p0 = 200, .p1 = 0};
  EXPECT_DOUBLE_EQ(y.at(25), 150);
  const LogAxis x{.lo = 1e3, .hi = 1e6, .p0 = 0, .p1 = 300};
  EXPECT_DOUBLE_EQ(x.at(1e3), 0);
  EXPECT_NEAR(x.at(1e4), 100, 1e-9);
  EXPECT_NEAR(x.at(1e6), 300, 1e-9);
}

}  // namespace
}  // namespace uprof
