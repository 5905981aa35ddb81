// USDT probes, live, on both engines: the fixture's probes (tests/fixtures/usdt.c) at
// -O0 (arguments in memory) and -O2 (in registers), with the semaphore the kernel sets;
// a start/done pair as calls; python3's own probes (its function and gc pairs) against
// the script's own counts; libstdc++'s throw and catch in a C++ program; a running
// process (-p). Each oracle is the program's own numbers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include "support/test_support.h"
#include "uprof/model/string_value.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class Usdt : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Usdt, ::testing::Values("bpf", "perf"), test::engine_name);

// Debian's python3 (3.11 here) is built with --with-dtrace: its probes are in the executable.
const char* kPython = "/usr/bin/python3";

std::map<std::string, int> hits_by_function(const test::LoadedRecording& rec) {
  std::map<std::string, int> n;
  for (const Event& s : rec.samples) n[rec.probes[s.probe].function]++;
  return n;
}

std::string text_of(const Event& e, unsigned slot) {
  if (e.missing >> slot & 1) return "<unreadable>";
  return std::string(recorded_strings().text(e.values[slot]).bytes);
}

TEST_P(Usdt, FixtureArgumentsAndSemaphoreAtO0AndO2) {
  UPROF_REQUIRE_UPROBES();
  for (const char* opt : {"O0", "O2"}) {
    SCOPED_TRACE(opt);
    test::TempDir dir;
    // A semaphore is the kernel's per file: while the other engine's run of this test has
    // the fixture probed, every process of that file sees it set. A copy of its own keeps
    // this run's "nobody set it" true.
    const std::string program = dir.file("usdt");
    std::filesystem::copy_file(fixture("x86_64", std::string("usdt_") + opt), program);
    auto plain = run({program});
    ASSERT_EQ(plain.exit_code, 0);
    EXPECT_EQ(plain.out, "ticks traced: 0 of 3\nwork traced: 0 of 3\n");  // nobody set the semaphores
    auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("u.data"), "-e",
                  "usdt:uprof_fx:tick", "-e", "usdt:uprof_fx:konst", "-e", "usdt:uprof_fx:pair", "--", program});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The kernel set tick's while the probe was attached, and no other.
    EXPECT_EQ(r.out, "ticks traced: 3 of 3\nwork traced: 0 of 3\n");
    auto rec = test::load_recording(dir.file("u.data"));
    ASSERT_TRUE(rec.problems.empty());
    auto hits = hits_by_function(rec);
    EXPECT_EQ(hits["uprof_fx:tick"], 3);
    EXPECT_EQ(hits["uprof_fx:konst"], 3);
    EXPECT_EQ(hits["uprof_fx:pair"], 3);
    int64_t k = 0, n = 0;
    for (const Event& s : rec.samples) {
      const std::string& f = rec.probes[s.probe].function;
      if (f == "uprof_fx:tick") {
        ASSERT_EQ(s.nvalues, 5);
        // tick((int8_t)-k, (uint16_t)(k + 60000), -100000 * k, (int64_t)argc << 40, k)
        EXPECT_EQ(static_cast<int8_t>(s.values[0]), -k);
        EXPECT_EQ(static_cast<uint16_t>(s.values[1]), k + 60000);
        EXPECT_EQ(static_cast<int32_t>(s.values[2]), -100000 * k);
        EXPECT_EQ(static_cast<int64_t>(s.values[3]), int64_t{1} << 40);
        EXPECT_EQ(s.values[4], static_cast<uint64_t>(k));
        ++k;
      } else if (f == "uprof_fx:konst") {
        ASSERT_EQ(s.nvalues, 1);
        EXPECT_EQ(static_cast<int64_t>(s.values[0]), -1);
      } else if (f == "uprof_fx:pair") {
        ASSERT_EQ(s.nvalues, 2);
        EXPECT_EQ(s.values[0], static_cast<uint64_t>(n));
        EXPECT_EQ(static_cast<int32_t>(s.values[1]), 2 * n);
        ++n;
      }
    }
  }
}

