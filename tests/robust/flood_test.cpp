// A flood: two threads call the probed function as fast as they can, faster than any
// drain writes them out. uprof must still stop when told, Ctrl-C (SIGINT), SIGTERM
// or --duration, and leave a whole data file whose accounting is exact: every hit the
// kernel counted was recorded or counted as lost. Before the drain was bounded, a
// flood under -a kept uprof in one endless drain pass: it ignored SIGINT and SIGTERM
// for minutes and grew to gigabytes.
//
// The bounds are one-sided and generous (a busy machine must not fail them): a
// recording that stops does so in well under a second here.
#include <regex>

#include "robust_support.h"

namespace uprof::robust {
namespace {

using test::fixture;
using test::uprof_binary;
using Clock = std::chrono::steady_clock;

constexpr auto kStopBound = std::chrono::seconds(5);

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Every test runs on each capture engine.
class Flood : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Flood, UPROF_ENGINES, test::engine_name);

// Waits until `path` holds recorded events (it grows past what it had once created):
// the probes are on and the flood is being drained.
bool recording_started(const std::string& path, Child& rec) {
  uintmax_t first = 0;
  for (int i = 0; i < 600; i++) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && first == 0) first = size;
    if (!ec && size > first) return true;
    if (rec.wait_for(std::chrono::milliseconds(50))) return false;  // it ended
  }
  return false;
}

uint64_t number(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  return std::stoull(s);
}

// uprof's own accounting, on its summary line: every hit the kernel counted was
// recorded or counted lost (the kernel's drop counters); and the file is whole: report
// reads it and finds as many samples, and the kernel's count in its trailer. (Read from
// report's lines, not by loading the file: a flood is millions of events.)
void expect_whole_and_accounted(const std::string& path, const std::string& uprof_err, const std::string& what) {
  std::smatch s;
  ASSERT_TRUE(std::regex_search(uprof_err, s, std::regex(R"(([0-9,]+) events recorded, ([0-9,]+) lost \(kernel counted ([0-9,]+)\))")))
      << what << ": " << uprof_err;
  const uint64_t recorded = number(s[1]), lost = number(s[2]), kernel = number(s[3]);
  EXPECT_EQ(recorded + lost, kernel) << what << ": " << s[0];
  EXPECT_GT(kernel, 10000u) << what << ": no flood";
  auto rep = test::run({uprof_binary(), "report", "-i", path, "--hist", "none"});
  EXPECT_EQ(rep.exit_code, 0) << what << ": " << rep.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(rep.out, m, std::regex(R"(events: +([0-9,]+) samples, [0-9,]+ lost; kernel counted ([0-9,]+))")))
      << what << ": " << rep.out;
  EXPECT_EQ(number(m[1]), recorded) << what << ": " << m[0];
  EXPECT_EQ(number(m[2]), kernel) << what << ": " << m[0];
  EXPECT_EQ(rep.out.find("warning:"), std::string::npos) << what << ": " << rep.out;
  std::cout << "[ measured ] " << what << ": " << s[0] << "\n";
}

// The issue's case: -a on libc's malloc beside threads that call it flat out. uprof
// calls malloc too: had the drain allocated per event, each of its own calls would
// take the probe's trap as well (the program drops uprof's hits, the trap stays).
// The probes are in every process of the machine while it runs, for a few seconds.
TEST_P(Flood, SigintOrSigtermDuringAFloodEndsTheRecordingAndTheFileIsWhole) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string out = dir.file(std::string("flood-") + std::to_string(sig) + ".data");
    Child flood({fixture("x86_64", "workload"), "mallocs", "2", "120000"});
    Child rec({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "--no-calibrate", "-a", "-o", out, "-e",
               "libc:malloc"});
    ASSERT_TRUE(recording_started(out, rec)) << rec.err();
    std::this_thread::sleep_for(std::chrono::seconds(1));  // the flood has filled the ring by now
    const auto t0 = Clock::now();
    ::kill(rec.pid(), sig);
    auto st = rec.wait_for(kStopBound);
    const double took = seconds_since(t0);
    ASSERT_TRUE(st) << "uprof did not stop within 5 s of signal " << sig << " during a flood";
    EXPECT_EQ(*st, 0) << rec.err();
    std::cout << "[ measured ] stopped " << took << " s after signal " << sig << "\n";
    ::kill(flood.pid(), SIGKILL);
    expect_whole_and_accounted(out, rec.err(), "signal " + std::to_string(sig) + ", -a -e libc:malloc");
  }
}

// A launched workload: Ctrl-C reaches uprof, which passes it on to the workload.
TEST_P(Flood, SigintDuringAFloodOfTheLaunchedWorkload) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string out = dir.file("u.data");
  Child rec({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "--no-calibrate", "-o", out, "-e", "add %di", "--",
             fixture("x86_64", "workload"), "spin", "2", "120000"});
  ASSERT_TRUE(recording_started(out, rec)) << rec.err();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto t0 = Clock::now();
  ::kill(rec.pid(), SIGINT);
  auto st = rec.wait_for(kStopBound);
  ASSERT_TRUE(st) << "uprof did not stop within 5 s of SIGINT during a flood";
  std::cout << "[ measured ] stopped " << seconds_since(t0) << " s after SIGINT\n";
  EXPECT_NE(rec.err().find("the workload was killed by SIGINT"), std::string::npos) << rec.err();
  expect_whole_and_accounted(out, rec.err(), "SIGINT, launched workload");
}

// --duration 1 under a flood: the whole command, start-up and detach included, ends
// within a few seconds of it.
TEST_P(Flood, DurationEndsAFlood) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string out = dir.file("u.data");
  Child flood({fixture("x86_64", "workload"), "mallocs", "2", "120000"});
  const auto t0 = Clock::now();
  Child rec({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "--no-calibrate", "-a", "--duration", "1", "-o", out,
             "-e", "libc:malloc"});
  auto st = rec.wait_for(std::chrono::seconds(1) + 2 * kStopBound);
  const double took = seconds_since(t0);
  ASSERT_TRUE(st) << "uprof --duration 1 did not end within 11 s during a flood";
  EXPECT_EQ(*st, 0) << rec.err();
  EXPECT_NE(rec.err().find("events recorded"), std::string::npos) << rec.err();
  std::cout << "[ measured ] --duration 1 took " << took << " s in all\n";
  ::kill(flood.pid(), SIGKILL);
  expect_whole_and_accounted(out, rec.err(), "--duration 1, -a -e libc:malloc");
}

}  // namespace
}  // namespace uprof::robust
