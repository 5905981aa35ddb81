// Which characters of a function name are wildcards: Go's pointer receivers are not.
#include "uprof/spec/name_glob.h"

#include <fnmatch.h>
#include <gtest/gtest.h>

#include "uprof/spec/probe_spec.h"

namespace uprof {
namespace {

bool matches(const std::string& written, const std::string& name) {
  return fnmatch(fnmatch_pattern(written).c_str(), name.c_str(), 0) == 0;
}

TEST(NameGlob, AGoPointerReceiverIsNoWildcard) {
  EXPECT_TRUE(is_go_receiver_star("main.(*T).Run", 6));
  EXPECT_TRUE(is_go_receiver_star("net/http.(*conn).serve", 10));
  EXPECT_TRUE(is_go_receiver_star("main.(*List[...]).Push", 6));
  EXPECT_FALSE(is_go_receiver_star("main.(*).Run", 6));      // no type: a wildcard
  EXPECT_FALSE(is_go_receiver_star("f(void (*)(int))", 8));  // C's function pointer
  EXPECT_FALSE(is_go_receiver_star("main.*", 5));

  EXPECT_FALSE(has_wildcard("main.(*T).Run"));
  EXPECT_FALSE(has_wildcard("net/http.(*conn).serve"));
  EXPECT_TRUE(has_wildcard("main.(*T).*"));
  EXPECT_TRUE(has_wildcard("net/http.*"));
  EXPECT_TRUE(has_wildcard("m::*"));
  EXPECT_TRUE(has_wildcard("*work*"));
  EXPECT_TRUE(has_wildcard("operator*"));
  EXPECT_FALSE(has_wildcard("operator[]"));
}

TEST(NameGlob, PatternsMatchGoAndRustNamesAsWritten) {
  // "main.(*T).Run" names *T's Run alone, not *BigT's (as a glob its '*' would match "Big").
  EXPECT_TRUE(matches("main.(*T).Run", "main.(*T).Run"));
  EXPECT_FALSE(matches("main.(*T).Run", "main.(*BigT).Run"));
  EXPECT_TRUE(matches("main.(*T).*", "main.(*T).Stop"));
  EXPECT_FALSE(matches("main.(*T).*", "main.(*BigT).Stop"));
  EXPECT_FALSE(matches("main.(*T).*", "main.T.Value"));
  // A package path with its '/': '*' spans them (no FNM_PATHNAME).
  EXPECT_TRUE(matches("net/http.*", "net/http.(*conn).serve"));
  EXPECT_TRUE(matches("net/*", "net/http.HandlerFunc.ServeHTTP"));
  EXPECT_FALSE(matches("net/http.*", "net/url.Parse"));
  // Rust paths: '*' spans the "::".
  EXPECT_TRUE(matches("m::*", "m::inner::helper"));
  EXPECT_FALSE(matches("m::*", "mm::work"));
  EXPECT_TRUE(matches("operator[]", "operator[]"));
}

// The spec parser keeps such names whole and calls them globs only for their wildcards.
TEST(NameGlob, TheSpecParserTakesGoNames) {
  for (const char* name : {"main.(*T).Run", "net/http.(*conn).serve", "main.main.func1", "main.(*List[...]).Push"}) {
    SCOPED_TRACE(name);
    auto s = parse_probe_spec(name);
    ASSERT_TRUE(s.ok()) << s.error().message;
    const auto& f = std::get<FunctionRef>(s->what);
    EXPECT_EQ(f.name, name);
    EXPECT_FALSE(f.is_glob);
    EXPECT_EQ(s->object, "");
  }
  auto ret = parse_probe_spec("./gw:main.(*T).Run%return");
  ASSERT_TRUE(ret.ok()) << ret.error().message;
  EXPECT_EQ(ret->object, "./gw");
  EXPECT_EQ(std::get<FunctionRef>(ret->what).name, "main.(*T).Run");
  EXPECT_TRUE(ret->is_return);
  auto glob = parse_probe_spec("net/http.*");
  ASSERT_TRUE(glob.ok()) << glob.error().message;
  EXPECT_EQ(glob->object, "");
  EXPECT_TRUE(std::get<FunctionRef>(glob->what).is_glob);
}

}  // namespace
}  // namespace uprof