// work__start and work__done around a sleep of n+1 ms: three calls, keyed by n.
TEST_P(Usdt, StartDonePairIsCallsWithLatencies) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = dir.file("usdt");  // its own semaphores: see above
  std::filesystem::copy_file(fixture("x86_64", "usdt_O2"), program);
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "--pair-by", "arg1", "-o", dir.file("w.data"),
                "-e", "usdt:uprof_fx:work__*", "--", program});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ticks traced: 0 of 3\nwork traced: 3 of 3\n");
  auto rep = run({uprof_binary(), "report", "--format", "csv", "--by", "$arg1", dir.file("w.data")});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  auto json = run({uprof_binary(), "report", "--format", "json", dir.file("w.data")});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"name\":\"uprof_fx:work\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"paired\":true,\"calls\":3,"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"return without entry\":0"), std::string::npos);
  // Each call lasts its sleep: n+1 ms, plus scheduling, well under a further ms.
  auto rec = test::load_recording(dir.file("w.data"));
  std::map<uint64_t, uint64_t> start;
  int calls = 0;
  for (const Event& s : rec.samples) {
    const std::string& f = rec.probes[s.probe].function;
    if (f == "uprof_fx:work__start") start[s.values[0]] = s.time;
    if (f == "uprof_fx:work__done") {
      ASSERT_TRUE(start.count(s.values[0]));
      const uint64_t d = s.time - start[s.values[0]];
      EXPECT_GE(d, (s.values[0] + 1) * 1000000);
      EXPECT_LT(d, (s.values[0] + 1) * 1000000 + 50000000);
      ++calls;
    }
  }
  EXPECT_EQ(calls, 3);
  for (uint64_t n = 0; n < 3; n++) EXPECT_NE(rep.out.find("uprof_fx:work [$arg1=" + std::to_string(n) + "]"), std::string::npos) << rep.out;
}

// python3.11's function__return fires at every return, with the file, the function
// and the line; function__entry fires only for a few frames (CPython gh-98894, fixed
// for 3.15), so entries are not checked against the count. A return with no entry is a
// call without a latency, never paired with another function's entry: fib's calls are
// the script's count.
TEST_P(Usdt, PythonFunctionReturnsCountEveryCall) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string script = dir.file("fib.py");
  std::ofstream(script) << "calls = 0\n"
                           "def fib(n):\n"
                           "    global calls\n"
                           "    calls += 1\n"
                           "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
                           "fib(12)\n"
                           "print(calls)\n";
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("py.data"), "-e",
                "usdt:python:function__*", "--", kPython, script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out, "465\n");  // fib(12) makes 2 fib(13) - 1 = 465 calls
  auto rec = test::load_recording(dir.file("py.data"));
  int returns = 0, entries = 0;
  for (const Event& s : rec.samples) {
    const ProbeInfo& p = rec.probes[s.probe];
    ASSERT_GE(s.nvalues, 3);
    if (text_of(s, 1) != "fib" || text_of(s, 0) != script) continue;
    if (p.function == "python:function__return") ++returns;
    if (p.function == "python:function__entry") ++entries;
  }
  EXPECT_EQ(returns, 465);
  EXPECT_LE(entries, returns);
  // The paired report: one row for fib, its calls and its returns without an entry
  // adding up to the script's count.
  auto rep = run({uprof_binary(), "report", "--format", "json", "--by", "func", dir.file("py.data")});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const auto at = rep.out.find("\"by_value\":\"fib\"");
  ASSERT_NE(at, std::string::npos) << rep.out;
  const std::string row = rep.out.substr(at, rep.out.find("\"values\"", at) - at);
  auto number_after = [&](const std::string& key) {
    auto k = row.find("\"" + key + "\":");
    EXPECT_NE(k, std::string::npos) << key << " in " << row;
    return k == std::string::npos ? -1 : std::stol(row.substr(k + key.size() + 3));
  };
  // Every return is a call of fib, timed or not: the script's own count.
  EXPECT_EQ(number_after("calls"), 465) << row;
  EXPECT_EQ(number_after("return without entry"), 0) << row;
  EXPECT_EQ(number_after("unwound"), 0);
  auto text = run({uprof_binary(), "report", "--by", "func", dir.file("py.data")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(std::regex_search(text.out, std::regex(R"(python:function \[func="fib"\] +465 )"))) << text.out;
  EXPECT_NE(text.out.find("counted as calls, without a latency (python 3.11 fires function__entry only when a "
                          "generator or coroutine starts, CPython gh-98894)"),
            std::string::npos)
      << text.out;
}

// gc.collect() N times with automatic collection off: the gc__start/gc__done pair
// gives N more calls for N more collections (the interpreter's own collections at
// start-up and exit are the same in both runs), all paired.
TEST_P(Usdt, PythonGcPairCountsCollections) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  auto gc_calls = [&](int n) {
    const std::string script = dir.file("gc.py");
    std::ofstream(script) << "import gc\ngc.disable()\nfor i in range(" << n << "):\n    gc.collect()\n";
    auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("gc.data"), "-e",
                  "usdt:python:gc__*", "--", kPython, script});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto rec = test::load_recording(dir.file("gc.data"));
    auto hits = hits_by_function(rec);
    EXPECT_EQ(hits["python:gc__start"], hits["python:gc__done"]);
    auto rep = run({uprof_binary(), "report", "--format", "json", dir.file("gc.data")});
    EXPECT_NE(rep.out.find("\"name\":\"python:gc\""), std::string::npos) << rep.out;
    EXPECT_NE(rep.out.find("\"paired\":true,\"calls\":" + std::to_string(hits["python:gc__done"]) + ","),
              std::string::npos)
        << rep.out;
    return hits["python:gc__done"];
  };
  const int ten = gc_calls(10), forty = gc_calls(40);
  EXPECT_EQ(forty - ten, 30);
}

