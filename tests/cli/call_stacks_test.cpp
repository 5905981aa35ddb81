// record -g on real programs: why_slow (built -O2 without frame pointers) recorded with
// call stacks on every engine; each frame symbolized here through the file's own symbol
// table, as a user reads the callers: work's callers are spinner and sleeper, each as
// often as the program says, and every stack reaches main; a libc function called by the
// fixture unwinds through libc; --stack-min keeps only the long calls' stacks.
#include <gtest/gtest.h>

#include <unistd.h>

#include <map>
#include <memory>
#include <sstream>

#include "support/test_support.h"
#include "uprof/resolve/image.h"
#include "uprof/store/data_file.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class CallStacks : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, CallStacks, UPROF_ENGINES, test::engine_name);

// A data file's samples, each with its stack as function names (innermost first), and
// the Object events' paths.
struct Stacks {
  std::vector<ProbeInfo> probes;
  std::vector<std::pair<Event, std::vector<std::string>>> samples;
  std::map<uint32_t, std::string> objects;
  bool object_after_use = false;  // a frame named an object before its Object event
};

// The function of `offset` in `path` (a return address: the call is at offset - 1);
// "?" when no symbol covers it.
std::string function_at(const std::string& path, uint64_t offset) {
  static std::map<std::string, std::unique_ptr<Image>> images;
  auto& img = images[path];
  if (!img) {
    auto loaded = Image::load(path, DebugSearch{});
    if (!loaded) return "?";
    img = std::move(*loaded);
  }
  auto vaddr = offset_to_vaddr(img->elf.loads(), offset - 1);
  const Function* f = vaddr ? img->functions.containing(*vaddr) : nullptr;
  return f ? f->name() : "?";
}

Stacks read_stacks(const std::string& file) {
  Stacks s;
  auto f = DataFileReader::open(file);
  EXPECT_TRUE(f) << f.error().message;
  if (!f) return s;
  s.probes = f->probes();
  Event e;
  while (f->next(e)) {
    if (e.kind == EventKind::Object) s.objects[e.object] = e.path;
    if (e.kind != EventKind::Sample) continue;
    std::vector<std::string> names;
    for (const StackFrame& fr : e.stack) {
      if (!s.objects.count(fr.object)) {
        s.object_after_use |= fr.object != 0;
        names.push_back("?");
        continue;
      }
      names.push_back(function_at(s.objects[fr.object], fr.offset));
    }
    s.samples.emplace_back(e, std::move(names));
  }
  return s;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ";") + n;
  return s;
}

// The immediate caller of each entry's stack, counted; each stack must name a caller and
// reach main ("[none]" stands for a stack without frames).
std::map<std::string, int> entry_callers(const Stacks& s) {
  std::map<std::string, int> callers;
  for (const auto& [e, names] : s.samples) {
    if (s.probes[e.probe].kind != ProbeKind::Entry) continue;
    EXPECT_FALSE(names.empty());
    callers[names.empty() ? "[none]" : names[0]]++;
    EXPECT_TRUE(has(names, "main")) << joined(names);
  }
  return callers;
}

std::vector<std::string> record_args(const std::string& engine, const std::string& file) {
  return {uprof_binary(), "record", "--engine", test::engine_of(engine), "--attach", test::attach_of(engine), "-o", file};
}

