// Source lines and inlined functions, live on both engines, on tests/fixtures/lines.c
// (its lines found by their "LINE:name" markers, never by number): a line's probe
// address against eu-addr2line, a loop body's line counted once per iteration, a local
// read at a line, and an inlined function counted once per call, out-of-line copy and
// inlined copies together on one report row.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "support/test_support.h"
#include "uprof/resolve/resolver.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

// The line holding "LINE:name" in tests/fixtures/lines.c.
int line_of(const std::string& marker) {
  std::ifstream in(std::string(UPROF_SOURCE_DIR) + "/tests/fixtures/lines.c");
  std::string text;
  for (int n = 1; std::getline(in, text); n++)
    if (text.find("LINE:" + marker + " ") != std::string::npos) return n;
  ADD_FAILURE() << "no marker " << marker;
  return 0;
}

std::string line_spec(const std::string& marker) { return "lines.c:" + std::to_string(line_of(marker)); }

// `uprof report --format csv`: calls per row, by name.
std::map<std::string, long> calls_by_row(const std::string& data) {
  auto r = run({uprof_binary(), "report", "-i", data, "--format", "csv"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, long> out;
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);  // header
  const std::regex row(R"re(^("[^"]*"|[^,]*),("[^"]*"|[^,]*),\d+,\d+,(\d+),)re");
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::string name = m[1];
    if (name.size() > 1 && name.front() == '"') name = name.substr(1, name.size() - 2);
    EXPECT_EQ(out.count(name), 0u) << name << " has two rows:\n" << r.out;
    out[name] = std::stol(m[3]);
  }
  return out;
}

class Lines : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, Lines, UPROF_ENGINES, test::engine_name);

// Every address a line resolves to is that line, says elfutils. At -O0 (one row per
// address). At -O2 several rows share an address (0x1230: line 24 is_stmt, then line 23
// as a view), and eu-addr2line names the last: there the address must be a statement
// start of the line in binutils' decoded line table.
bool stmt_row_in_objdump(const std::string& bin, uint64_t vaddr, int line) {
  auto d = run({"objdump", "--dwarf=decodedline", bin});
  EXPECT_EQ(d.exit_code, 0) << d.err;
  std::ostringstream want;
  want << R"(lines\.c\s+)" << line << R"(\s+0x)" << std::hex << vaddr << R"((\s+\d+)?\s+x)";
  return std::regex_search(d.out, std::regex(want.str()));
}

TEST(LineSites, AddressesAreTheLineByAddr2line) {
  for (const char* opt : {"lines_O0", "lines_O2"}) {
    const std::string bin = fixture("x86_64", opt);
    const bool exact = std::string(opt) == "lines_O0";
    for (const char* marker : {"loop_body", "loop_return", "sq_body"}) {
      Resolver resolver;
      auto spec = parse_probe_spec(line_spec(marker));
      ASSERT_TRUE(spec) << spec.error().message;
      auto probes = resolver.resolve(*spec, bin);
      ASSERT_TRUE(probes) << probes.error().message;
      ASSERT_FALSE(probes->empty());
      for (const auto& p : *probes) {
        EXPECT_TRUE(p.is_site());
        EXPECT_EQ(p.label(), line_spec(marker));
        std::ostringstream addr;
        addr << "0x" << std::hex << p.vaddr;
        auto a = run({"eu-addr2line", "-e", bin, addr.str()});
        ASSERT_EQ(a.exit_code, 0) << a.err;
        if (!exact) {
          EXPECT_TRUE(stmt_row_in_objdump(bin, p.vaddr, line_of(marker))) << opt << " " << marker << " at " << addr.str();
          continue;
        }
        EXPECT_NE(a.out.find("lines.c:" + std::to_string(line_of(marker))), std::string::npos)
            << opt << " " << marker << " at " << addr.str() << ": " << a.out;
      }
    }
  }
}