// A C++ program that throws 10 exceptions (tests/fixtures/throw.cpp: every fourth of
// 40 calls) and catches them: libstdc++'s throw and catch probes, in a shared library
// the program loads, fire 10 times each.
TEST_P(Usdt, LibstdcxxThrowAndCatchInTheLibrary) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "throw");
  auto plain = run({program, "40"});
  ASSERT_EQ(plain.exit_code, 0);
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("t.data"), "-e",
                "usdt:libstdcxx:throw", "-e", "usdt:libstdcxx:catch", "--", program, "40"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_NE(r.out.find("caught 10"), std::string::npos);
  auto rec = test::load_recording(dir.file("t.data"));
  auto hits = hits_by_function(rec);
  EXPECT_EQ(hits["libstdcxx:throw"], 10);
  EXPECT_EQ(hits["libstdcxx:catch"], 10);
  for (const ProbeInfo& p : rec.probes) EXPECT_NE(p.path.find("libstdc++.so"), std::string::npos) << p.path;
}

// A python process that is already running: the kernel sets the semaphore in its
// memory when the probe is attached, and gc calls are seen and paired.
TEST_P(Usdt, RunningProcessByPid) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string script = dir.file("loop.py"), pidfile = dir.file("pid");
  std::ofstream(script) << "import gc, os, time\ngc.disable()\n"
                           "open('" << pidfile << ".tmp', 'w').write(str(os.getpid()))\n"
                           "os.rename('" << pidfile << ".tmp', '" << pidfile << "')\n"
                           "for i in range(250):\n    gc.collect()\n    time.sleep(0.005)\n";
  std::thread workload([&] { run({kPython, script}); });
  ASSERT_TRUE(test::wait_for_file(pidfile, 10));
  std::string pid;
  std::ifstream(pidfile) >> pid;
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-p", pid, "--duration", "0.5", "-o",
                dir.file("p.data"), "-e", "usdt:python:gc__*"});
  workload.join();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rep = run({uprof_binary(), "report", "--format", "json", dir.file("p.data")});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  auto rec = test::load_recording(dir.file("p.data"));
  auto hits = hits_by_function(rec);
  EXPECT_GT(hits["python:gc__done"], 10);  // about 0.5 s / 5 ms, less the collections' own time
  EXPECT_LE(hits["python:gc__start"] - hits["python:gc__done"], 1);  // one may be open at the end
  EXPECT_GE(hits["python:gc__start"] - hits["python:gc__done"], -1);
}

