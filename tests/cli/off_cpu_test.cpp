// record --off-cpu, live: the BPF engine's scheduler programs split each probed call's
// time into on-CPU and off-CPU time by kind, checked against what the fixtures measure
// themselves (their thread's CPU clock) and against what they wait for (a sleep, a mutex,
// a pipe). Bounds are one-sided or generous: a busy machine makes calls wait longer for a
// CPU (Runnable), and that is all it changes.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

// The calls of one function as the recording's entry and return samples give them.
struct CallSum {
  uint64_t calls = 0;
  uint64_t wall_ns = 0;   // sum of durations
  OffCpuTimes off{};      // sum of each call's off-CPU time by kind
  uint64_t off_ns() const {
    uint64_t s = 0;
    for (uint64_t t : off) s += t;
    return s;
  }
  uint64_t blocked_ns() const { return off_ns() - off[static_cast<std::size_t>(OffCpuKind::Runnable)]; }
  uint64_t on_ns() const { return wall_ns - off_ns(); }
  uint64_t kind(OffCpuKind k) const { return off[static_cast<std::size_t>(k)]; }
  // "spin: 20 calls, 48.1 ms, on-CPU 40.2 ms, runnable 7.9 ms, ..." (the figures, for the log)
  void print(const char* name) const {
    std::printf("%s: %lu calls, %.2f ms, on-CPU %.2f ms", name, static_cast<unsigned long>(calls), wall_ns / 1e6,
                on_ns() / 1e6);
    for (std::size_t k = 0; k < kOffCpuKinds; k++)
      if (off[k]) std::printf(", %s %.2f ms", std::string(to_string(static_cast<OffCpuKind>(k))).c_str(), off[k] / 1e6);
    std::printf("\n");
  }
};

// Pairs each entry with its thread's next return (the probed functions do not nest) and
// sums the calls by `key` (the entry's first value), or all under 0 when key_value is false.
std::map<uint64_t, CallSum> sum_calls(const test::LoadedRecording& rec, const std::string& function, bool key_value) {
  std::map<uint64_t, CallSum> out;
  std::map<uint32_t, const Event*> open;  // by tid
  for (const Event& e : rec.samples) {
    const ProbeInfo& p = rec.probes.at(e.probe);
    if (p.function != function) continue;
    EXPECT_TRUE(p.offcpu) << p.function;
    if (p.kind == ProbeKind::Entry) {
      open[e.tid] = &e;
      continue;
    }
    auto it = open.find(e.tid);
    if (it == open.end()) continue;
    const Event& entry = *it->second;
    CallSum& s = out[key_value ? entry.values[0] : 0];
    s.calls++;
    s.wall_ns += e.time - entry.time;
    for (std::size_t k = 0; k < kOffCpuKinds; k++) {
      EXPECT_GE(e.offcpu[k], entry.offcpu[k]) << "a thread's totals only grow";
      s.off[k] += e.offcpu[k] - entry.offcpu[k];
    }
    open.erase(it);
  }
  return out;
}

// "spinner calls 20 cpu_ns 40123456 wall_ns 40234567"
struct Oracle {
  long calls = 0;
  uint64_t cpu_ns = 0, wall_ns = 0;
};
Oracle oracle(const std::string& out, const std::string& caller) {
  std::smatch m;
  Oracle o;
  if (std::regex_search(out, m, std::regex(caller + " calls ([0-9]+) cpu_ns ([0-9]+) wall_ns ([0-9]+)"))) {
    o.calls = std::stol(m[1]);
    o.cpu_ns = std::stoull(m[2]);
    o.wall_ns = std::stoull(m[3]);
  }
  return o;
}

class OffCpu : public ::testing::TestWithParam<std::string> {};