TEST(LineSites, ErrorsSayWhatIsThere) {
  const std::string bin = fixture("x86_64", "lines_O2");
  Resolver resolver;
  auto none = resolver.resolve(*parse_probe_spec("lines.c:9999"), bin);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("'lines.c:9999': no code at that line; nearest lines with code: "),
            std::string::npos)
      << none.error().message;
  auto file = resolver.resolve(*parse_probe_spec("nope.c:3"), bin);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find("no source file 'nope.c' in the line table (its files: "), std::string::npos)
      << file.error().message;
  // FUNC:LINE counts from the line of the function's name (perf probe's FUNC:RLN).
  const int decl = line_of("loop_body") - 3;
  auto rel = resolver.resolve(*parse_probe_spec("loop_sum:" + std::to_string(line_of("loop_body") - decl)), bin);
  ASSERT_TRUE(rel) << rel.error().message;
  auto abs = resolver.resolve(*parse_probe_spec(line_spec("loop_body")), bin);
  ASSERT_TRUE(abs);
  ASSERT_EQ(rel->size(), abs->size());
  EXPECT_EQ(rel->front().vaddr, abs->front().vaddr);
}

TEST_P(Lines, ALoopBodyLineCountsEachIteration) {
  UPROF_REQUIRE_UPROBES();
  for (const char* opt : {"lines_O0", "lines_O2"}) {
    test::TempDir dir;
    auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("l.data"), "-e",
                  line_spec("loop_body"), "-e", line_spec("loop_return"), "--", fixture("x86_64", opt), "7"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto rows = calls_by_row(dir.file("l.data"));
    EXPECT_EQ(rows[line_spec("loop_body")], 7) << opt;
    // At -O2 gcc marks the return's line a statement only on the path of n <= 0.
    if (std::string(opt) == "lines_O0") {
      EXPECT_EQ(rows[line_spec("loop_return")], 1) << opt;
    }
  }
}

TEST_P(Lines, ALocalAtALine) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  // loop_sum(5, 3): acc before each iteration's `acc += i * k` is 0, 3, 9, 18, 30 ... of i*3.
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("l.data"), "-e",
                line_spec("loop_body") + " acc i", "--", fixture("x86_64", "lines_O0"), "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = run({uprof_binary(), "script", dir.file("l.data")});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  std::vector<std::string> got;
  const std::regex value(R"((i=\d+, acc=-?\d+))");
  for (std::sregex_iterator it(s.out.begin(), s.out.end(), value), end; it != end; ++it) got.push_back((*it)[1]);
  // Innermost scope first: the loop's i, then the function's acc.
  EXPECT_EQ(got, (std::vector<std::string>{"i=0, acc=0", "i=1, acc=0", "i=2, acc=3", "i=3, acc=9", "i=4, acc=18"}))
      << s.out;
}

// A line inside an inlined copy sees the copy's parameters and every enclosing scope's
// variables, as gdb shows them (its frame, then a frame up): `times` inlined in
// scaled_sum's loop sees x and by, then the loop's i, then n, k and acc. At hit j of
// scaled_sum(5, 3): x = i = j, acc = 3 * (0 + ... + j-1), n = 5, k = 3.
TEST_P(Lines, ALineInAnInlinedCopySeesTheEnclosingScopes) {
  UPROF_REQUIRE_UPROBES();
  for (const char* opt : {"lines_O0", "lines_O2"}) {
    SCOPED_TRACE(opt);
    test::TempDir dir;
    auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach",
                  test::attach_of(GetParam()), "-o", dir.file("l.data"), "-e",
                  line_spec("times_body") + " x acc i n k", "--", fixture("x86_64", opt), "5"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto s = run({uprof_binary(), "script", dir.file("l.data")});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    std::vector<std::map<std::string, std::string>> hits;
    std::istringstream in(s.out);
    for (std::string line; std::getline(in, line);) {
      if (line.find(line_spec("times_body") + "(") == std::string::npos) continue;
      std::map<std::string, std::string> values;
      const std::regex value(R"(\b(x|acc|i|n|k)=([^,)]+))");
      for (std::sregex_iterator it(line.begin(), line.end(), value), end; it != end; ++it) values[(*it)[1]] = (*it)[2];
      hits.push_back(values);
    }
    ASSERT_EQ(hits.size(), 5u) << s.out;
    for (int j = 0; j < 5; j++) {
      SCOPED_TRACE(j);
      const std::string n = std::to_string(j);
      EXPECT_EQ(hits[j], (std::map<std::string, std::string>{
                             {"x", n}, {"i", n}, {"acc", std::to_string(3 * j * (j - 1) / 2)}, {"n", "5"}, {"k", "3"}}))
          << s.out;
    }
  }
}

