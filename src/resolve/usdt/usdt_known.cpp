#include "uprof/resolve/usdt/usdt_known.h"

#include <array>

namespace uprof {
namespace {

struct KnownProbe {
  std::string_view provider, name;
  std::array<std::string_view, 3> values;  // "" past the last
};

// Sources: see usdt_known.h.
constexpr KnownProbe kKnown[] = {
    {"python", "function__entry", {"file=$arg1:string", "func=$arg2:string", "line=$arg3"}},
    {"python", "function__return", {"file=$arg1:string", "func=$arg2:string", "line=$arg3"}},
    {"python", "line", {"file=$arg1:string", "func=$arg2:string", "line=$arg3"}},
    {"python", "gc__start", {"generation=$arg1", "", ""}},
    {"python", "gc__done", {"collected=$arg1", "", ""}},
    {"python", "import__find__load__start", {"module=$arg1:string", "", ""}},
    {"python", "import__find__load__done", {"module=$arg1:string", "found=$arg2", ""}},
    {"python", "audit", {"event=$arg1:string", "args=$arg2:x64", ""}},
    {"libstdcxx", "throw", {"obj=$arg1:x64", "tinfo=$arg2:x64", ""}},
    {"libstdcxx", "rethrow", {"obj=$arg1:x64", "tinfo=$arg2:x64", ""}},
    {"libstdcxx", "catch", {"obj=$arg1:x64", "tinfo=$arg2:x64", ""}},
};

}  // namespace

std::vector<std::string_view> known_usdt_values(std::string_view provider, std::string_view name,
                                                std::size_t nargs) {
  for (const KnownProbe& k : kKnown) {
    if (k.provider != provider || k.name != name) continue;
    std::vector<std::string_view> out;
    for (std::string_view v : k.values)
      if (!v.empty()) out.push_back(v);
    if (out.size() != nargs) return {};
    return out;
  }
  return {};
}

}  // namespace uprof
