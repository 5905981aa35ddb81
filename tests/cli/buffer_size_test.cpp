// `uprof record --buffer-size`: what the drain may hold between the ring buffer and the
// data file (drain/event_order.h). A small one still records every call, in time order;
// a size that is not one is a usage error, said in one line.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class BufferSize : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, BufferSize, UPROF_ENGINES, test::engine_name);

// 4 threads, 400,000 events through a 1 MiB buffer: each one once, in time order, and
// the kernel's count matched.
TEST_P(BufferSize, TheSmallestStillRecordsEveryCallInTimeOrder) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string out = dir.file("u.data");
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "--no-calibrate", "--buffer-size", "1M", "-o", out,
                "-e", "add %di", "--", fixture("x86_64", "workload"), "threads", "4", "50000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Exact accounting whatever the drain's speed: a slow one (the sanitizers) makes the
  // kernel drop, never the buffer lose or duplicate.
  EXPECT_NE(r.err.find("(kernel counted 400,000)"), std::string::npos) << r.err;
  auto rec = test::load_recording(out);
  ASSERT_TRUE(rec.trailer);
  ASSERT_EQ(rec.samples.size() + rec.trailer->lost, 400000u);
  EXPECT_TRUE(std::is_sorted(rec.samples.begin(), rec.samples.end(),
                             [](const Event& a, const Event& b) { return a.time < b.time; }));
  uint64_t recorded = 0;
  for (const auto& c : rec.trailer->counts) recorded += c.recorded;
  EXPECT_EQ(recorded, rec.samples.size());
  EXPECT_TRUE(rec.problems.empty());
}

TEST(BufferSizeOption, NotASizeOfAtLeastOneMegabyteIsAUsageError) {
  for (const char* bad : {"100k", "12Q", "-5", "", "1.5M"}) {
    auto r = run({uprof_binary(), "record", "--buffer-size", bad, "-e", "add", "--", fixture("x86_64", "workload"),
                  "calls", "1"});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(r.err, "uprof record: --buffer-size is a size of at least 1M, e.g. 64M (B, K, M or G) "
                     "(see 'uprof record --help')\n")
        << bad;
    EXPECT_TRUE(r.out.empty()) << bad;
  }
}

}  // namespace
}  // namespace uprof
