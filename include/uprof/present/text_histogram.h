// A histogram as text rows, bpftrace/funclatency style: the bucket, its count and a bar
// scaled to the largest count (analyse/duration_format.h's format_bar).
//   [1.05ms, 2.10ms)  29 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
//   [2.10ms, 4.19ms)   1 |.                                       |
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "uprof/analyse/latency_histogram.h"

namespace uprof {

// `underflow` and `overflow` rows are drawn when their bound is given and they count
// something (a linear histogram's "(..., MIN)" and "[MAX, ...)"). Each row starts with
// `indent`.
void render_text_histogram(std::ostream& os, const std::vector<HistBucket>& buckets, std::size_t width,
                           uint64_t underflow = 0, uint64_t overflow = 0, std::optional<uint64_t> lo = std::nullopt,
                           std::optional<uint64_t> hi = std::nullopt, const std::string& indent = "  ");

}  // namespace uprof
