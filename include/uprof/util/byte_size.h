// A size as people write it on a command line, as perf does for -m and --max-size:
// a number of bytes with an optional unit, B, K, M or G (powers of 1024, either case).
//   "32M" -> 33554432   "512k" -> 524288   "4096" -> 4096   "1.5G", "M", "-1" -> error
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace uprof {

// nullopt for text that is not such a size, or one of 2^63 bytes or more.
std::optional<uint64_t> parse_byte_size(std::string_view text);

}  // namespace uprof
