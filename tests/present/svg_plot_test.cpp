// The SVG plots and the page frame, from hand-made histograms and timelines: what is
// drawn must be what was given, readable from the markup's data-* attributes.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "uprof/present/html_page.h"
#include "uprof/present/markup.h"
#include "uprof/present/plot_axes.h"
#include "uprof/present/svg_histogram.h"
#include "uprof/present/svg_timeline.h"

namespace uprof {
namespace {

struct Bar {
  uint64_t lo, hi, count;
};

std::vector<Bar> bars(const std::string& svg) {
  std::vector<Bar> out;
  static const std::regex re(R"re(<rect class="bar[^"]*" data-lo-ns="(\d+)" data-hi-ns="(\d+)" data-count="(\d+)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back(Bar{std::stoull((*it)[1]), std::stoull((*it)[2]), std::stoull((*it)[3])});
  return out;
}

std::size_t count_of(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

HistogramPlot plot_of(const LatencyHistogram& h) {
  LogBins bins = log_bins(h, LogScale(8));
  const auto range = histogram_range(bins);
  return HistogramPlot{.series = {HistSeries{.bins = std::move(bins), .name = {}, .css_class = {}}},
                       .markers = {{"p50", h.percentile(50)}, {"p99.9", h.percentile(99.9)}},
                       .lo_ns = range.first,
                       .hi_ns = range.second,
                       .label = "latency of <f>",
                       .attributes = "data-function=\"f\""};
}

TEST(SvgHistogram, BarsCarryTheCountsTheyDraw) {
  LatencyHistogram h;
  h.record(1'000'000, 30);
  h.record(1'200'000, 5);
  h.record(10'000'000, 10);
  const std::string svg = histogram_svg(plot_of(h));
  const auto b = bars(svg);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].count, 30u);
  EXPECT_EQ(b[1].count, 5u);
  EXPECT_EQ(b[2].count, 10u);
  EXPECT_LE(b[2].lo, 10'000'000u);
  EXPECT_GT(b[2].hi, 10'000'000u);
  // Two modes: between them a stretch with no bar.
  EXPECT_LT(b[1].hi, b[2].lo);
  // Percentiles marked where they are, named in CSS-safe classes.
  EXPECT_NE(svg.find("data-name=\"p50\" data-ns=\"" + std::to_string(h.percentile(50)) + "\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"marker m-p99_9\""), std::string::npos);
  // Its tooltip and label are escaped; its extra attributes are there.
  EXPECT_NE(svg.find("aria-label=\"latency of &lt;f&gt;\""), std::string::npos);
  EXPECT_NE(svg.find("data-function=\"f\""), std::string::npos);
  EXPECT_NE(svg.find("<title>[962µs, 1.05ms): 30 calls</title>"), std::string::npos) << svg.substr(0, 3000);
  // The time axis holds every bar, and says its unit in every label.
  EXPECT_NE(svg.find(">500µs</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1ms</text>"), std::string::npos);
  EXPECT_NE(svg.find(">10ms</text>"), std::string::npos);
  EXPECT_NE(svg.find(">latency (log scale)</text>"), std::string::npos);
}

TEST(SvgHistogram, ZerosGetABarOfTheirOwnAndTinyCountsShow) {
  LatencyHistogram h;
  h.record(0, 3);
  h.record(5'000, 1'000'000);
  h.record(80'000, 1);
  const std::string svg = histogram_svg(plot_of(h));
  EXPECT_NE(svg.find("<rect class=\"bar zero\" data-lo-ns=\"0\" data-hi-ns=\"0\" data-count=\"3\""), std::string::npos);
  EXPECT_NE(svg.find(">0</text>"), std::string::npos);
  // The one slow call is drawn at least 2px high beside a million.
  static const std::regex one(R"re(data-count="1" x="[0-9.]+" y="[0-9.]+" width="[0-9.]+" height="([0-9.]+)")re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, one));
  EXPECT_GE(std::stod(m[1]), 2.0);
}

TEST(SvgHistogram, ASecondSeriesIsAnOutline) {
  LatencyHistogram a, b;
  a.record(1000, 10);
  b.record(2000, 10);
  HistogramPlot p = plot_of(a);
  p.series.push_back(HistSeries{.bins = log_bins(b, LogScale(8)), .name = "after", .css_class = "b"});
  p.hi_ns = 5000;
  const std::string svg = histogram_svg(p);
  EXPECT_EQ(bars(svg).size(), 1u);
  EXPECT_EQ(count_of(svg, "<path class=\"outline b\""), 1u);
}

TEST(SvgTimeline, DotsWhenEveryCallWasKept) {
  CallTimeline t{TimelineLimits{}};
  for (uint64_t i = 0; i < 40; ++i)
    t.add(TimedCall{.time = i * 10'000'000, .duration = i % 4 == 3 ? uint64_t{10'000'000} : uint64_t{1'000'000}, .tid = 9});
  TimelinePlot p{.span_ns = 400'000'000, .lo_ns = 1e6, .hi_ns = 2e7, .points = t.kept(), .grid = t.grid(),
                 .markers = {{"p50", 1'000'000}}, .label = "over time", .attributes = {}};
  const std::string svg = timeline_svg(p);
  EXPECT_NE(svg.find("data-mode=\"points\""), std::string::npos);
  EXPECT_EQ(count_of(svg, "<circle class=\"pt\""), 40u);
  EXPECT_EQ(count_of(svg, "data-ns=\"10000000\""), 10u);
  EXPECT_NE(svg.find("<title>at 300ms: 1.00ms, thread 9</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">time since the recording started</text>"), std::string::npos);
}

TEST(SvgTimeline, AHeatStripCountsEveryCall) {
  CallTimeline t(TimelineLimits{.exact_calls = 100, .outliers = 5, .columns = 50, .rows_per_octave = 4});
  for (uint64_t i = 0; i < 10'000; ++i) t.add(TimedCall{.time = i * 100'000, .duration = 2'000 + (i % 7) * 300, .tid = 1});
  TimelinePlot p{.span_ns = 1'000'000'000, .lo_ns = 1e3, .hi_ns = 5e3, .points = t.kept(), .grid = t.grid(),
                 .markers = {}, .label = "over time", .attributes = {}};
  const std::string svg = timeline_svg(p);
  EXPECT_NE(svg.find("data-mode=\"heat\""), std::string::npos);
  uint64_t cells = 0;
  static const std::regex re(R"re(<rect class="cell"[^>]* data-count="(\d+)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    cells += std::stoull((*it)[1]);
  EXPECT_EQ(cells, 10'000u);
  EXPECT_EQ(count_of(svg, "<circle class=\"pt outlier\""), 5u);
}

TEST(HeatColour, LightForFewDarkForMany) {
  EXPECT_EQ(heat_colour(1, 1), "#08306b");
  EXPECT_EQ(heat_colour(0, 1000), "#deebf7");
  EXPECT_EQ(heat_colour(1000, 1000), "#08306b");
}

TEST(HtmlPage, ForbidsEverythingFromOutside) {
  const std::string page = html_page("a <b>", "<main>x</main>");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"), std::string::npos);
  EXPECT_NE(page.find("<title>a &lt;b&gt;</title>"), std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
}

TEST(HtmlPage, TablesAlignNumbers) {
  HtmlTable t{.columns = {{"name", false}, {"calls", true}}, .rows = {{"<code>f</code>", "3"}}, .css_class = "x"};
  EXPECT_EQ(html_table(t),
            "<table class=\"x\"><thead><tr><th>name</th><th class=\"num\">calls</th></tr></thead><tbody><tr><td><code>f</code></td>"
            "<td class=\"num\">3</td></tr></tbody></table>");
  EXPECT_EQ(escape_markup("a<b & \"c\" 'd'"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;");
  EXPECT_EQ(css_name("p99.9"), "p99_9");
}

}  // namespace
}  // namespace uprof
