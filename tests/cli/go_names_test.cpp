// Go's names as Go prints them, in specs, globs and `uprof probe --list`: a method on a
// pointer receiver ("main.(*T).Run": its '*' is the receiver's, not a wildcard), globs
// on a type's methods and on a package path ("net/http.*"). The fixture is a real Go
// program (tests/fixtures/go_names/names.go, built with the machine's go). No probe is
// placed: how Go functions are measured is the Go tests' (issue 32).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "support/test_support.h"

#ifndef UPROF_HAVE_GO
#define UPROF_HAVE_GO 0
#endif

namespace uprof {
namespace {

using test::fixture;
using test::run;
using test::uprof_binary;

#define UPROF_REQUIRE_GO()                                                                                  \
  do {                                                                                                      \
    if (!UPROF_HAVE_GO) GTEST_SKIP() << "no Go toolchain: the build found no go, so go_names was not built"; \
  } while (0)

// The FUNCTION column of `uprof probe --list`: each row's first field.
std::vector<std::string> listed(const std::string& out) {
  std::vector<std::string> names;
  std::istringstream in(out);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string name;
    if (row >> name) names.push_back(name);
  }
  return names;
}

TEST(GoNames, MethodsAndPackagePathsListAsWritten) {
  UPROF_REQUIRE_GO();
  const std::string bin = fixture("x86_64", "go_names");
  auto t = run({uprof_binary(), "probe", "--list", bin, "main.(*T).*"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(listed(t.out), (std::vector<std::string>{"main.(*T).Run", "main.(*T).Stop"})) << t.out;

  auto one = run({uprof_binary(), "probe", "--list", bin, "main.(*T).Run"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(listed(one.out), std::vector<std::string>{"main.(*T).Run"}) << one.out;  // not main.(*BigT).Run

  auto http = run({uprof_binary(), "probe", "--list", bin, "net/http.*"});
  ASSERT_EQ(http.exit_code, 0) << http.err;
  const auto names = listed(http.out);
  EXPECT_GT(names.size(), 100u);
  for (const auto& n : names) EXPECT_EQ(n.rfind("net/http.", 0), 0u) << n;
  EXPECT_NE(std::find(names.begin(), names.end(), "net/http.(*conn).serve"), names.end()) << http.out;
}

TEST(GoNames, MethodsResolveByName) {
  UPROF_REQUIRE_GO();
  const std::string bin = fixture("x86_64", "go_names");
  auto r = run({uprof_binary(), "probe", bin, "main.(*T).Run", "main.T.Value", "net/http.(*conn).serve"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* fn : {"main.(*T).Run", "main.T.Value", "net/http.(*conn).serve"})
    EXPECT_NE(r.out.find(fn), std::string::npos) << fn << " in\n" << r.out;
  EXPECT_EQ(r.out.find("main.(*BigT).Run"), std::string::npos) << r.out;
  // A name that is no function says so, as for C.
  auto bad = run({uprof_binary(), "probe", bin, "main.(*T).Walk"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("no symbol 'main.(*T).Walk'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace uprof
