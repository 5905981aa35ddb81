// Strings and memory behind pointers, on both engines, on a program built by the test
// build (tests/fixtures/strings.c) at -O0 and -O2: a `const char *` parameter is
// captured as its string by DWARF alone; tracefs' fetch syntax reaches a struct's
// char[16] member, a pointer member's string and a number behind the pointer; a NULL
// and a bad pointer print <unreadable> and the program is unharmed; a string longer
// than --string-size is cut, and says so.
#include <gtest/gtest.h>

#include <map>

#include "support/test_support.h"
#include "uprof/model/string_value.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

struct StringsCase {
  std::string engine;
  std::string opt;
};

class Strings : public ::testing::TestWithParam<StringsCase> {};
INSTANTIATE_TEST_SUITE_P(EnginesAndOpts, Strings,
                         ::testing::Values(StringsCase{"bpf", "O0"}, StringsCase{"bpf", "O2"}, StringsCase{"bpf_events", "O2"},
                                           StringsCase{"perf", "O0"}, StringsCase{"perf", "O2"}),
                         [](const auto& param_info) { return param_info.param.engine + "_" + param_info.param.opt; });

std::string text_of(const Event& e, unsigned slot) {
  if (e.missing >> slot & 1) return "<unreadable>";
  StringBytes s = recorded_strings().text(e.values[slot]);
  return std::string(s.bytes) + (s.cut ? "..." : "");
}

TEST_P(Strings, ParametersMembersAndBadPointersReadAsTheProgramHasThem) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "strings_" + GetParam().opt);
  auto plain = run({program, "40"});
  ASSERT_EQ(plain.exit_code, 0);

  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam().engine), "--attach", test::attach_of(GetParam().engine), "--string-size", "16", "-o",
                dir.file("s.data"), "-e", "lookup", "-e",
                "visit name=+4(%di):string label=+0(+24(%di)):string weight=+32(%di) id=+0(%di):s32", "-e",
                "measure", "--", program, "40"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);  // the probes change nothing the program computes

  auto rec = test::load_recording(dir.file("s.data"));
  std::map<std::string, int> keys;
  std::vector<std::string> measured;
  int visits = 0;
  static const char* labels[] = {"red", "green", "blue \"quoted\"\n"};
  for (const auto& s : rec.samples) {
    const ProbeInfo& p = rec.probes[s.probe];
    if (p.kind != ProbeKind::Entry) continue;
    if (p.function == "lookup") {
      ASSERT_EQ(p.values[0].name, "key");
      ASSERT_TRUE(p.values[0].is_string());  // const char *, by DWARF
      keys[text_of(s, 0)]++;
    } else if (p.function == "measure") {
      measured.push_back(text_of(s, 0));
    } else if (p.function == "visit") {
      SCOPED_TRACE(visits);
      ASSERT_GE(s.nvalues, 4);
      const int i = visits++;
      EXPECT_EQ(text_of(s, s.nvalues - 4), "item-" + std::to_string(i % 4));
      EXPECT_EQ(text_of(s, s.nvalues - 3), labels[i % 3]);
      EXPECT_EQ(s.values[s.nvalues - 2], static_cast<uint64_t>(10 * i));
      EXPECT_EQ(static_cast<int32_t>(s.values[s.nvalues - 1]), i);
    }
  }
  EXPECT_EQ(visits, 40);
  ASSERT_EQ(keys.size(), 11u);
  for (int k = 0; k < 10; k++) EXPECT_EQ(keys["key" + std::to_string(k)], 4) << k;
  EXPECT_EQ(keys["hello, world"], 1);
  // NULL, (char *)16, and 199 bytes of 'x' cut at --string-size 16.
  EXPECT_EQ(measured, (std::vector<std::string>{"<unreadable>", "<unreadable>", std::string(16, 'x') + "..."}));

  // The report counts strings as it counts numbers.
  auto rep = run({uprof_binary(), "report", dir.file("s.data")});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.out.find("label: 40 strings; most frequent: \"red\" (14) \"green\" (13) \"blue \\\"quoted\\\"\\n\" (13)"),
            std::string::npos)
      << rep.out;
  auto by = run({uprof_binary(), "report", "--by", "key", dir.file("s.data")});
  ASSERT_EQ(by.exit_code, 0) << by.err;
  EXPECT_NE(by.out.find("lookup [key=\"key7\"]"), std::string::npos) << by.out;
}

