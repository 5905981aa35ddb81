// 2000000 -> "2,000,000": counts a person reads at a glance.
#pragma once

#include <cstdint>
#include <string>

namespace uprof {

inline std::string with_commas(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

}  // namespace uprof
