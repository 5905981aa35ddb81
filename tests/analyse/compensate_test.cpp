// report --compensate on a hand-built recording: the probes' cost stored in META is
// taken off every duration, clamped at zero; the arithmetic is exact on min, max, total.
#include <gtest/gtest.h>

#include <filesystem>

#include "analyse/event_builders.h"
#include "uprof/analyse/report_model.h"
#include "uprof/present/report_formats.h"
#include "uprof/present/report_text.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

using test::probe;
using test::sample;

// f (probes 0, 1) and g (2, 3), both probed at entry and return.
std::vector<ProbeInfo> f_and_g() {
  return {probe(0, ProbeKind::Entry, "f", 0x1000), probe(1, ProbeKind::Return, "f", 0x1000),
          probe(2, ProbeKind::Entry, "g", 0x2000), probe(3, ProbeKind::Return, "g", 0x2000)};
}

std::string write_file(const std::string& name, const RecordingMeta& meta, const std::vector<ProbeInfo>& probes,
                       const std::vector<Event>& events) {
  return test::write_data_file("compensate_" + name, meta, probes, events);
}

std::string write_recording(uint64_t probe_cost_ns) {
  RecordingMeta meta;
  meta.kernel = "6.18.0";
  meta.start_monotonic_ns = 1'000'000;
  meta.probe_cost_ns = probe_cost_ns;
  // Calls of 100, 300 and 1000 ns.
  std::vector<Event> events;
  uint64_t t = 2'000'000;
  for (uint64_t d : {100u, 300u, 1000u}) {
    events.push_back(sample(0, 7, t));
    events.push_back(sample(1, 7, t + d));
    t += 5000;
  }
  return write_file(std::to_string(probe_cost_ns), meta, {probe(0, ProbeKind::Entry, "f", 0x1000),
                                                           probe(1, ProbeKind::Return, "f", 0x1000)},
                    events);
}

TEST(Compensate, SubtractsTheProbeCostClampedAtZero) {
  std::string path = write_recording(250);
  AggregateOptions raw;
  auto plain = build_report(path, raw);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  ASSERT_EQ(plain->groups.size(), 1u);
  EXPECT_EQ(plain->groups[0].latency.total(), 1400u);
  EXPECT_EQ(plain->options.compensate_ns, 0u);

  AggregateOptions comp;
  comp.compensate = true;
  auto m = build_report(path, comp);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->options.compensate_ns, 250u);
  const auto& h = m->groups[0].latency;
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.min(), 0u);        // 100 - 250, clamped
  EXPECT_EQ(h.max(), 750u);      // 1000 - 250
  EXPECT_EQ(h.total(), 800u);    // 0 + 50 + 750
  EXPECT_EQ(m->groups[0].below_compensation, 1u);
  std::filesystem::remove(path);
}

// A percentile among the calls compensation took everything off is no measurement: the
// text shows '-' and says why, JSON null, CSV an empty cell; the ranks above stay.
TEST(Compensate, PercentilesAmongCallsItZeroedAreNotShown) {
  std::string path = write_recording(400);  // 100 and 300 go below zero, 1000 -> 600
  AggregateOptions comp;
  comp.compensate = true;
  auto m = build_report(path, comp);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const GroupStats& g = m->groups[0];
  EXPECT_EQ(g.below_compensation, 2u);
  EXPECT_TRUE(g.compensation_hides(0));
  EXPECT_TRUE(g.compensation_hides(50));   // rank 2 of 3
  EXPECT_FALSE(g.compensation_hides(90));  // rank 3: 600 ns
  const std::string text = render_text_report(*m, TextReportOptions{});
  EXPECT_NE(text.find("--compensate is unreliable here: it took more than the whole call off 2 of 3 calls (66.7%)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    -    -  600ns  600ns  600ns  600ns"), std::string::npos) << text;
  const std::string json = render_json_report(*m, TextReportOptions{});
  EXPECT_EQ(text.find("the median (0ns)"), std::string::npos) << text;  // no median to compare
  EXPECT_NE(json.find("\"min\":null,\"p50\":null,\"p90\":600,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"below_compensation\":2"), std::string::npos) << json;
  const std::string csv = render_csv_report(*m, TextReportOptions{});
  EXPECT_NE(csv.find(",,,600,600,600,600,"), std::string::npos) << csv;

  AggregateOptions raw;  // no compensation: every figure is shown
  auto plain = build_report(path, raw);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->groups[0].below_compensation, 0u);
  EXPECT_FALSE(plain->groups[0].compensation_hides(0));
  std::filesystem::remove(path);
}

