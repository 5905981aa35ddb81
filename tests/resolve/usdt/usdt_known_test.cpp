#include "uprof/resolve/usdt/usdt_known.h"

#include <gtest/gtest.h>

#include "uprof/spec/value_request.h"

namespace uprof {
namespace {

TEST(UsdtKnown, PythonFunctionProbesGiveFileFunctionAndLine) {
  const auto v = known_usdt_values("python", "function__entry", 3);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], "file=$arg1:string");
  EXPECT_EQ(v[1], "func=$arg2:string");
  EXPECT_EQ(v[2], "line=$arg3");
  EXPECT_EQ(known_usdt_values("python", "gc__done", 1), std::vector<std::string_view>{"collected=$arg1"});
  EXPECT_EQ(known_usdt_values("libstdcxx", "throw", 2).size(), 2u);
}

TEST(UsdtKnown, UnknownProbesAndOtherArgumentCountsGetNothing) {
  EXPECT_TRUE(known_usdt_values("python", "function__entry", 2).empty());  // not the documented probe
  EXPECT_TRUE(known_usdt_values("uprof_fx", "tick", 5).empty());
  EXPECT_TRUE(known_usdt_values("python", "nosuch", 0).empty());
}

// Every token of the table parses as a value spec.
TEST(UsdtKnown, EveryTokenParses) {
  for (const char* probe : {"function__entry", "function__return", "line", "gc__start", "gc__done",
                            "import__find__load__start", "import__find__load__done", "audit"})
    for (std::size_t n = 0; n <= 3; n++)
      for (std::string_view t : known_usdt_values("python", probe, n)) {
        auto r = parse_value_request(t);
        EXPECT_TRUE(r) << t << ": " << (r ? "" : r.error().message);
      }
}

}  // namespace
}  // namespace uprof
