#include "uprof/present/text_histogram.h"

#include <algorithm>
#include <utility>

#include "uprof/analyse/duration_format.h"

namespace uprof {

void render_text_histogram(std::ostream& os, const std::vector<HistBucket>& buckets, std::size_t width,
                           uint64_t underflow, uint64_t overflow, std::optional<uint64_t> lo,
                           std::optional<uint64_t> hi, const std::string& indent) {
  uint64_t maxc = 0;
  for (const auto& b : buckets) maxc = std::max(maxc, b.count);
  maxc = std::max({maxc, underflow, overflow});
  std::vector<std::pair<std::string, uint64_t>> rows;
  if (lo && underflow) rows.emplace_back(format_underflow_label(*lo), underflow);
  for (const auto& b : buckets) rows.emplace_back(format_bucket_label(b.lo, b.hi), b.count);
  if (hi && overflow) rows.emplace_back(format_overflow_label(*hi), overflow);
  std::size_t lw = 0, cw = 0;
  for (auto& [l, c] : rows) {
    lw = std::max(lw, l.size());
    cw = std::max(cw, std::to_string(c).size());
  }
  for (auto& [l, c] : rows) {
    std::string cs = std::to_string(c);
    os << indent << l << std::string(lw - l.size() + 2, ' ') << std::string(cw - cs.size(), ' ') << cs << " "
       << format_bar(c, maxc, width) << "\n";
  }
}

}  // namespace uprof
