// Helpers shared by the tests: where the fixtures are, running a command and
// capturing its output, a temporary directory removed at scope exit, and the skips
// of the live tests.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "uprof/attach/uprobe_pmu.h"
#include "uprof/model/recording.h"

namespace uprof::test {

// Path of a fixture built by tests/fixtures: fixture("x86_64", "funcs_O2_pie").
std::string fixture(const std::string& arch, const std::string& name);
// Path of the uprof binary built by this build.
std::string uprof_binary();

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;     // stdout
  std::string err;     // stderr
};
// Runs `argv` (no shell), capturing stdout and stderr.
CommandResult run(const std::vector<std::string>& argv);
// Runs a shell command line, capturing stdout and stderr.
CommandResult run_shell(const std::string& cmdline);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A data file read whole: its probes, its samples, the trailer, what the reader
// found wrong. A file that does not open fails the test (EXPECT) and reads empty.
struct LoadedRecording {
  std::vector<ProbeInfo> probes;
  std::vector<Event> samples;
  std::vector<Event> losses;  // the Lost events
  std::optional<Trailer> trailer;
  std::vector<std::string> problems;
};
LoadedRecording load_recording(const std::string& path);

// One call of slow_add as `uprof script --format json` shows it: the sleep its entry
// asked for (its ms argument) and the latency its return measured.
struct SleepCall {
  int64_t ms = 0;
  uint64_t ns = 0;
};
// slow_add's calls in `data`, in order, each entry paired with the next return of its thread:
//   {..."tid":7,"event":"entry","function":"slow_add","values":{"a":0,"b":1,"ms":1}}
//   {..."tid":7,"event":"return","function":"slow_add",...,"duration_ns":1100148}
std::vector<SleepCall> sleep_calls(const std::string& data);

// Waits up to `seconds` for a file to appear (a workload's pid file).
bool wait_for_file(const std::string& path, double seconds = 5);

// What a live test (real uprobes on real programs) needs of this machine.
bool is_root();
bool have_uprobe_pmu();  // the kernel's uprobe PMU, kUprobePmuDir (reading it needs no root)

// The capture engines and attach paths each live record test runs on:
//   INSTANTIATE_TEST_SUITE_P(Engines, Record, UPROF_ENGINES, test::engine_name);
//   run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), ...})
// "bpf": the BPF engine on multi-uprobe links (and sessions); "bpf_events": the BPF
// engine on one uprobe-PMU event per probe; "perf": the perf engine.
#define UPROF_ENGINES ::testing::Values(std::string("bpf"), std::string("bpf_events"), std::string("perf"))
inline std::string engine_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }
inline std::string engine_of(const std::string& param) { return param == "perf" ? "perf" : "bpf"; }
inline std::string attach_of(const std::string& param) {
  return param == "bpf" ? "links" : param == "bpf_events" ? "events" : "auto";
}

}  // namespace uprof::test

// A live test starts with one of these; each skips it saying what is missing.
//   UPROF_REQUIRE_ROOT()        uprobes, by the PMU or by tracefs, need CAP_SYS_ADMIN
//   UPROF_REQUIRE_UPROBE_PMU()  the kernel has the uprobe PMU
//   UPROF_REQUIRE_UPROBES()     both: the PMU, and root to open its events
#define UPROF_REQUIRE_ROOT()                                                                     \
  do {                                                                                           \
    if (!::uprof::test::is_root()) GTEST_SKIP() << "needs root: uprobes need CAP_SYS_ADMIN";    \
  } while (0)
#define UPROF_REQUIRE_UPROBE_PMU()                                                               \
  do {                                                                                           \
    if (!::uprof::test::have_uprobe_pmu())                                                       \
      GTEST_SKIP() << "uprobe PMU absent at " << ::uprof::kUprobePmuDir                         \
                   << ": the kernel needs CONFIG_UPROBES and CONFIG_UPROBE_EVENTS";              \
  } while (0)
#define UPROF_REQUIRE_UPROBES() \
  do {                          \
    UPROF_REQUIRE_UPROBE_PMU(); \
    UPROF_REQUIRE_ROOT();       \
  } while (0)