// gcc passes `names[i % 2]` as `8@-24(%rsp,%rax,8)` (tests/fixtures/usdt_indexed.c): an
// address with an index register, which neither engine reads. A glob over the provider
// records the probe's other arguments and names the one it skips; naming that argument
// is refused with the same reason.
TEST_P(Usdt, AnArgumentUprofCannotReadIsSkippedWithANote) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "usdt_indexed");
  auto notes = run({"readelf", "-n", program});
  ASSERT_NE(notes.out.find("(%rsp,%rax,8)"), std::string::npos) << "the compiler no longer emits the operand:\n"
                                                                << notes.out;
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                test::attach_of(GetParam()), "-o", dir.file("u.data"), "-e", "usdt:uprof_ix:*", "--", program, "6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, run({program, "6"}).out);
  EXPECT_NE(r.err.find("usdt: uprof_ix:pick: argument 2 (8@-24(%rsp,%rax,8)) is not recorded: an address with an "
                       "index register, which uprof does not read; its other arguments are"),
            std::string::npos)
      << r.err;
  auto s = run({uprof_binary(), "script", dir.file("u.data")});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  for (int i = 0; i < 6; i++)
    EXPECT_NE(s.out.find("uprof_ix:pick($arg1=" + std::to_string(i) + ", $arg3=" + std::to_string(3 * i) + ")"),
              std::string::npos)
        << s.out;
  auto named = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                    test::attach_of(GetParam()), "-o", dir.file("n.data"), "-e", "usdt:uprof_ix:pick $arg2", "--",
                    program, "6"});
  EXPECT_EQ(named.exit_code, 1);
  EXPECT_EQ(named.err, "uprof: spec: value '$arg2': argument 2 of uprof_ix:pick is 8@-24(%rsp,%rax,8): an address "
                       "with an index register, which uprof does not read\n");
}

// A spec that names no probe, or a value the probe does not have, is refused in one
// line before the workload starts.
TEST_P(Usdt, BadSpecsAreRefusedBeforeTheWorkloadRuns) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "usdt_O2");
  const std::string marker = dir.file("ran");
  struct Case {
    std::string spec, error;
  };
  // The workload is a shell that would leave a mark: the specs name the fixture.
  const std::string in = "usdt:" + program + ":";
  for (const Case& c : std::vector<Case>{
           {in + "uprof_fx:nosuch", "uprof: spec: '" + in + "uprof_fx:nosuch': no USDT probe uprof_fx:nosuch in " +
                                        program + " (there are 6: uprof_fx:tick, uprof_fx:konst, uprof_fx:work__start, "
                                        "uprof_fx:work__done, uprof_fx:plain, uprof_fx:pair)\n"},
           {in + "uprof_fx:tick $retval", "uprof: spec: value '$retval': the USDT probe uprof_fx:tick has no return value\n"},
           {in + "uprof_fx:tick $arg6", "uprof: spec: value '$arg6': the USDT probe uprof_fx:tick has 5 arguments\n"},
           {in + "uprof_fx:konst $arg1:string",
            "uprof: spec: value '$arg1:string': argument 1 of uprof_fx:konst is the constant -1, not a string's address\n"},
       }) {
    auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("x.data"), "-e", c.spec, "--",
                  "/bin/sh", "-c", "touch " + marker + "; exec " + program});
    EXPECT_EQ(r.exit_code, 1) << c.spec;
    EXPECT_EQ(r.err, c.error);
    EXPECT_FALSE(std::filesystem::exists(marker)) << c.spec << ": the workload ran";
  }
}

}  // namespace
}  // namespace uprof
