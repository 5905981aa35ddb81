// IFUNCs, live on both engines: `libc:strlen` probes the implementation the loader
// selects. Oracles: perf stat's counts of tracefs probes (perf probe) on every one of
// libc's __strlen_* implementations over the same program, and, for -p, the address the
// process's own dlsym gives under GLIBC_TUNABLES that make its loader choose otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::run_shell;
using test::uprof_binary;

const std::string kLibc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
// Disables what the AVX2 and EVEX implementations need: glibc 2.36 then picks __strlen_sse2.
const std::string kTunables = "glibc.cpu.hwcaps=-AVX2,-AVX512F,-AVX512VL,-AVX512BW,-EVEX,-BMI2";

class Ifunc : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Ifunc, UPROF_ENGINES, test::engine_name);

int entries_of(const test::LoadedRecording& rec, const std::string& function) {
  int n = 0;
  for (const Event& s : rec.samples)
    n += rec.probes[s.probe].kind == ProbeKind::Entry && rec.probes[s.probe].function == function;
  return n;
}

// "uprof: strlen -> __strlen_evex (IFUNC, selected for this CPU)" -> "__strlen_evex".
std::string chosen(const std::string& out, const std::string& how) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"(strlen -> (\S+) \(IFUNC, )" + how + R"(\))"))) return "";
  return m[1];
}

test::CommandResult perf_probe(std::vector<std::string> args) {
  args.insert(args.begin(), {"perf", "probe"});
  return run(args);
}

// tracefs probes made with perf probe, one per implementation, removed at scope exit.
struct PerfProbes {
  std::string group = "uprof_ifunc_" + std::to_string(::getpid());
  // perf probe refuses an event name another group has ("event \"impl0\" already
  // exists", exit 239, when both engines' tests ran at once): the pid is in it too.
  std::string event_prefix = "impl" + std::to_string(::getpid()) + "_";
  std::vector<std::string> names;  // the implementations, in event order impl<pid>_0, _1, ...
  ~PerfProbes() { perf_probe({"-q", "-d", group + ":*"}); }
};

TEST_P(Ifunc, StrlenCountsMatchPerfStatOnTheSelectedImplementation) {
  UPROF_REQUIRE_UPROBES();
  if (run_shell("command -v perf").exit_code != 0) GTEST_SKIP() << "perf is not installed";
  PerfProbes probes;
  auto funcs = perf_probe({"-x", kLibc, "-F", "__strlen_*"});
  std::istringstream lines(funcs.out);
  for (std::string name; std::getline(lines, name);)
    if (!name.empty()) probes.names.push_back(name);
  if (probes.names.size() < 2) GTEST_SKIP() << "perf sees no __strlen_* in libc (libc6-dbg?): " << funcs.err;
  std::string events;
  for (std::size_t i = 0; i < probes.names.size(); i++) {
    const std::string event = probes.group + ":" + probes.event_prefix + std::to_string(i);
    auto add = perf_probe({"-q", "-x", kLibc, "--add", event + "=" + probes.names[i]});
    ASSERT_EQ(add.exit_code, 0) << add.err;
    events += (events.empty() ? "" : ",") + event;
  }
  const std::string bin = fixture("x86_64", "strlen_calls");
  auto stat = run({"perf", "stat", "-x,", "-e", events, "--", bin, "5000"});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  std::map<std::string, long> perf_counts;  // implementation -> calls
  std::istringstream stat_lines(stat.err);
  for (std::string line; std::getline(stat_lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"(^(\d+),,)" + probes.group + ":" + probes.event_prefix + R"((\d+),)")))
      perf_counts[probes.names.at(std::stoul(m[2]))] = std::stol(m[1]);
  }
  ASSERT_EQ(perf_counts.size(), probes.names.size()) << stat.err;

  test::TempDir dir;
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("s.data"), "-e", "libc:strlen", "--",
                bin, "5000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "strlen calls 5000\n");
  const std::string impl = chosen(r.err, "selected for this CPU");
  ASSERT_NE(perf_counts.count(impl), 0u) << "uprof chose '" << impl << "':\n" << r.err;
  const int calls = entries_of(test::load_recording(dir.file("s.data")), "strlen");
  EXPECT_GE(calls, 5000);
  EXPECT_EQ(calls, perf_counts[impl]) << stat.err;
  for (const auto& [name, n] : perf_counts)
    if (name != impl) {
      EXPECT_EQ(n, 0) << name << " ran, not " << impl;
    }
}

