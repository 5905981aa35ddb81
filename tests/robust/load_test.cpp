// Load: threads that call the probed function as fast as they can, and a burst of
// short-lived children. What the user checks: no crash, every hit accounted for
// (recorded + lost == the kernel's count, per probe), and every child's calls.
#include <map>
#include <regex>

#include "robust_support.h"

namespace uprof::robust {
namespace {

using test::fixture;
using test::uprof_binary;

struct SpinRun {
  uint64_t calls = 0;  // what the workload says it made
  Loaded data;
  std::string err;
  double seconds = 0;
};

// Every test runs on each capture engine.
class Load : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Load, UPROF_ENGINES, test::engine_name);

SpinRun record_spin(const std::string& engine, const std::string& out, const std::string& ring_pages) {
  SpinRun s;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_child({uprof_binary(), "record", "--engine", test::engine_of(engine), "--attach", test::attach_of(engine), "-o", out, "-m", ring_pages, "-e", "add %di", "--",
                      fixture("x86_64", "workload"), "spin", "8", "3000"});
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.err = r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(r.out, m, std::regex(R"(^calls (\d+)\n)"))) << r.out;
  if (!m.empty()) s.calls = std::stoull(m[1]);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 9) << r.out;  // total + 8 threads
  s.data = load_data(out);
  return s;
}

// Per probe: the file's samples == the trailer's recorded <= the kernel's count;
// over all probes recorded + lost == kernel; the kernel saw every call.
void expect_accounted(const SpinRun& s) {
  ASSERT_TRUE(s.data.trailer) << "no trailer";
  const Trailer& t = *s.data.trailer;
  ASSERT_EQ(t.counts.size(), 2u);
  std::map<uint32_t, uint64_t> in_file;
  for (const auto& e : s.data.samples) in_file[e.probe]++;
  uint64_t recorded = 0, kernel = 0;
  for (uint32_t p = 0; p < 2; p++) {
    EXPECT_EQ(in_file[p], t.counts[p].recorded) << "probe " << p;
    EXPECT_LE(t.counts[p].recorded, t.counts[p].kernel) << "probe " << p;
    // Every call of add was a hit of its entry and of its return probe.
    EXPECT_EQ(t.counts[p].kernel, s.calls) << "probe " << p;
    recorded += t.counts[p].recorded;
    kernel += t.counts[p].kernel;
  }
  EXPECT_EQ(recorded + t.lost, kernel);
  // uprof's own per-probe check (counter-reported drops) found nothing missing or doubled.
  EXPECT_EQ(s.err.find("WARNING"), std::string::npos) << s.err;
  EXPECT_TRUE(s.data.problems.empty());
  std::cout << "[ measured ] " << s.calls << " calls in ~3 s by 8 threads; " << recorded << " events recorded, "
            << t.lost << " lost, kernel " << kernel << "; uprof ran " << s.seconds << " s ("
            << static_cast<uint64_t>(static_cast<double>(kernel) / s.seconds) << " probe hits/s)\n";
}

TEST_P(Load, EightSpinningThreadsEveryHitAccounted) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  SpinRun s = record_spin(GetParam(), dir.file("u.data"), GetParam() != "perf" ? "2048" : "256");
  ASSERT_GT(s.calls, 10000u);
  expect_accounted(s);
  // Every one of the 8 threads shows up.
  std::set<uint32_t> tids;
  for (const auto& e : s.data.samples) tids.insert(e.tid);
  EXPECT_EQ(tids.size(), 8u);
  // The report reads the file and prints the same accounting.
  auto rep = test::run({uprof_binary(), "report", dir.file("u.data"), "--hist", "none"});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_TRUE(std::regex_search(rep.out, std::regex(R"(events: +[0-9,]+ samples, [0-9,]+ lost; kernel counted [0-9,]+)")))
      << rep.out;
}

TEST_P(Load, OnePageRingDropsButAccountsForEveryDrop) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  // A 4 KiB ring per CPU cannot keep up with 8 spinning threads: samples are dropped.
  SpinRun s = record_spin(GetParam(), dir.file("u.data"), "1");
  ASSERT_GT(s.calls, 10000u);
  expect_accounted(s);
  ASSERT_TRUE(s.data.trailer);
  EXPECT_GT(s.data.trailer->lost, 0u);
  EXPECT_NE(s.err.find("samples were dropped because a ring buffer was full"), std::string::npos) << s.err;
}

// The children the workload says it forked ("child PID C" lines).
std::set<uint32_t> children_listed(const std::string& out, long calls) {
  std::set<uint32_t> kids;
  std::istringstream lines(out);
  std::regex re("child (\\d+) " + std::to_string(calls));
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_match(l, m, re)) kids.insert(static_cast<uint32_t>(std::stoul(m[1])));
  }
  return kids;
}

