#include "uprof/util/hex.h"

#include <charconv>

namespace uprof {

std::string hex(uint64_t v) {
  char buf[2 + 16] = {'0', 'x'};
  auto [end, ec] = std::to_chars(buf + 2, buf + sizeof buf, v, 16);
  (void)ec;  // 16 digits always fit
  return std::string(buf, end);
}

}  // namespace uprof