// Globals: the fixture's own (an int, a char pointer followed to its string, a char
// array read where it is, one by its nm address), and one of libc's, read from a probe
// in libc (this program has one thread: __libc_single_threaded is 1).
TEST_P(Strings, GlobalsOfTheProgramAndOfALibrary) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "strings_" + GetParam().opt);
  auto nm = test::run_shell("nm " + program + " | awk '$3 == \"visits\" {print $1}'");
  ASSERT_EQ(nm.exit_code, 0);
  const std::string visits_at = "0x" + nm.out.substr(0, nm.out.find('\n'));
  auto plain = run({program, "6"});
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam().engine), "--attach", test::attach_of(GetParam().engine), "--string-size", "16", "-o",
                dir.file("g.data"), "-e",
                "visit @visits again=@" + visits_at + " +0(@greeting):string @long_text:string", "-e",
                "libc:printf @__libc_single_threaded:u8", "--", program, "6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  auto s = run({uprof_binary(), "script", dir.file("g.data")});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  for (int i = 0; i < 6; i++) {
    const std::string n = std::to_string(i);
    EXPECT_NE(s.out.find("visit(@visits=" + n + ", again=" + n + ", +0(@greeting)=\"hello, world\", @long_text=\"" +
                         std::string(16, 'x') + "\"...)"),
              std::string::npos)
        << s.out;
  }
  EXPECT_NE(s.out.find("printf(@__libc_single_threaded=1)"), std::string::npos) << s.out;
  // At a return the instruction pointer is the caller's: refused before the workload runs.
  auto ret = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam().engine), "--attach", test::attach_of(GetParam().engine), "-o", dir.file("r.data"), "-e",
                  "visit%return @visits", "--", program, "6"});
  EXPECT_EQ(ret.exit_code, 1);
  EXPECT_TRUE(ret.out.empty());
  EXPECT_NE(ret.err.find("not at a return probe"), std::string::npos) << ret.err;
}

// The same struct's members by DWARF: it->name (char[16]), it->label (a pointer
// followed), it->weight and it->id (numbers of their declared sizes), key[1] (a char), and
// $comm.
TEST_P(Strings, MembersByDwarfTypeReadAsThePointerPointsTo) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string program = fixture("x86_64", "strings_" + GetParam().opt);
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam().engine), "--attach", test::attach_of(GetParam().engine), "-o", dir.file("m.data"), "-e",
                "visit it->name it->label it->weight it->id", "-e", "lookup key[1] $comm", "--", program, "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = run({uprof_binary(), "script", dir.file("m.data")});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("visit(it->name=\"item-2\", it->label=\"blue \\\"quoted\\\"\\n\", it->weight=20, it->id=2) = 28"),
            std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("visit(it->name=\"item-3\", it->label=\"red\", it->weight=30, it->id=3) = 39"), std::string::npos)
      << s.out;
  // $comm: the thread's name when the probe fired.
  const std::string comm = "$comm=\"strings_" + GetParam().opt + "\"";
  EXPECT_NE(s.out.find("lookup(key[1]='e', " + comm + ") = 51"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("lookup(key[1]='e', " + comm + ") = 140"), std::string::npos) << s.out;  // "hello, world"
}

// measure(const char *s) on arm64 -O2 is `cmp x0, #0; cset x0, ne; ret`: the string
// is read from the address in x0, so the entry probe must not move past the cset
// that overwrites x0 (it did, onto the simulated ret, and read the string at address
// 1, in the arm64 guest: tests/arm64's args_strings case).
TEST(StringsPlacement, AStringsBaseRegisterKeepsTheProbeBeforeWhatOverwritesIt) {
  auto r = run({uprof_binary(), "probe", fixture("arm64", "strings_O2"), "measure"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("writes %x0, which the probe reads"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("emulated (ret)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace uprof
