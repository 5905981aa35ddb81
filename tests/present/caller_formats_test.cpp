// The callers and on/off-CPU time in each output (record -g, --off-cpu): the text
// report's callers, CSV and JSON columns, --format folded, pprof read back by
// `go tool pprof`, the HTML page's icicle, and diff by caller; from data files whose
// frames name the real why_slow fixture (tests/analyse/why_slow_builders.h).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "analyse/why_slow_builders.h"
#include "support/test_support.h"
#include "uprof/analyse/diff_model.h"
#include "uprof/analyse/report_model.h"
#include "uprof/present/diff_formats.h"
#include "uprof/present/folded_stacks.h"
#include "uprof/present/html_report.h"
#include "uprof/present/pprof_profile.h"
#include "uprof/present/report_formats.h"
#include "uprof/present/report_text.h"

namespace uprof {
namespace {

ReportModel read(const std::string& path, GroupBy by = GroupBy::Function) {
  AggregateOptions o;
  o.by = by;
  auto m = build_report(path, o);
  EXPECT_TRUE(m) << m.error().message;
  return m ? std::move(m).value() : ReportModel{};
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// "main;spinner;work 30000000" -> {"main;spinner;work", 30000000}
std::map<std::string, uint64_t> folded(const std::string& text) {
  std::map<std::string, uint64_t> out;
  for (const std::string& l : lines(text)) {
    const auto sp = l.rfind(' ');
    EXPECT_NE(sp, std::string::npos) << l;
    out[l.substr(0, sp)] = std::stoull(l.substr(sp + 1));
  }
  return out;
}

TEST(FoldedStacks, OneLinePerStackThatAddUpToTheLatency) {
  const auto w = test::WhySlow::load();
  const ReportModel m = read(test::why_slow_recording(w, "folded.data"));
  ASSERT_TRUE(check_stack_format(m, StackWeight::Latency, "folded"));
  const auto latency = folded(render_folded(m, StackWeight::Latency));
  EXPECT_EQ(latency, (std::map<std::string, uint64_t>{
                         {"main;spinner;work", 30'000'000}, {"main;sleeper;work", 40'000'000}, {"[no stack];work", 500'000}}));
  uint64_t sum = 0;
  for (const auto& [stack, v] : latency) sum += v;
  EXPECT_EQ(sum, m.totals[0].latency.total());
  const auto calls = folded(render_folded(m, StackWeight::Calls));
  EXPECT_EQ(calls.at("main;spinner;work"), 30u);
  EXPECT_EQ(calls.at("main;sleeper;work"), 20u);
  const auto on = folded(render_folded(m, StackWeight::OnCpu));
  const auto off = folded(render_folded(m, StackWeight::OffCpu));
  EXPECT_EQ(on.at("main;spinner;work"), 30u * 990'000);
  EXPECT_EQ(off.at("main;sleeper;work"), 20u * 1'920'000);
  EXPECT_EQ(on.at("main;spinner;work") + off.at("main;spinner;work"), latency.at("main;spinner;work"));
}

TEST(FoldedStacks, WhatTheRecordingLacksIsRefused) {
  const auto w = test::WhySlow::load();
  std::vector<Event> ev{w.object_event()};
  test::work_call(ev, 7, 100, 1000, {w.in_spinner, w.main_to_spinner});
  const std::string path = test::write_data_file("no_offcpu.data", RecordingMeta{}, test::work_probes(w.path, false), ev);
  const ReportModel m = read(path);
  auto st = check_stack_format(m, StackWeight::OnCpu, "folded");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "report: --weight on-cpu: " + path + " holds no off-CPU times (record it with --off-cpu)");
  EXPECT_TRUE(check_stack_format(m, StackWeight::Latency, "folded"));
  const ReportModel none = read(test::write_data_file(
      "no_stacks.data", RecordingMeta{},
      {test::probe(0, ProbeKind::Entry, "work", 0x1000), test::probe(1, ProbeKind::Return, "work", 0x1000)},
      {test::sample(0, 7, 100), test::sample(1, 7, 200)}));
  auto st2 = check_stack_format(none, StackWeight::Latency, "pprof");
  ASSERT_FALSE(st2);
  EXPECT_EQ(st2.error().message, "report: --format pprof: " + none.path + " holds no call stacks (record it with -g)");
}

TEST(TextReport, EachFunctionItsCallersAndTheirSplit) {
  const auto w = test::WhySlow::load();
  const ReportModel m = read(test::why_slow_recording(w, "text.data"));
  const std::string text = render_text_report(m, TextReportOptions{});
  EXPECT_NE(text.find("stacks:   50 calls with a stack, 1 without"), std::string::npos) << text;
  EXPECT_NE(text.find("ON-CPU"), std::string::npos) << text;
  EXPECT_NE(text.find("  callers (by latency):\n"), std::string::npos) << text;
  // The caller lines, in latency order: sleeper 40 ms (2.5% on the CPU), spinner 30 ms (99%).
  const auto all = lines(text);
  std::size_t sleeper = 0, spinner = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].rfind("    sleeper", 0) == 0) sleeper = i;
    if (all[i].rfind("    spinner", 0) == 0) spinner = i;
  }
  ASSERT_NE(sleeper, 0u) << text;
  ASSERT_NE(spinner, 0u) << text;
  EXPECT_LT(sleeper, spinner);
  EXPECT_NE(all[sleeper].find("20"), std::string::npos);
  EXPECT_NE(all[sleeper].find("2.00ms"), std::string::npos) << all[sleeper];
  EXPECT_NE(all[sleeper].find("96.0% (sleep 95.0%, runnable 1.0%)"), std::string::npos) << all[sleeper];
  EXPECT_NE(all[spinner].find("99.0%"), std::string::npos) << all[spinner];
}

TEST(TextReport, ByCallerLabelsEachRow) {
  const auto w = test::WhySlow::load();
  const ReportModel m = read(test::why_slow_recording(w, "text_by.data"), GroupBy::Caller);
  const std::string text = render_text_report(m, TextReportOptions{});
  EXPECT_NE(text.find("work [from sleeper]"), std::string::npos) << text;
  EXPECT_NE(text.find("work [from spinner]"), std::string::npos) << text;
  EXPECT_NE(text.find("work [no stack]"), std::string::npos) << text;
}

TEST(CsvJson, OnOffCpuAndCallerColumns) {
  const auto w = test::WhySlow::load();
  const ReportModel m = read(test::why_slow_recording(w, "csv.data"), GroupBy::Caller);
  const auto csv = lines(render_csv_report(m, TextReportOptions{}));
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_NE(csv[0].find(",caller,on_cpu_ns,off_cpu_ns,runnable_ns,blocked_ns"), std::string::npos) << csv[0];
  bool spinner = false;
  for (const std::string& l : csv)
    if (l.find(",spinner,") != std::string::npos) {
      spinner = true;
      EXPECT_NE(l.find(",spinner,29700000,300000,300000,0"), std::string::npos) << l;
    }
  EXPECT_TRUE(spinner);
  const std::string json = render_json_report(m, TextReportOptions{});
  EXPECT_NE(json.find("\"caller\":\"sleeper\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"on_cpu_ns\":1600000,\"off_cpu_ns\":38400000,\"runnable_ns\":400000,\"blocked_ns\":38000000"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"sleep\":38000000"), std::string::npos) << json;
  // By function: each row lists its callers.
  const std::string by_fn = render_json_report(read(test::why_slow_recording(w, "json.data")), TextReportOptions{});
  EXPECT_NE(by_fn.find("\"callers\":[{\"caller\":\"sleeper\",\"calls\":20,\"total_ns\":40000000"), std::string::npos)
      << by_fn;
}

TEST(Pprof, GoToolPprofReadsTheCallers) {
  if (test::run({"go", "version"}).exit_code != 0) GTEST_SKIP() << "go is not installed (golang-go)";
  const auto w = test::WhySlow::load();
  const ReportModel m = read(test::why_slow_recording(w, "pprof.data"));
  auto bytes = render_pprof(m);
  ASSERT_TRUE(bytes) << bytes.error().message;
  test::TempDir dir;
  const std::string file = dir.file("work.pb.gz");
  std::ofstream(file, std::ios::binary) << *bytes;
  // -top by latency (the default sample type), cumulative: work holds all of it, then
  // sleeper's calls, then spinner's.
  auto r = test::run({"go", "tool", "pprof", "-top", "-cum", "-nodecount=10", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Type: latency"), std::string::npos) << r.out;
  const auto at = [&](const std::string& name) { return r.out.find(" " + name + "\n"); };
  ASSERT_NE(at("work"), std::string::npos) << r.out;
  ASSERT_NE(at("sleeper"), std::string::npos) << r.out;
  ASSERT_NE(at("spinner"), std::string::npos) << r.out;
  EXPECT_LT(at("sleeper"), at("spinner")) << r.out;
  EXPECT_NE(r.out.find("40ms"), std::string::npos) << r.out;  // sleeper's calls
  auto calls = test::run({"go", "tool", "pprof", "-top", "-sample_index=calls", "-nodecount=10", file});
  ASSERT_EQ(calls.exit_code, 0) << calls.err;
  EXPECT_NE(calls.out.find("of 51 total"), std::string::npos) << calls.out;
  auto off = test::run({"go", "tool", "pprof", "-traces", "-sample_index=off_cpu", file});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_NE(off.out.find("sleeper"), std::string::npos) << off.out;
}

TEST(HtmlReport, AnIcicleOfTheCallersSplitOnAndOff) {
  const auto w = test::WhySlow::load();
  const ReportModel m = read(test::why_slow_recording(w, "html.data"));
  const std::string html = render_html_report(m, TextReportOptions{}, {});
  EXPECT_NE(html.find("<svg class=\"flame\""), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"callers of work by latency\""), std::string::npos);
  // The root, then each caller with its figures as data attributes.
  EXPECT_NE(html.find("<g data-name=\"work\" data-calls=\"51\" data-latency-ns=\"70500000\""), std::string::npos);
  EXPECT_NE(html.find("<g data-name=\"sleeper\" data-calls=\"20\" data-latency-ns=\"40000000\" data-on-cpu-ns=\"1600000\" "
                      "data-off-cpu-ns=\"38400000\""),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<g data-name=\"spinner\" data-calls=\"30\""), std::string::npos);
  EXPECT_NE(html.find("class=\"fl-on\""), std::string::npos);
  EXPECT_NE(html.find("class=\"fl-off\""), std::string::npos);
  // Offline as the rest of the page: nothing fetched, no script.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://www.w3.org/2000/svg\" href"), std::string::npos);
}

TEST(DiffByCaller, NamesTheCallerWhoseCallsGotSlower) {
  const auto w = test::WhySlow::load();
  DiffOptions o;
  o.by = GroupBy::Caller;
  auto d = build_diff(test::why_slow_recording(w, "diff_a.data"), test::why_slow_recording(w, "diff_b.data", 3'000'000), o);
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_FALSE(d->rows.empty());
  EXPECT_EQ(d->rows[0].caller, "sleeper");
  ASSERT_TRUE(d->rows[0].compared());
  EXPECT_EQ(d->rows[0].shifts[0].verdict, ShiftVerdict::Slower);
  for (const DiffRow& r : d->rows) {
    if (r.caller == "spinner") {
      EXPECT_NE(r.shifts[0].verdict, ShiftVerdict::Slower);
    }
  }
  const std::string text = render_text_diff(*d);
  EXPECT_NE(text.find("work [from sleeper]"), std::string::npos) << text;
  EXPECT_NE(text.find("callers:  matched by the caller's name"), std::string::npos) << text;
}

}  // namespace
}  // namespace uprof