TEST_P(CallStacks, EachCallOfWorkHasItsCallerAndReachesMain) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "why_slow");
  auto args = record_args(GetParam(), dir.file("s.data"));
  for (const char* a : {"-g", "-e", "work", "--", program.c_str(), "30", "200"}) args.push_back(a);
  auto r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.out.find("spinner calls 30 "), std::string::npos) << r.out;

  Stacks s = read_stacks(dir.file("s.data"));
  EXPECT_FALSE(s.object_after_use);
  std::map<std::string, int> callers;
  int entries = 0;
  for (const auto& [e, names] : s.samples) {
    const ProbeInfo& p = s.probes[e.probe];
    if (p.kind != ProbeKind::Entry) {
      EXPECT_TRUE(e.stack.empty()) << "a return carries no stack when its entry has one";
      continue;
    }
    entries++;
    ASSERT_FALSE(names.empty());
    callers[names[0]]++;
    EXPECT_TRUE(has(names, "main")) << joined(names);
    // main's caller is libc's start code: the unwinding went through libc.so.6 too.
    EXPECT_GE(names.size(), 3u) << joined(names);
  }
  EXPECT_EQ(entries, 60);
  EXPECT_EQ(callers["spinner"], 30);
  EXPECT_EQ(callers["sleeper"], 30);
  bool libc = false;
  for (const auto& [id, path] : s.objects) libc |= path.find("libc.so") != std::string::npos;
  EXPECT_TRUE(libc) << "no frame in libc (main is called by __libc_start_call_main)";
}

// A libc function the fixture calls through libc: nanosleep() calls clock_nanosleep();
// the stack runs from libc through work and sleeper to main. work is probed too: its
// return address on the stack is the kernel's return trampoline while it runs, which the
// unwinding must see through (on x86-64; stack_unwinder.h).
TEST_P(CallStacks, ALibraryFunctionUnwindsThroughTheLibrary) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "why_slow");
  auto args = record_args(GetParam(), dir.file("l.data"));
  for (const char* a : {"-g", "--no-args", "-e", "libc:clock_nanosleep", "-e", "work", "--", program.c_str(), "10", "2000"}) args.push_back(a);
  auto r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Stacks s = read_stacks(dir.file("l.data"));
  int seen = 0;
  for (const auto& [e, names] : s.samples) {
    if (s.probes[e.probe].kind != ProbeKind::Entry || s.probes[e.probe].function == "work") continue;
    seen++;
    // [nanosleep (libc), work, sleeper, main, ...]: work may be reached straight from
    // clock_nanosleep where libc tail-calls it.
    auto w = std::find(names.begin(), names.end(), "work");
    ASSERT_NE(w, names.end()) << joined(names);
    ASSERT_LT(w + 2, names.end()) << joined(names);
    EXPECT_EQ(w[1], "sleeper") << joined(names);
    EXPECT_EQ(w[2], "main") << joined(names);
  }
  EXPECT_EQ(seen, 10);
}

// --stack-min: entries carry no stack; a return carries its caller chain when the call
// took at least the minimum, and none when it was shorter.
TEST_P(CallStacks, StackMinKeepsTheStacksOfLongCallsOnly) {
  UPROF_REQUIRE_UPROBES();
  const std::string program = fixture("x86_64", "why_slow");
  for (const auto& [min, expect_stacks] : {std::pair<std::string, bool>{"1ms", true}, {"30s", false}}) {
    SCOPED_TRACE(min);
    test::TempDir dir;
    auto args = record_args(GetParam(), dir.file("m.data"));
    // 2 ms calls: each at least 1 ms, none 30 s.
    for (const char* a : {"-g", "--stack-min", min.c_str(), "-e", "work", "--", program.c_str(), "10", "2000"})
      args.push_back(a);
    auto r = run(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Stacks s = read_stacks(dir.file("m.data"));
    std::map<std::string, int> callers;
    int returns = 0;
    for (const auto& [e, names] : s.samples) {
      const ProbeInfo& p = s.probes[e.probe];
      if (p.kind == ProbeKind::Entry) {
        EXPECT_TRUE(e.stack.empty());
        continue;
      }
      returns++;
      if (!expect_stacks) {
        EXPECT_TRUE(e.stack.empty()) << joined(names);
        continue;
      }
      ASSERT_FALSE(names.empty());
      callers[names[0]]++;
      EXPECT_TRUE(has(names, "main")) << joined(names);
    }
    EXPECT_EQ(returns, 20);
    if (expect_stacks) {
      EXPECT_EQ(callers["spinner"], 10);
      EXPECT_EQ(callers["sleeper"], 10);
    }
  }
}

// A short run with few stacks: 8 calls in about 80 ms, whose stacks fill no ring to its
// wakeup mark. The perf engine reads its rings at a quarter full or every 100 ms, after
// such a process ended: its mappings come from the side band's MMAP2 records (it lost
// every stack of such a run before: "8 of 8 call stacks have no frame").
TEST_P(CallStacks, AShortRunKeepsEveryStack) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "why_slow");
  auto args = record_args(GetParam(), dir.file("short.data"));
  for (const char* a : {"-g", "-e", "work", "--", program.c_str(), "4", "10000"}) args.push_back(a);
  auto r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("have no frame"), std::string::npos) << r.err;
  Stacks s = read_stacks(dir.file("short.data"));
  const std::map<std::string, int> callers = entry_callers(s);
  EXPECT_EQ(callers, (std::map<std::string, int>{{"sleeper", 4}, {"spinner", 4}}));
}