// Two functions whose first instructions cost differently: each loses its own figure
// (META probe_costs_ns, per probe), and the text, CSV and JSON say so per function.
TEST(Compensate, EachFunctionLosesItsOwnInstructionsCost) {
  RecordingMeta meta;
  meta.start_monotonic_ns = 1'000'000;
  meta.probe_cost_ns = 600;                        // the smallest: what an old reader uses
  meta.probe_costs_ns = {600, 600, 16'000, 16'000};  // push %rbp (emulated), lea (single-stepped)
  std::vector<Event> events;
  uint64_t t = 2'000'000;
  for (uint64_t d : {10'000u, 20'000u}) {
    events.push_back(sample(0, 7, t));
    events.push_back(sample(1, 7, t + d));
    events.push_back(sample(2, 7, t + 100'000));
    events.push_back(sample(3, 7, t + 100'000 + d));
    t += 500'000;
  }
  std::string path = write_file("per_probe", meta, f_and_g(), events);
  AggregateOptions comp;
  comp.compensate = true;
  auto m = build_report(path, comp);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->groups.size(), 2u);
  for (const auto& g : m->groups) {
    const std::string& name = m->functions.functions[g.function].name;
    if (name == "f") {
      EXPECT_EQ(g.latency.min(), 9'400u);   // 10000 - 600
      EXPECT_EQ(g.latency.max(), 19'400u);  // 20000 - 600
    } else {
      EXPECT_EQ(name, "g");
      EXPECT_EQ(g.latency.min(), 0u);       // 10000 - 16000, clamped
      EXPECT_EQ(g.latency.max(), 4'000u);   // 20000 - 16000
    }
  }
  EXPECT_EQ(m->options.compensate_ns, 600u);

  // g's median (10 us) is within 10x of its 16 us: flagged; f's, against 600 ns, is not.
  AggregateOptions raw;
  auto plain = build_report(path, raw);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  std::string text = render_text_report(*plain, TextReportOptions{});
  EXPECT_NE(text.find("probes' own cost (+16.0us a call, as record said)"), std::string::npos) << text;
  EXPECT_EQ(text.find("probes' own cost (+600ns a call"), std::string::npos) << text;

  std::string comp_text = render_text_report(*m, TextReportOptions{});
  EXPECT_NE(comp_text.find("compensated: 600ns to 16.0us (each function's"), std::string::npos) << comp_text;
  std::string csv = render_csv_report(*m, TextReportOptions{});
  EXPECT_NE(csv.find(",600\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",16000\n"), std::string::npos) << csv;
  std::string json = render_json_report(*m, TextReportOptions{});
  EXPECT_NE(json.find("\"probe_cost_ns\":16000,\"compensated_ns\":16000"), std::string::npos) << json;
  std::filesystem::remove(path);
}

// f calls g twice: with per-hit costs in META, f also loses what g's four probe hits
// cost (they happened inside f's time), not only its own probes' figure.
TEST(Compensate, ProbedCallsInsideACallAreTakenOffToo) {
  auto write = [](bool hit_costs) {
    RecordingMeta meta;
    meta.start_monotonic_ns = 1'000'000;
    meta.probe_cost_ns = 600;
    meta.probe_costs_ns = {600, 600, 600, 600};
    if (hit_costs) meta.probe_hit_costs_ns = {1'000, 1'000, 3'000, 3'000};
    std::vector<Event> events;
    uint64_t t = 2'000'000;
    for (int call = 0; call < 3; call++) {  // f: 50 us, holding two 5 us calls of g
      for (auto [p, dt] : {std::pair{0u, 0u}, {2u, 10'000u}, {3u, 15'000u}, {2u, 20'000u}, {3u, 25'000u}, {1u, 50'000u}})
        events.push_back(sample(p, 7, t + dt));
      t += 100'000;
    }
    return write_file(hit_costs ? "nested1" : "nested0", meta, f_and_g(), events);
  };
  AggregateOptions comp;
  comp.compensate = true;
  for (bool hit_costs : {true, false}) {
    std::string path = write(hit_costs);
    auto m = build_report(path, comp);
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_EQ(m->options.compensate_nested, hit_costs);
    ASSERT_EQ(m->groups.size(), 2u);
    for (const auto& g : m->groups) {
      const std::string& name = m->functions.functions[g.function].name;
      uint64_t expect = name == "g" ? 5'000 - 600 : hit_costs ? 50'000 - 600 - 2 * (3'000 + 3'000) : 50'000 - 600;
      EXPECT_EQ(g.latency.min(), expect) << name << " hit_costs " << hit_costs;
      EXPECT_EQ(g.latency.max(), expect) << name << " hit_costs " << hit_costs;
    }
    std::string text = render_text_report(*m, TextReportOptions{});
    std::string json = render_json_report(*m, TextReportOptions{});
    const bool says = text.find(", and what the probe hits inside each call cost, at least 0") != std::string::npos;
    EXPECT_EQ(says, hit_costs) << text;
    EXPECT_NE(json.find(std::string("\"compensated_nested\":") + (hit_costs ? "true" : "false")), std::string::npos)
        << json;
    std::filesystem::remove(path);
  }
}

// The raw report says when the probes inside a function's calls cost over half of its
// time: f's three 50 us calls hold 3 x 12 us of g's hits (not flagged); at 10 us a hit
// they hold 3 x 40 us of 150 us (flagged).
TEST(Compensate, TheRawReportSaysWhenNestedProbesDominate) {
  for (uint64_t hit : {3'000u, 10'000u}) {
    RecordingMeta meta;
    meta.start_monotonic_ns = 1'000'000;
    meta.probe_cost_ns = 600;
    meta.probe_costs_ns = {600, 600, 600, 600};
    meta.probe_hit_costs_ns = {1'000, 1'000, hit, hit};
    std::vector<Event> events;
    uint64_t t = 2'000'000;
    for (int call = 0; call < 3; call++) {
      for (auto [p, dt] : {std::pair{0u, 0u}, {2u, 10'000u}, {3u, 15'000u}, {2u, 20'000u}, {3u, 25'000u}, {1u, 50'000u}})
        events.push_back(sample(p, 7, t + dt));
      t += 100'000;
    }
    std::string path = write_file("dominate" + std::to_string(hit), meta, f_and_g(), events);
    auto m = build_report(path, AggregateOptions{});
    ASSERT_TRUE(m.ok()) << m.error().message;
    std::string text = render_text_report(*m, TextReportOptions{});
    const bool flagged = text.find("the probed callees' probes dominate") != std::string::npos;
    EXPECT_EQ(flagged, hit == 10'000u) << text;
    if (flagged) {
      EXPECT_NE(text.find("cost ~120us of its 150us total"), std::string::npos) << text;
    }
    std::filesystem::remove(path);
  }
}

TEST(Compensate, RefusesARecordingWithoutAProbeCost) {
  std::string path = write_recording(0);
  AggregateOptions comp;
  comp.compensate = true;
  auto m = build_report(path, comp);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("uprof bench"), std::string::npos) << m.error().message;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace uprof