// why_slow 20 2000: spinner() makes work() spin 2 ms of CPU, sleeper() makes it sleep 2 ms.
// work's first argument says which (1: spin). Each caller's on-CPU time as uprof splits it
// is the fixture's own CPU clock around the call, less what the probes and the clock reads
// outside uprof's window take, and never more.
TEST_P(OffCpu, SpinningCallsRunAndSleepingCallsSleep) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const long n = 20, us = 2000;
  auto r = run({uprof_binary(), "record", "--off-cpu", "--engine", "bpf", "--attach", test::attach_of(GetParam()), "-o",
                dir.file("w.data"), "-e", "work %di", "--", fixture("x86_64", "why_slow"), std::to_string(n),
                std::to_string(us)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Oracle spin_o = oracle(r.out, "spinner"), sleep_o = oracle(r.out, "sleeper");
  ASSERT_EQ(spin_o.calls, n) << r.out;
  ASSERT_EQ(sleep_o.calls, n) << r.out;
  const auto rec = test::load_recording(dir.file("w.data"));
  const auto sums = sum_calls(rec, "work", true);
  ASSERT_TRUE(sums.count(1) && sums.count(0)) << r.err;
  const CallSum& spin = sums.at(1);
  const CallSum& sleep = sums.at(0);
  EXPECT_EQ(spin.calls, static_cast<uint64_t>(n));
  EXPECT_EQ(sleep.calls, static_cast<uint64_t>(n));
  spin.print("spinner's work");
  sleep.print("sleeper's work");
  std::printf("the fixture's CPU clock: spinner %.2f ms, sleeper %.2f ms\n", spin_o.cpu_ns / 1e6, sleep_o.cpu_ns / 1e6);

  // Spinning: no time blocked (a busy machine may preempt it: Runnable, not blocked).
  EXPECT_LE(spin.blocked_ns(), spin.wall_ns / 5) << "spinner's calls blocked " << spin.blocked_ns() << " of "
                                                 << spin.wall_ns << " ns";
  // Sleeping: at least 80% off the CPU, and blocked only asleep (nanosleep), for at least
  // the time asked (a timer never fires early; what follows the wake-up is Runnable, more
  // of it on a busy machine).
  EXPECT_GE(sleep.off_ns(), sleep.wall_ns / 5 * 4) << "sleeper's calls off the CPU " << sleep.off_ns() << " of "
                                                    << sleep.wall_ns << " ns";
  EXPECT_EQ(sleep.blocked_ns(), sleep.kind(OffCpuKind::Sleep));
  EXPECT_GE(sleep.kind(OffCpuKind::Sleep), static_cast<uint64_t>(n * us * 1000) / 10 * 9);

  // On-CPU time against the thread's CPU clock: within 10% and 100 us a call.
  const uint64_t slack = static_cast<uint64_t>(n) * 100'000;
  for (auto [name, s, o] : {std::tuple{"spinner", spin, spin_o}, std::tuple{"sleeper", sleep, sleep_o}}) {
    SCOPED_TRACE(name);
    EXPECT_LE(s.on_ns(), o.cpu_ns + o.cpu_ns / 10 + slack) << "uprof on-CPU " << s.on_ns() << ", clock " << o.cpu_ns;
    EXPECT_GE(s.on_ns() + o.cpu_ns / 10 + slack, o.cpu_ns) << "uprof on-CPU " << s.on_ns() << ", clock " << o.cpu_ns;
  }
  EXPECT_GE(spin.on_ns(), static_cast<uint64_t>(n * us * 1000) * 9 / 10);  // work spun 2 ms of CPU each
}

// offcpu_waits 10 20000: locked() waits for a mutex another thread holds for 20 ms,
// piped() for a byte another thread writes 20 ms after it lets the mutex go. How long each
// waits depends on how soon the main thread gets there (on a busy machine, later); what it
// waits in does not: its time blocked is all Lock, and all Io.
TEST_P(OffCpu, AMutexIsLockAndAPipeIsIo) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const long n = 10, us = 20000;
  auto r = run({uprof_binary(), "record", "--off-cpu", "--engine", "bpf", "--attach", test::attach_of(GetParam()), "-o",
                dir.file("l.data"), "-e", "locked", "-e", "piped", "--", fixture("x86_64", "offcpu_waits"),
                std::to_string(n), std::to_string(us)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "rounds 10\n");
  const auto rec = test::load_recording(dir.file("l.data"));
  const CallSum locked = sum_calls(rec, "locked", false)[0];
  const CallSum piped = sum_calls(rec, "piped", false)[0];
  EXPECT_EQ(locked.calls, static_cast<uint64_t>(n));
  EXPECT_EQ(piped.calls, static_cast<uint64_t>(n));
  locked.print("locked");
  piped.print("piped");
  const uint64_t waited = static_cast<uint64_t>(n) * 1'000'000;  // at least 1 ms of each 20 ms wait
  EXPECT_GE(locked.kind(OffCpuKind::Lock), waited);
  EXPECT_EQ(locked.blocked_ns(), locked.kind(OffCpuKind::Lock));
  EXPECT_GE(piped.kind(OffCpuKind::Io), waited);
  EXPECT_EQ(piped.blocked_ns(), piped.kind(OffCpuKind::Io));
}

INSTANTIATE_TEST_SUITE_P(Engines, OffCpu, ::testing::Values(std::string("bpf"), std::string("bpf_events")),
                         test::engine_name);

// The perf engine cannot follow the scheduler: it says so, and records nothing.
TEST(OffCpuRefusal, ThePerfEngineSaysWhy) {
  test::TempDir dir;
  auto r = run({uprof_binary(), "record", "--off-cpu", "--engine", "perf", "-o", dir.file("p.data"), "-e", "work",
                "--", fixture("x86_64", "why_slow"), "1", "1"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--off-cpu needs the BPF engine: a perf event cannot follow a thread's switches off the CPU"),
            std::string::npos)
      << r.err;
}

// Nothing to split: a function with no return probe.
TEST(OffCpuRefusal, EntryOnlyHasNoCallToSplit) {
  test::TempDir dir;
  auto r = run({uprof_binary(), "record", "--off-cpu", "--entry-only", "-o", dir.file("e.data"), "-e", "work", "--",
                fixture("x86_64", "why_slow"), "1", "1"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--off-cpu splits a call's time"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace uprof
