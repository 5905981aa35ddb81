// C++ names as people write them, live on both engines: compiler clones counted as
// their source function (tests/fixtures/clones.cpp prints how often main called each
// function: the oracle), and libstdc++'s operators named with spaces.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "support/test_support.h"

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

class CxxNames : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engines, CxxNames, UPROF_ENGINES, test::engine_name);

// `uprof report --format csv`: calls per row, by function name; a name twice fails.
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

// "scale(int, int) 27" in the fixture's output -> 27.
long printed(const std::string& out, const std::string& what) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(what + R"( (\d+))"))) return -1;
  return std::stol(m[1]);
}

TEST_P(CxxNames, ClonesCountAsTheirSourceFunction) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string bin = fixture("x86_64", "clones_O2");
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("c.data"), "-e",
                "ns::Klass::scale(int, int)", "-e", "ns::Klass::method(int, const ns::Big&, int) x", "-e", "check", "--",
                bin, "10", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("uprof: ns::Klass::scale(int, int): 2 entry points, the function and its clone .constprop.0, "
                       "counted as one function\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("ambiguous"), std::string::npos) << r.err;
  const auto rows = calls_by_row(dir.file("c.data"));
  EXPECT_EQ(rows.at("ns::Klass::scale(int, int)"), printed(r.out, R"(scale\(int, int\))"));  // 27: 10 + 17
  EXPECT_EQ(rows.at("ns::Klass::method(int, ns::Big const&, int)"),
            printed(r.out, R"(method\(int, Big const&, int\))"));
  // check's test is inlined into main; the calls past it run check.part.0.
  EXPECT_EQ(rows.at("check(int)"), printed(r.out, R"(check\(int\) \d+,)"));
  EXPECT_EQ(rows.size(), 3u);

  // -fwhole-program: the overload exists only as its .isra clone.
  const std::string wp = fixture("x86_64", "clones_wp");
  auto w = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("w.data"), "-e",
                "ns::Klass::method(double)", "--", wp, "12"});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_NE(w.err.find("uprof: ns::Klass::method(double): probed at its clone .isra.0"), std::string::npos) << w.err;
  EXPECT_EQ(calls_by_row(dir.file("w.data")), (std::map<std::string, long>{{"ns::Klass::method(double)", 12}}));
}

// Debian's libstdc++: `operator new(unsigned long)` as the demangler prints it, and the
// glob `operator delete*` (the fixture's `delete` calls the sized operator delete). The
// oracle is the fixture's count of the objects it news and deletes.
TEST_P(CxxNames, LibstdcxxOperatorsWithSpaces) {
  UPROF_REQUIRE_UPROBES();
  test::TempDir dir;
  const std::string bin = fixture("x86_64", "clones_O2");
  auto r = run({uprof_binary(), "record", "--engine", test::engine_of(GetParam()), "--attach", test::attach_of(GetParam()), "-o", dir.file("n.data"), "-e",
                "libstdc++:operator new(unsigned long) $arg1", "-e", "libstdc++:operator delete*", "--", bin, "7", "3",
                "new"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = calls_by_row(dir.file("n.data"));
  EXPECT_EQ(rows.at("operator new(unsigned long)"), printed(r.out, "operator new calls"));
  // `delete p` calls the sized operator delete, which jumps to operator delete(void*):
  // the glob probes both, and each sees every delete.
  EXPECT_EQ(rows.at("operator delete(void*, unsigned long)"), printed(r.out, "operator delete calls"));
  EXPECT_EQ(rows.at("operator delete(void*)"), printed(r.out, "operator delete calls"));
  for (const auto& [name, calls] : rows)
    EXPECT_TRUE(name == "operator new(unsigned long)" || name.rfind("operator delete", 0) == 0) << name;
}

}  // namespace
}  // namespace uprof