// The link-time address of `symbol` in libc's debug file (libc6-dbg), by nm; 0 when none.
uint64_t libc_debug_address(const std::string& symbol) {
  auto id = run_shell("readelf -n " + kLibc + " | awk '/Build ID/ {print $3}'").out;
  if (id.size() < 3) return 0;
  id.pop_back();
  const std::string debug = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  auto out = run_shell("nm " + debug + " 2>/dev/null | awk '$3 == \"" + symbol + "\" {print $1}'").out;
  return out.empty() ? 0 : std::stoull(out, nullptr, 16);
}

// -p: the implementation the process's loader bound, which GLIBC_TUNABLES made differ
// from what this CPU gets by default; the process's own dlsym says which.
TEST_P(Ifunc, RunningProcessUsesWhatItsLoaderBound) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string pidfile = dir.file("pid"), stop = dir.file("stop");
  std::thread workload([&] {
    run({"/usr/bin/env", "GLIBC_TUNABLES=" + kTunables, fixture("x86_64", "strlen_calls"), "loop", pidfile, stop});
  });
  struct Stop {
    std::string file;
    std::thread& t;
    ~Stop() {
      std::ofstream{file};
      t.join();
    }
  } stopper{stop, workload};
  ASSERT_TRUE(test::wait_for_file(pidfile, 10));
  std::string pid, vaddr;
  std::ifstream(pidfile) >> pid >> vaddr;

  auto here = run({uprof_binary(), "probe", "libc:strlen"});
  ASSERT_EQ(here.exit_code, 0) << here.err;
  const std::string default_impl = chosen(here.out, "selected for this CPU");
  auto there = run({uprof_binary(), "probe", "-p", pid, "libc:strlen"});
  ASSERT_EQ(there.exit_code, 0) << there.err;
  const std::string impl = chosen(there.out, "as process " + pid + " bound it");
  ASSERT_FALSE(impl.empty()) << there.out;
  if (const uint64_t at = libc_debug_address(impl)) {
    EXPECT_EQ(at, std::stoull(vaddr, nullptr, 16)) << impl;
  }
  if (default_impl != "__strlen_sse2") {
    EXPECT_NE(impl, default_impl) << "GLIBC_TUNABLES changed nothing";
  }
  // strstr: neither libc's own slots nor the fixture bind it, and the process started
  // with other tunables than uprof: which implementation it would get is not known.
  auto unbound = run({uprof_binary(), "probe", "-p", pid, "libc:strstr"});
  EXPECT_EQ(unbound.exit_code, 1);
  EXPECT_NE(unbound.err.find("'strstr' is an IFUNC"), std::string::npos) << unbound.err;
  EXPECT_NE(unbound.err.find("process " + pid + " has bound no reference to 'strstr' yet, and its loader may select "
                             "otherwise: process " + pid + " started with GLIBC_TUNABLES=" + kTunables + ", uprof without"),
            std::string::npos)
      << unbound.err;

  // About a call a millisecond for 1 s: on the wrong implementation, none.
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-p", pid, "--duration", "1", "-o",
                dir.file("p.data"), "-e", "libc:strlen"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(chosen(r.err, "as process " + pid + " bound it"), impl) << r.err;
  EXPECT_GT(entries_of(test::load_recording(dir.file("p.data")), "strlen"), 200);
}

}  // namespace
}  // namespace uprof
