// uprof diff's text, JSON and HTML on report models built by hand: what the header
// says about the runs, the rows a person reads, the legend naming the method, the JSON
// against docs/diff.schema.json, and an HTML page that needs nothing from outside.
#include "uprof/present/diff_formats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>

#include "analyse/report_builders.h"
#include "support/test_support.h"

namespace uprof {
namespace {

using test::calls;
using test::model;

// A: x86_64; B: arm64 on another host, kernel and engine, with lost events and a
// different build of the program. parse got 50% slower, steady did not move, gone and
// fresh are on one side only, main only counts hits.
DiffModel sample_diff(const DiffOptions& o = {}) {
  ReportModel a = model({{.name = "parse", .latencies = calls(2000, 1e6), .build_id = "1111aaaa"},
                         {.name = "steady", .latencies = calls(2000, 4e6), .build_id = "1111aaaa"},
                         {.name = "operator<", .latencies = calls(3, 1e3), .build_id = "1111aaaa"},
                         {.name = "gone", .latencies = calls(50, 1e3), .build_id = "1111aaaa"},
                         {.name = "main", .paired = false, .hits = 1, .build_id = "1111aaaa"}});
  ReportModel b = model({{.name = "parse", .latencies = calls(2000, 1.5e6), .build_id = "2222bbbb"},
                         {.name = "steady", .latencies = calls(2000, 4e6), .build_id = "2222bbbb"},
                         {.name = "operator<", .latencies = calls(3, 1e3), .build_id = "2222bbbb"},
                         {.name = "fresh", .latencies = calls(50, 1e3), .build_id = "2222bbbb"},
                         {.name = "main", .paired = false, .hits = 1, .build_id = "2222bbbb"}});
  a.path = "before.data";
  b.path = "after.data";
  a.meta.command = {"./app", "--n", "3"};
  b.meta.command = {"./app", "--n", "3"};
  a.meta.hostname = "ci-1";
  b.meta.hostname = "pi";
  a.meta.kernel = "6.1.0";
  b.meta.kernel = "6.6.0";
  a.meta.engine = "bpf";
  b.meta.engine = "perf";
  b.meta.arch = Arch::Arm64;
  a.samples = 8106;
  b.samples = 8106;
  b.lost = 12;
  return diff_reports(std::move(a), std::move(b), o);
}

// The table row of `label` in the text output.
std::string row_of(const std::string& text, const std::string& label) {
  std::size_t at = text.find("\n" + label + " ");
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(DiffFormats, TextHeaderSaysWhatDiffersBetweenTheRuns) {
  const std::string t = render_text_diff(sample_diff());
  EXPECT_NE(t.find("uprof diff: A = before.data, B = after.data\n"), std::string::npos) << t;
  EXPECT_NE(t.find("A:        ./app --n 3\n"), std::string::npos) << t;
  EXPECT_NE(t.find("app: different builds (build-id 1111aaaa in A, 2222bbbb in B)"), std::string::npos) << t;
  EXPECT_NE(t.find("different architectures: A is x86_64, B is arm64"), std::string::npos) << t;
  EXPECT_NE(t.find("different hosts: ci-1 in A, pi in B"), std::string::npos) << t;
  EXPECT_NE(t.find("different kernels: 6.1.0 in A, 6.6.0 in B"), std::string::npos) << t;
  EXPECT_NE(t.find("different engines: bpf in A, perf in B"), std::string::npos) << t;
  EXPECT_NE(t.find("B lost 12 events"), std::string::npos) << t;
  EXPECT_EQ(t.find("A lost"), std::string::npos) << t;
}

TEST(DiffFormats, TextRowsReadAtAGlance) {
  const std::string t = render_text_diff(sample_diff());
  // What changed comes first, right under the header line.
  const std::string first = t.substr(t.find("FUNCTION"));
  EXPECT_EQ(first.substr(first.find('\n') + 1, 6), "parse ") << t;
  const std::string parse = row_of(t, "parse");
  EXPECT_TRUE(std::regex_search(parse, std::regex(R"(2,000 -> 2,000 +1\.00ms -> 1\.50ms +x1\.50 slower )"))) << parse;
  // p50, p90 and p99 all moved by half: 2,000 calls bound each interval.
  const std::regex slower("x1\\.50 slower");
  EXPECT_EQ(std::distance(std::sregex_iterator(parse.begin(), parse.end(), slower), std::sregex_iterator()), 3) << parse;
  EXPECT_NE(row_of(t, "steady").find("x1.00 ~"), std::string::npos) << t;
  // Three calls a side: no interval at 99%.
  EXPECT_NE(row_of(t, "operator<").find("x1.00 ?"), std::string::npos) << t;
  EXPECT_TRUE(std::regex_search(row_of(t, "gone"), std::regex(R"(^gone \(only in A\) +50 -> - )"))) << t;
  EXPECT_TRUE(std::regex_search(row_of(t, "fresh"), std::regex(R"(^fresh \(only in B\) +- -> 50 )"))) << t;
  // Hits only: calls, no latencies.
  EXPECT_TRUE(std::regex_search(row_of(t, "main"), std::regex(R"(^main +1 -> 1 +- -> - +- )"))) << t;
}

TEST(DiffFormats, LegendNamesTheMethodAndItsConfidence) {
  const std::string t = render_text_diff(sample_diff());
  std::string flat = std::regex_replace(t, std::regex("\n"), " ");
  EXPECT_NE(flat.find("the whole 99% confidence interval of B/A lies above x1.05 (below x0.95; --min-shift 5%"),
            std::string::npos)
      << t;
  EXPECT_NE(flat.find("distribution-free confidence intervals on each quantile from order statistics"), std::string::npos) << t;
  const DiffModel d95 = sample_diff(DiffOptions{.shift = {.confidence = 0.95, .min_shift = 0.1}});
  EXPECT_NE(diff_method(d95.options.shift).find("whole 95% confidence interval of B/A lies above x1.10"), std::string::npos);
}

TEST(DiffFormats, RatiosForPeople) {
  EXPECT_EQ(format_ratio(1.4999), "x1.50");
  EXPECT_EQ(format_ratio(0.98), "x0.98");
  EXPECT_EQ(format_ratio(12.34), "x12.3");
  EXPECT_EQ(format_ratio(250.4), "x250");
  EXPECT_EQ(format_ratio(INFINITY), "-");
}

TEST(DiffFormats, JsonFollowsItsSchema) {
  const DiffModel d = sample_diff();
  test::TempDir dir;
  for (const auto& fail : {std::optional<double>{}, std::optional<double>{20}}) {
    const std::string path = dir.file("d.json");
    std::ofstream(path) << render_json_diff(d, fail);
    auto v = test::run_shell("/usr/bin/python3 " + std::string(UPROF_SOURCE_DIR) + "/scripts/validate_json.py " +
                             std::string(UPROF_SOURCE_DIR) + "/docs/diff.schema.json < " + path);
    EXPECT_EQ(v.out, "valid\n") << v.out << v.err;
  }
  const std::string j = render_json_diff(d, 20.0);
  EXPECT_NE(j.find(R"("schema":"uprof.diff/1")"), std::string::npos);
  // Doubles are written exactly (%.17g): 0.99 is 0.98999999999999999.
  EXPECT_TRUE(std::regex_search(
      j, std::regex(R"re("name":"order-statistic confidence intervals","confidence":0\.9899999+,"min_shift":0\.050*[0-9]*,)re")))
      << j;
  EXPECT_NE(j.find(R"("verdict":"slower")"), std::string::npos);
  // operator< with 3 calls: an unbounded interval is null at its high end.
  EXPECT_NE(j.find(R"("ratio_lo":0,"ratio_hi":null,"verdict":"too few calls")"), std::string::npos) << j;
  EXPECT_NE(j.find(R"("fail_above":{"percent":20,"regressions":[{"label":"parse")"), std::string::npos) << j;
}

TEST(DiffFormats, HtmlIsOnePageThatFetchesNothing) {
  const std::string h = render_html_diff(sample_diff(), 20.0);
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(h.find("</html>\n"), std::string::npos);
  for (const char* outside : {"http:", "https:", "<script", "<link", "src=", "url("})
    EXPECT_EQ(h.find(outside), std::string::npos) << outside;
  // A bar per compared quantile: parse, steady and operator< have three each.
  std::size_t svgs = 0;
  for (std::size_t at = h.find("<svg"); at != std::string::npos; at = h.find("<svg", at + 1)) svgs++;
  EXPECT_EQ(svgs, 9u);
  EXPECT_NE(h.find("data-verdict=\"slower\" data-ratio=\"1.5"), std::string::npos) << h;
  EXPECT_NE(h.find("data-verdict=\"too few calls\""), std::string::npos);
  // Names are text, never markup.
  EXPECT_NE(h.find("<td class=\"fn\">operator&lt;</td>"), std::string::npos);
  EXPECT_EQ(h.find("operator<<"), std::string::npos);
  EXPECT_NE(h.find("different architectures: A is x86_64, B is arm64"), std::string::npos);
  // parse's p50 and p99.
  EXPECT_NE(h.find("--fail-above 20%: 2 regressions"), std::string::npos);
  EXPECT_NE(h.find("order statistics"), std::string::npos);
}

}  // namespace
}  // namespace uprof