// Entries and returns per pid; each pid's entries must count 0, 1, 2...
std::map<uint32_t, std::pair<uint64_t, uint64_t>> calls_per_pid(const Loaded& d) {
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> per_pid;
  std::map<uint32_t, uint32_t> next_arg;
  for (const auto& e : d.samples) {
    auto& [en, re] = per_pid[e.pid];
    if (d.probes[e.probe].kind == ProbeKind::Entry) {
      en++;
      EXPECT_EQ(static_cast<uint32_t>(e.values[0]), next_arg[e.pid]) << "pid " << e.pid;
      next_arg[e.pid] = static_cast<uint32_t>(e.values[0]) + 1;
    } else {
      re++;
    }
  }
  return per_pid;
}

void expect_every_child_exact(const Finished& r, const Loaded& d) {
  auto children = children_listed(r.out, 200);
  ASSERT_EQ(children.size(), 100u) << r.out;
  EXPECT_NE(r.out.find("calls 20000\n"), std::string::npos);
  ASSERT_TRUE(d.trailer);
  EXPECT_EQ(d.trailer->lost, 0u);
  for (const auto& c : d.trailer->counts) {
    EXPECT_EQ(c.recorded, 20000u);
    EXPECT_EQ(c.kernel, 20000u);
  }
  auto per_pid = calls_per_pid(d);
  EXPECT_EQ(per_pid.size(), 100u);
  for (uint32_t pid : children) {
    EXPECT_EQ(per_pid[pid].first, 200u) << "child " << pid;
    EXPECT_EQ(per_pid[pid].second, 200u) << "child " << pid;
  }
}

TEST_P(Load, HundredShortLivedChildrenOneAfterAnotherEveryCallRecorded) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  std::string out = dir.file("u.data");
  auto r = run_child({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", out, "-e", "add %di", "--",
                      fixture("x86_64", "workload"), "serial", "100", "200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_every_child_exact(r, load_data(out));
}

// 100 children running at once. With -a (system-wide events on a private copy of the
// program) every child's every call is recorded, and so does the BPF engine following
// the workload. Followed through the perf engine's inherited events, the kernel itself
// misses calls of some children (docs/kernel-findings.md): uprof still accounts for
// every hit the kernel counted.
TEST_P(Load, HundredConcurrentChildren) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  std::string bin = dir.file("workload");
  std::filesystem::copy_file(fixture("x86_64", "workload"), bin);

  // A larger perf ring: 100 children at once outrun a slow (sanitized) drain of 1 MiB per CPU.
  auto a = run_child({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-m", GetParam() != "perf" ? "2048" : "1024", "-a",
                      "-o", dir.file("a.data"), "-e", bin + ":add %di", "--", bin,
                      "children", "100", "200"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  expect_every_child_exact(a, load_data(dir.file("a.data")));

  auto t = run_child({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("t.data"), "-e", "add %di",
                      "--", bin, "children", "100", "200"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  // The BPF engine follows children by their fork, in the kernel: every call of every one.
  if (GetParam() != "perf") {
    expect_every_child_exact(t, load_data(dir.file("t.data")));
    return;
  }
  EXPECT_EQ(t.err.find("WARNING"), std::string::npos) << t.err;
  Loaded d = load_data(dir.file("t.data"));
  ASSERT_TRUE(d.trailer);
  // Nothing the kernel counted is missing: recorded, or lost with a count when a ring
  // was full (a sanitized drain on a busy machine falls behind 100 children).
  uint64_t kernel = 0, recorded = 0;
  for (const auto& c : d.trailer->counts) {
    EXPECT_LE(c.recorded, c.kernel);
    EXPECT_LE(c.kernel, 20000u);
    kernel += c.kernel;
    recorded += c.recorded;
  }
  EXPECT_EQ(recorded + d.trailer->lost, kernel);
  std::cout << "[ measured ] 100 concurrent children, inherited events: the kernel counted " << kernel
            << " of 40000 hits\n";
}

// Shell pipelines, one after another: processes that start, call malloc and exit while
// others run. Every call's return is seen (the BPF engine); the perf engine's inherited
// events lose a few returns of exiting processes (docs/kernel-findings.md), so there only
// the accounting is checked.
TEST_P(Load, ShellPipelinesEveryReturnSeen) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  for (int run = 0; run < 5; run++) {
    std::string out = dir.file("p" + std::to_string(run) + ".data");
    auto r = run_child({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "--no-calibrate", "-o", out, "-e",
                        "libc:malloc", "--", "/bin/bash", "-c", "seq 3000 | sort -r | uniq | wc -l"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "3000\n");
    EXPECT_EQ(r.err.find("WARNING"), std::string::npos) << r.err;
    Loaded d = load_data(out);
    ASSERT_TRUE(d.trailer);
    ASSERT_EQ(d.trailer->counts.size(), 2u);
    EXPECT_EQ(d.trailer->lost, 0u);
    for (const auto& c : d.trailer->counts) EXPECT_EQ(c.recorded, c.kernel);
    EXPECT_GT(d.trailer->counts[0].recorded, 100u);
    if (GetParam() != "perf") {
      EXPECT_EQ(d.trailer->counts[0].recorded, d.trailer->counts[1].recorded) << "run " << run << ": entries vs returns";
    }
  }
}

}  // namespace
}  // namespace uprof::robust