TEST_P(Lines, InlinedFunctionsCountEveryCall) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string bin = fixture("x86_64", "lines_O2");
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("i.data"), "-e", "sq", "-e", "twice",
                "--", bin, "6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // sq: never out of line, 3 copies in squares; twice: its copy for the pointer, and inlined in main.
  EXPECT_NE(r.err.find("sq: 3 sites: 0 out-of-line, 3 inlined"), std::string::npos) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(twice: \d+ sites: 1 out-of-line, \d+ inlined)"))) << r.err;
  auto rows = calls_by_row(dir.file("i.data"));
  EXPECT_EQ(rows["sq"], 18);
  EXPECT_EQ(rows["twice"], 12);
}

// perf probe's FUNC:RLN looks into the function's inlined copies: sq (never out of line)
// has 3 copies in squares, so `sq:1` (its body line) has a site in each, the same
// addresses as `lines.c:LINE`; and the three specs, at one address, each count every hit.
TEST_P(Lines, AFunctionLineIsFoundInItsInlinedCopies) {
  UPROF_REQUIRE_UPROBES();
  const int body = line_of("sq_body");
  for (const char* opt : {"lines_O0", "lines_O2"}) {
    SCOPED_TRACE(opt);
    test::TempDir dir;
    auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("f.data"), "-e", "sq:1", "-e",
                  "sq", "-e", "lines.c:" + std::to_string(body), "--", fixture("x86_64", opt), "4"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("sq:1: 3 sites (squares"), std::string::npos) << r.err;
    auto rows = calls_by_row(dir.file("f.data"));
    EXPECT_EQ(rows["sq:1"], 12);
    EXPECT_EQ(rows["sq"], 12);
    EXPECT_EQ(rows["lines.c:" + std::to_string(body)], 12);
  }
  // A relative line past the function's code is refused, before anything runs.
  auto far = run({uprof_binary(), "probe", fixture("x86_64", "lines_O2"), "sq:40"});
  EXPECT_EQ(far.exit_code, 1);
  EXPECT_EQ(far.err.rfind("uprof: spec: 'sq:40': no code at that line", 0), 0u) << far.err;
}

// C++ members that exist only as inlined copies (tests/fixtures/lines_cxx.cpp), named as
// people name them: qualified, with or without the parameter list that tells overloads
// apart, each reported on its own row under its demangled name.
TEST_P(Lines, InlinedCxxMembersByTheirQualifiedNames) {
  UPROF_REQUIRE_UPROBES();
  for (const char* opt : {"lines_cxx_O0", "lines_cxx_O2"}) {
    SCOPED_TRACE(opt);
    test::TempDir dir;
    const std::string bin = fixture("x86_64", opt);
    auto p = run({uprof_binary(), "probe", bin, "ns::Acc::add"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    EXPECT_NE(p.out.find("ns::Acc::add(long) (inlined into run(int)+0x"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("ns::Acc::add(int, int) (inlined into run(int)+0x"), std::string::npos) << p.out;
    auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("c.data"), "-e",
                  "ns::Acc::add(long)", "-e", "ns::Acc::add(int, int)", "-e", "ns::Acc::add(long):1", "--", bin, "7"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "total 63\n");  // sum of i, plus sum of 2i, for i < 7
    auto rows = calls_by_row(dir.file("c.data"));
    EXPECT_EQ(rows["ns::Acc::add(long)"], 7);
    EXPECT_EQ(rows["ns::Acc::add(int, int)"], 7);
    EXPECT_EQ(rows["ns::Acc::add(long):1"], 7);
    EXPECT_EQ(rows.size(), 3u);
  }
}

}  // namespace
}  // namespace uprof
