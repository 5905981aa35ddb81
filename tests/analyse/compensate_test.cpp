// report --compensate on a hand-built recording: the probes' cost stored in META is
// taken off every duration, clamped at zero; the arithmetic is exact on min, max, total.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "analyse/event_builders.h"
#include "uprof/analyse/report_model.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

using test::probe;
using test::sample;

std::string write_recording(uint64_t probe_cost_ns) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("uprof_compensate_" + std::to_string(getpid()) + "_" + std::to_string(probe_cost_ns)))
                         .string();
  RecordingMeta meta;
  meta.kernel = "6.18.0";
  meta.start_monotonic_ns = 1'000'000;
  meta.probe_cost_ns = probe_cost_ns;
  std::vector<ProbeInfo> probes{probe(0, ProbeKind::Entry, "f", 0x1000), probe(1, ProbeKind::Return, "f", 0x1000)};
  auto w = DataFileWriter::create(path, meta, probes);
  EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message);
  // Calls of 100, 300 and 1000 ns.
  uint64_t t = 2'000'000;
  for (uint64_t d : {100u, 300u, 1000u}) {
    EXPECT_TRUE(w->add(sample(0, 7, t)).ok());
    EXPECT_TRUE(w->add(sample(1, 7, t + d)).ok());
    t += 5000;
  }
  Trailer tr;
  tr.end_monotonic_ns = t;
  tr.events = 6;
  tr.counts = {{3, 3}, {3, 3}};
  EXPECT_TRUE(w->finish(tr).ok());
  return path;
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
  std::filesystem::remove(path);
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
