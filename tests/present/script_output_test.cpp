// `uprof script`'s three formats on one hand-built recording, byte for byte against
// the golden files in tests/present/golden/ (written by this test when
// UPROF_UPDATE_GOLDEN=1 is set; review their diff like code). The recording has
// what a script line can say: paired calls, hits of an entry-only, a return-only
// and a mid-function probe, an unwound frame, a return without entry, lost samples,
// a thread and a process forked (the process inherits an open call), an exec
// rename, a pid reused by a later fork, a thread that exits inside a call, and a
// call still open at the end.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include "analyse/event_builders.h"
#include "uprof/analyse/report_model.h"
#include "uprof/present/script_output.h"

namespace uprof {
namespace {

// The event builders, by their short names.
namespace b = test;

constexpr uint64_t kStart = 1'000'000;
uint64_t t(uint64_t us) { return kStart + us * 1000; }

// f(len) -> long (#0, #1), g (#2, #3), main entry only (#4), r return only (#5),
// f+0x10 mid-function (#6).
std::vector<ProbeInfo> probes() {
  std::vector<ProbeInfo> p{
      b::probe(0, ProbeKind::Entry, "f", 0x1000, {"len"}), b::probe(1, ProbeKind::Return, "f", 0x1000, {"$retval"}),
      b::probe(2, ProbeKind::Entry, "g", 0x2000),          b::probe(3, ProbeKind::Return, "g", 0x2000),
      b::probe(4, ProbeKind::Entry, "main", 0x3000),       b::probe(5, ProbeKind::Return, "r", 0x4000, {"$retval"}),
      b::probe(6, ProbeKind::Entry, "f", 0x1010, {"%ax"}, 0x10),
  };
  p[0].values[0].size = 4;
  p[0].values[0].is_signed = true;
  return p;
}

std::vector<Event> events() {
  return {
      b::comm_event(10, 10, "server", t(0)),
      b::sample(0, 10, t(1), {5}), b::sample(1, 10, t(3), {55}),  // f(5) = 55
      b::sample(4, 10, t(4)),                                   // main, a hit
      b::fork_event(10, 11, 10, 10, t(5)),                      // thread 11: "server" too
      b::sample(2, 11, t(6), {}, 10), b::sample(0, 11, t(7), {6}, 10),
      b::sample(3, 11, t(9), {}, 10),                           // g returns: f unwound
      b::sample(5, 11, t(10), {7}, 10), b::sample(6, 10, t(11), {42}),
      b::sample(1, 12, t(12), {1}),                             // a return without entry, unnamed pid 12
      b::lost(t(13), 3),
      b::sample(0, 10, t(14), {8}),
      b::fork_event(20, 20, 10, 10, t(15)),                     // a process: inherits the open f
      b::sample(1, 20, t(16), {1}), b::sample(1, 10, t(17), {2}),
      b::comm_event(20, 20, "worker", t(18)),                   // the child execs
      b::sample(0, 20, t(19), {9}), b::sample(1, 20, t(20), {3}),
      b::comm_event(30, 30, "old", t(21)), b::sample(0, 30, t(22), {1}), b::sample(1, 30, t(23), {4}),
      b::exit_event(30, t(24)),
      b::fork_event(30, 30, 10, 10, t(25)),                     // pid 30 again: a child of "server"
      b::sample(0, 30, t(26), {2}), b::sample(1, 30, t(27), {5}),
      b::comm_event(10, 11, "renamed", t(28)),
      b::sample(0, 11, t(29), {3}, 10), b::exit_event(11, t(30), 10),  // exits inside f
      b::sample(0, 10, t(31), {4}),                              // still open at the end
  };
}

std::string write_recording(const std::string& name) {
  RecordingMeta meta;
  meta.start_monotonic_ns = kStart;
  return test::write_data_file(name, meta, probes(), events());
}

std::string run_cases(ScriptFormat format) {
  const std::string path = write_recording("script_golden");
  const std::vector<std::pair<std::string, AggregateFilter>> cases{
      {"all", {}},
      {"--comm serv*", {.comms = {"serv*"}}},
      {"--comm old", {.comms = {"old"}}},
      {"--pid 10 --function g", {.pids = {10}, .functions = {"g"}}},
      {"--tid 20", {.tids = {20}}},
      {"--since 7us --until 20us", {.since = 7000, .until = 20000}},
  };
  std::string all;
  for (const auto& [name, filter] : cases) {
    std::ostringstream out, problems;
    auto st = write_script(path, {.format = format, .filter = filter}, out, problems);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    EXPECT_EQ(problems.str(), "");
    all += "== " + name + "\n" + out.str();
  }
  std::filesystem::remove(path);
  return all;
}

void expect_golden(const std::string& file, const std::string& actual) {
  const std::string path = std::string(UPROF_SOURCE_DIR) + "/tests/present/golden/" + file;
  if (std::getenv("UPROF_UPDATE_GOLDEN")) std::ofstream(path) << actual;
  std::ifstream in(path);
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(actual, golden.str()) << "golden " << path << " (UPROF_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(ScriptOutput, TextMatchesGolden) { expect_golden("script.txt", run_cases(ScriptFormat::Text)); }
TEST(ScriptOutput, JsonLinesMatchGolden) { expect_golden("script.jsonl", run_cases(ScriptFormat::JsonLines)); }
TEST(ScriptOutput, ChromeTraceMatchesGolden) { expect_golden("script.chrome.json", run_cases(ScriptFormat::Chrome)); }

// The times a text line shows never go back: a call's line (known at its return) waits
// for the calls inside it; an unwound frame's line comes in its place. A call open while
// more than 65,536 lines wait behind it (main around 70,000 calls of f) is two lines: its
// entry at its entry's time, its return at its return's.
std::vector<uint64_t> shown_times(const std::string& text) {
  std::vector<uint64_t> times;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    const auto dot = l.find('.');
    times.push_back(std::stoull(l.substr(0, dot)) * 1'000'000'000 + std::stoull(l.substr(dot + 1, 9)));
  }
  return times;
}

TEST(ScriptOutput, TextLinesAreInTheOrderOfTheirTimes) {
  std::vector<ProbeInfo> p{b::probe(0, ProbeKind::Entry, "f", 0x1000), b::probe(1, ProbeKind::Return, "f", 0x1000),
                           b::probe(2, ProbeKind::Entry, "main", 0x3000, {"argc"}),
                           b::probe(3, ProbeKind::Return, "main", 0x3000, {"$retval"})};
  RecordingMeta meta;
  meta.start_monotonic_ns = kStart;
  auto script_of = [&](const std::vector<Event>& ev) {
    const std::string path = test::write_data_file("script_order", meta, p, ev);
    std::ostringstream out, problems;
    EXPECT_TRUE(write_script(path, {}, out, problems).ok());
    std::filesystem::remove(path);
    return out.str();
  };
  // Nested: main(1) { f { f } } and a second thread's f between.
  const std::string nested = script_of({
      b::sample(2, 10, t(1), {1}), b::sample(0, 10, t(2)), b::sample(0, 10, t(3)), b::sample(0, 11, t(4)),
      b::sample(1, 11, t(5)), b::sample(1, 10, t(6)), b::sample(1, 10, t(7)), b::sample(3, 10, t(8), {0}),
      b::sample(0, 10, t(9)),  // open at the end
  });
  EXPECT_EQ(nested,
            "0.000001000  10 10/10  main(argc=1) = 0  [7.00us]\n"
            "0.000002000  10 10/10  f()  [5.00us]\n"
            "0.000003000  10 10/10  f()  [3.00us]\n"
            "0.000004000  11 11/11  f()  [1.00us]\n"
            "0.000009000  10 10/10  f()  <no return: recording stopped>\n");

  std::vector<Event> many{b::sample(2, 10, t(1), {2})};
  const int calls = 70'000;
  for (int i = 0; i < calls; ++i) {
    many.push_back(b::sample(0, 10, t(2) + 4 * i));
    many.push_back(b::sample(1, 10, t(2) + 4 * i + 2));
  }
  many.push_back(b::sample(3, 10, t(2) + 4 * calls, {0}));
  const std::string text = script_of(many);
  const std::vector<uint64_t> times = shown_times(text);
  ASSERT_EQ(times.size(), static_cast<std::size_t>(calls) + 2);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  EXPECT_EQ(text.substr(0, text.find('\n')), "0.000001000  10 10/10  main(argc=2) ...");
  const std::string last = text.substr(text.rfind('\n', text.size() - 2) + 1);
  EXPECT_EQ(last, "0.000282000  10 10/10  main%return = 0  [281us]\n");
}

// Both go through one loop and one filter: under a --comm filter, across a forked
// thread, a forked process, an exec and a reused pid, script shows exactly the calls,
// hits and unmatched entries that report counts, thread by thread.
TEST(ScriptOutput, ReportAndScriptKeepTheSameCallsUnderACommFilter) {
  const std::string path = write_recording("script_agree");
  using Key = std::tuple<uint32_t, uint32_t, std::string>;  // pid, tid, function
  for (const char* comm : {"server", "serv*", "worker", "old", "renamed", "*", "nobody"}) {
    SCOPED_TRACE(comm);
    const AggregateFilter filter{.comms = {comm}};
    auto m = build_report(path, {.by = GroupBy::Thread, .filter = filter});
    ASSERT_TRUE(m.ok()) << m.error().message;
    std::map<Key, uint64_t> report, script;
    for (const GroupStats& g : m->groups) {
      const uint64_t n = g.calls + g.unmatched_total();
      if (n) report[{g.pid, g.tid, m->functions.functions[g.function].name}] += n;
    }
    std::ostringstream out, problems;
    ASSERT_TRUE(write_script(path, {.filter = filter}, out, problems).ok());
    // "0.000014000  server 20/20  f(len=8) = 1  [2.00us]", "...  r%return = 7"
    const std::regex line(R"(^[0-9.]+  \S+ ([0-9]+)/([0-9]+)  ([^(%\s]+))");
    std::istringstream in(out.str());
    for (std::string l; std::getline(in, l);) {
      std::smatch mt;
      if (l.find("  LOST ") != std::string::npos) continue;
      ASSERT_TRUE(std::regex_search(l, mt, line)) << l;
      script[{static_cast<uint32_t>(std::stoul(mt[1])), static_cast<uint32_t>(std::stoul(mt[2])), mt[3]}]++;
    }
    EXPECT_EQ(script, report);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace uprof
