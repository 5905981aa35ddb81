// Durations for people: three significant digits in the unit that suits the value,
// as funclatency users read them, and the labels and bars of the histograms.
//   812 -> "812ns"   3'414 -> "3.41us"   12'000'000 -> "12.0ms"   1'520'000'000 -> "1.52s"
//   log2 bucket [256, 512)  -> "[256ns, 512ns)"
//   bar for 4 of 10, width 10 -> "|@@@@      |"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "uprof/util/result.h"

namespace uprof {

// Nanoseconds below 1000 as integers; above, three significant digits rounded half
// up, moving to the next unit when rounding reaches 1000 (999'999ns is "1.00ms",
// not "1000us"). Seconds are the largest unit: "1520s".
std::string format_duration(uint64_t ns);

// "[256ns, 512ns)"
std::string format_bucket_label(uint64_t lo, uint64_t hi);
// The linear histogram's outer buckets, as bpftrace writes them: "(..., 100us)", "[1.00ms, ...)".
std::string format_underflow_label(uint64_t below);
std::string format_overflow_label(uint64_t from);

// "|@@@@      |": `width` cells, count/max_count of them filled (rounded down). A
// non-zero count too small for one '@' gets a '.', so a tail bucket of 3 calls beside
// 1M is still visible without looking like 1/40 of them.
std::string format_bar(uint64_t count, uint64_t max_count, std::size_t width);

// "250" (ns), "250ns", "3.5us", "12ms", "1.5s" -> nanoseconds; what --since,
// --until and linear:MIN:MAX:STEP take.
Result<uint64_t> parse_duration(std::string_view text);

}  // namespace uprof
