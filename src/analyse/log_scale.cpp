#include "uprof/analyse/log_scale.h"

#include <algorithm>
#include <cmath>

namespace uprof {

LogScale::LogScale(unsigned per_octave) : per_octave_(std::clamp(per_octave, 1u, kMaxPerOctave)) {
  // Entry m stands for the values 2^k * (1 + m/256 ... (m+1)/256): it takes the bin of
  // the lowest of them. The nudge keeps exact powers (m = 0 at R = 1) from rounding down.
  for (unsigned m = 0; m < sub_.size(); ++m) {
    const double within = std::log2(1.0 + m / 256.0) * per_octave_;
    sub_[m] = static_cast<uint8_t>(std::floor(within + 1e-9));
  }
}

double LogScale::lo(int bin) const { return std::exp2(static_cast<double>(bin) / per_octave_); }

uint64_t LogScale::lo_ns(int bin) const {
  const double v = std::ceil(lo(bin) - 1e-9);
  return v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(v);
}

uint64_t LogBins::max_count() const {
  uint64_t m = zeros;
  for (const LogBin& b : bins) m = std::max(m, b.count);
  return m;
}

std::pair<uint64_t, uint64_t> LogBins::span() const {
  if (bins.empty()) return {0, 0};
  return {bins.front().lo, bins.back().hi};
}

LogBins log_bins(const LatencyHistogram& h, const LogScale& scale) {
  LogBins out;
  for (const HistBucket& f : h.fine_buckets()) {
    // By the bucket's midpoint, the value its percentiles report: 10ms is in [9.96ms, 10.03ms).
    const int b = f.lo == 0 ? LogScale::kZeroBin : scale.bin(f.lo + (f.hi - f.lo) / 2);
    if (b == LogScale::kZeroBin) {
      out.zeros += f.count;
    } else if (!out.bins.empty() && out.bins.back().bin == b) {
      out.bins.back().count += f.count;
    } else {
      out.bins.push_back(LogBin{.bin = b, .lo = scale.lo_ns(b), .hi = scale.lo_ns(b + 1), .count = f.count});
    }
  }
  return out;
}

}  // namespace uprof