// Forty processes of about a millisecond each, one after the other: each ends before
// uprof may have read its /proc/PID/maps (on a busy machine most do). Their mappings
// come from the kernel's MMAP2 records (attach/mapping_watch.h on the BPF engine, the
// side band on the perf engine), so every stack still has its frames.
TEST_P(CallStacks, ManyShortProcessesKeepEveryStack) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "why_slow");
  auto args = record_args(GetParam(), dir.file("many.data"));
  const std::string loop = "for i in $(seq 40); do '" + program + "' 1 0 >/dev/null; done";
  for (const std::string& a : {std::string("-g"), std::string("--no-args"), std::string("-e"), program + ":work",
                               std::string("--"), std::string("sh"), std::string("-c"), loop})
    args.push_back(a);
  auto r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("have no frame"), std::string::npos) << r.err;
  Stacks s = read_stacks(dir.file("many.data"));
  const std::map<std::string, int> callers = entry_callers(s);
  EXPECT_EQ(callers, (std::map<std::string, int>{{"sleeper", 40}, {"spinner", 40}}));
}

// A stripped copy (no symbols, no DWARF; .eh_frame stays, as in Debian's packages) whose
// symbols and DWARF are in a separate debug file (.gnu_debuglink) unwinds to the same
// frames as the binary it was stripped from.
TEST_P(CallStacks, AStrippedCopyUnwindsTheSame) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string stripped = dir.file("why_slow_stripped"), debug = dir.file("why_slow_stripped.debug");
  ASSERT_EQ(test::run({"objcopy", "--only-keep-debug", fixture("x86_64", "why_slow"), debug}).exit_code, 0);
  ASSERT_EQ(test::run({"objcopy", "--strip-all", "--add-gnu-debuglink=" + debug, fixture("x86_64", "why_slow"),
                       stripped}).exit_code, 0);
  std::vector<std::vector<StackFrame>> runs[2];
  for (int i = 0; i < 2; i++) {
    const std::string program = i == 0 ? fixture("x86_64", "why_slow") : stripped;
    auto args = record_args(GetParam(), dir.file("x.data"));
    for (const char* a : {"-g", "--no-args", "-e", "work", "--", program.c_str(), "5", "2000"}) args.push_back(a);
    auto r = run(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Stacks s = read_stacks(dir.file("x.data"));
    for (const auto& [e, names] : s.samples)
      if (s.probes[e.probe].kind == ProbeKind::Entry) runs[i].push_back(e.stack);
  }
  ASSERT_EQ(runs[0].size(), 10u);
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_GE(runs[1][0].size(), 3u);
}

