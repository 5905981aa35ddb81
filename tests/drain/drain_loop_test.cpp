#include "uprof/drain/drain_loop.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "attach/fake_ring.h"
#include "drain/record_builder.h"
#include "uprof/drain/record_decoder.h"

namespace uprof {
namespace {

using namespace std::chrono_literals;

std::vector<RingBuffer> make_rings(int n) {
  std::vector<RingBuffer> rings;
  for (int i = 0; i < n; ++i) rings.push_back(std::move(RingBuffer::adopt(test::anonymous_ring(1), -1, i).value()));
  return rings;
}

TEST(RingBufferDrainLoop, FlagStopsThenDisablesThenDrainsEverything) {
  auto rings = make_rings(2);
  test::FakeKernel k0(rings[0]), k1(rings[1]);
  ASSERT_TRUE(k0.write(test::sample_record(1, 1, 1, 1)));
  ASSERT_TRUE(k1.write(test::sample_record(2, 1, 1, 1)));
  std::atomic<bool> stop{true};
  int disabled = 0;
  std::vector<std::pair<std::size_t, uint64_t>> seen;
  auto r = run_drain_loop(
      rings, StopCondition{.flag = &stop},
      [&](std::size_t ring, std::span<const std::byte> rec) -> Status {
        seen.emplace_back(ring, **record_identifier(rec));
        return ok();
      },
      [&]() -> Status {
        ++disabled;
        // A sample that landed between the stop and the disable: the final drain gets it.
        k1.write(test::sample_record(3, 1, 1, 1));
        return ok();
      });
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->reason, StopReason::Flag);
  EXPECT_EQ(disabled, 1);
  EXPECT_EQ(r->records, 3u);
  EXPECT_EQ(seen, (std::vector<std::pair<std::size_t, uint64_t>>{{0, 1}, {1, 2}, {1, 3}}));
  EXPECT_EQ(to_string(r->reason), "stop requested");
}

TEST(RingBufferDrainLoop, FlagFromAnotherThread) {
  auto rings = make_rings(1);
  test::FakeKernel k(rings[0]);
  std::atomic<bool> stop{false};
  uint64_t count = 0;
  std::thread producer([&] {
    for (uint64_t i = 0; i < 20; ++i) {
      while (!k.write(test::sample_record(i, 1, 1, 1))) std::this_thread::sleep_for(1ms);
      std::this_thread::sleep_for(2ms);
    }
    stop = true;
  });
  auto r = run_drain_loop(
      rings, StopCondition{.flag = &stop},
      [&](std::size_t, std::span<const std::byte>) -> Status { ++count; return ok(); },
      [] { return ok(); }, DrainLoopOptions{.poll_interval_ms = 5});
  producer.join();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->reason, StopReason::Flag);
  EXPECT_EQ(count, 20u);
  EXPECT_GT(r->passes, 1u);
}

TEST(RingBufferDrainLoop, Deadline) {
  auto rings = make_rings(1);
  auto start = std::chrono::steady_clock::now();
  auto r = run_drain_loop(
      rings, StopCondition{.deadline = start + 50ms},
      [](std::size_t, std::span<const std::byte>) { return ok(); }, [] { return ok(); });
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->reason, StopReason::Deadline);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 50ms);
  EXPECT_LT(took, 2s);
}

TEST(RingBufferDrainLoop, WorkloadExitIsSeenWithoutReapingIt) {
  auto rings = make_rings(1);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    usleep(100 * 1000);
    _exit(3);
  }
  auto r = run_drain_loop(
      rings, StopCondition{.workload = child, .deadline = std::chrono::steady_clock::now() + 10s},
      [](std::size_t, std::span<const std::byte>) { return ok(); }, [] { return ok(); },
      DrainLoopOptions{.poll_interval_ms = 1000});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->reason, StopReason::WorkloadExited);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);  // still ours to reap
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

TEST(RingBufferDrainLoop, RecordErrorEndsTheLoop) {
  auto rings = make_rings(1);
  test::FakeKernel k(rings[0]);
  ASSERT_TRUE(k.write(test::sample_record(1, 1, 1, 1)));
  int disabled = 0;
  auto r = run_drain_loop(
      rings, StopCondition{.deadline = std::chrono::steady_clock::now() + 10s},
      [](std::size_t, std::span<const std::byte>) -> Status { return err("store: disk full"); },
      [&] { ++disabled; return ok(); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "store: disk full");
  EXPECT_EQ(disabled, 0);
}

TEST(RingBufferDrainLoop, DisableErrorIsReturned) {
  auto rings = make_rings(1);
  std::atomic<bool> stop{true};
  auto r = run_drain_loop(
      rings, StopCondition{.flag = &stop},
      [](std::size_t, std::span<const std::byte>) { return ok(); },
      []() -> Status { return err("attach: PERF_EVENT_IOC_DISABLE: Bad file descriptor"); });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("DISABLE"), std::string::npos);
}

}  // namespace
}  // namespace uprof

namespace uprof {
namespace {

TEST(RingBufferDrainLoop, PassHooksSurroundEveryPass) {
  auto rings = make_rings(2);
  test::FakeKernel k(rings[0]);
  ASSERT_TRUE(k.write(test::sample_record(1, 1, 1, 1)));
  std::atomic<bool> stop{true};
  std::string trace;
  DrainLoopOptions o;
  o.on_pass_start = [&] { trace += "["; };
  o.on_pass_end = [&]() -> Status { trace += "]"; return ok(); };
  auto r = run_drain_loop(
      rings, StopCondition{.flag = &stop},
      [&](std::size_t, std::span<const std::byte>) -> Status { trace += "r"; return ok(); },
      [&]() -> Status { trace += "D"; return ok(); }, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // Stopped before any wait: disable, a pass with the record, then an empty pass.
  EXPECT_EQ(trace, "D[r][]");
  EXPECT_EQ(r->passes, 2u);

  o.on_pass_end = []() -> Status { return err("store: write failed"); };
  ASSERT_TRUE(k.write(test::sample_record(2, 1, 1, 1)));
  r = run_drain_loop(rings, StopCondition{.flag = &stop},
                     [](std::size_t, std::span<const std::byte>) { return ok(); },
                     [] { return ok(); }, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "store: write failed");
}


// A consumer that holds the rings (its budget is full) gets passes that read nothing;
// the final drain goes on until it takes the records again and the rings are empty.
TEST(RingBufferDrainLoop, HeldPassesReadNothingAndTheFinalDrainWaitsForThem) {
  auto rings = make_rings(1);
  test::FakeKernel k(rings[0]);
  ASSERT_TRUE(k.write(test::sample_record(1, 1, 1, 1)));
  std::atomic<bool> stop{true};
  std::string trace;
  int holds = 2;
  DrainLoopOptions o;
  o.on_pass_start = [&] { trace += "["; };
  o.hold_reads = [&] {
    if (holds == 0) return false;
    holds--;
    trace += "h";
    return true;
  };
  o.on_pass_end = [&]() -> Status { trace += "]"; return ok(); };
  auto r = run_drain_loop(
      rings, StopCondition{.flag = &stop},
      [&](std::size_t, std::span<const std::byte>) -> Status { trace += "r"; return ok(); },
      [&]() -> Status { trace += "D"; return ok(); }, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(trace, "D[h][h][r][]");
  EXPECT_EQ(r->passes, 4u);
  EXPECT_EQ(r->held, 2u);
  EXPECT_EQ(r->records, 1u);
}

}  // namespace
}  // namespace uprof