// --call-graph fp: a build with frame pointers gives the same callers by its chain.
TEST_P(CallStacks, FramePointersGiveTheSameCallersInABuildThatKeepsThem) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "why_slow_fp");
  auto args = record_args(GetParam(), dir.file("f.data"));
  for (const char* a : {"--call-graph", "fp", "-e", "work", "--", program.c_str(), "10", "2000"}) args.push_back(a);
  auto r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Stacks s = read_stacks(dir.file("f.data"));
  std::map<std::string, int> callers;
  for (const auto& [e, names] : s.samples) {
    if (s.probes[e.probe].kind != ProbeKind::Entry) continue;
    ASSERT_GE(names.size(), 2u) << joined(names);
    callers[names[0]]++;
    EXPECT_EQ(names[1], "main") << joined(names);
  }
  EXPECT_EQ(callers["spinner"], 10);
  EXPECT_EQ(callers["sleeper"], 10);
}

// perf record --call-graph dwarf on the same run (uprof follows perf and its child): for
// each call of work, perf's callchain below work is uprof's stack, frame for frame (perf
// shows a return address minus one, the call instruction's last byte; uprof the address).
TEST_P(CallStacks, EachStackIsPerfCallGraphDwarfsOnTheSameRun) {
  UPROF_REQUIRE_UPROBES();
  if (test::run_shell("command -v perf").exit_code != 0) GTEST_SKIP() << "perf is not installed";
  test::TempDir dir;
  // A copy of its own: perf probe's tracefs probe goes on this inode only.
  const std::string program = dir.file("ws");
  ASSERT_EQ(test::run({"cp", fixture("x86_64", "why_slow"), program}).exit_code, 0);
  const std::string group = "uprof_stacks_" + std::to_string(::getpid());
  struct Remove {
    std::string group;
    ~Remove() { test::run({"perf", "probe", "-q", "-d", group + ":*"}); }
  } remove{group};
  auto added = test::run({"perf", "probe", "-q", "-x", program, group + ":work" + std::to_string(::getpid()) + "=work"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  auto args = record_args(GetParam(), dir.file("u.data"));
  for (const std::string& a : {std::string("-g"), std::string("--no-args"), std::string("-e"), program + ":work",
                               std::string("--"), std::string("perf"), std::string("record"), std::string("-q"),
                               std::string("-e"), group + ":work" + std::to_string(::getpid()),
                               std::string("--call-graph"), std::string("dwarf"), std::string("-o"), dir.file("p.data"),
                               std::string("--"), program, std::string("10"), std::string("100")})
    args.push_back(a);
  auto r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto script = test::run({"perf", "script", "-i", dir.file("p.data"), "-F", "ip", "--no-inline"});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  // perf script: a blank line between samples, one hex address per frame, work's first.
  std::vector<std::vector<uint64_t>> perf_stacks(1);
  std::istringstream lines(script.out);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find_first_not_of(" \t");
    if (at == std::string::npos) {
      if (!perf_stacks.back().empty()) perf_stacks.emplace_back();
      continue;
    }
    perf_stacks.back().push_back(std::stoull(line.substr(at), nullptr, 16));
  }
  if (perf_stacks.back().empty()) perf_stacks.pop_back();
  Stacks s = read_stacks(dir.file("u.data"));
  std::vector<std::vector<uint64_t>> uprof_stacks;
  for (const auto& [e, names] : s.samples) {
    if (s.probes[e.probe].kind != ProbeKind::Entry || e.pid != e.tid || s.objects.empty()) continue;
    std::vector<uint64_t> offsets;
    for (const StackFrame& f : e.stack) offsets.push_back(f.offset);
    uprof_stacks.push_back(std::move(offsets));
  }
  ASSERT_EQ(perf_stacks.size(), 20u) << script.out;
  ASSERT_EQ(uprof_stacks.size(), 20u);
  for (std::size_t i = 0; i < 20; i++) {
    SCOPED_TRACE(i);
    ASSERT_EQ(perf_stacks[i].size(), uprof_stacks[i].size() + 1);  // perf's first frame is work itself
    for (std::size_t k = 0; k < uprof_stacks[i].size(); k++) EXPECT_EQ(perf_stacks[i][k + 1] + 1, uprof_stacks[i][k]);
  }
}

}  // namespace
}  // namespace uprof
