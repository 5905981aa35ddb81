// Log-spaced bins for pictures of latency: `per_octave` bins of equal width on a log
// axis in every power of two, bin b covering [2^(b/R), 2^((b+1)/R)) ns, R = per_octave.
//   R = 4: 1000ns has log2 9.966, bin floor(39.86) = 39: [2^9.75, 2^10) = [861ns, 1024ns)
//   R = 8: 1ms (2^19.93) is bin 159: [2^19.875, 2^20) = [961us, 1.05ms)
// A value's bin comes from its leading bit and a table of the 8 bits below it, with no
// log() per value: a value within 1/256 of a boundary may land in the bin next to it
// (the latency histogram's own buckets are 1/128 of a power of two wide anyway).
// Zero has no place on a log axis: it is kZeroBin, counted apart.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "uprof/analyse/latency_histogram.h"

namespace uprof {

class LogScale {
 public:
  static constexpr int kZeroBin = -1;
  static constexpr unsigned kMaxPerOctave = 32;

  // 1 <= per_octave <= kMaxPerOctave (clamped).
  explicit LogScale(unsigned per_octave);

  unsigned per_octave() const { return per_octave_; }
  int bin(uint64_t ns) const {
    if (ns == 0) return kZeroBin;
    const int msb = 63 - __builtin_clzll(ns);
    const uint64_t below = msb >= 8 ? ns >> (msb - 8) : ns << (8 - msb);
    return msb * static_cast<int>(per_octave_) + sub_[below & 0xff];
  }
  // The bounds of bin b in ns: 2^(b/R), as a double and rounded up to whole ns.
  double lo(int bin) const;
  uint64_t lo_ns(int bin) const;

 private:
  unsigned per_octave_;
  std::array<uint8_t, 256> sub_{};  // 8 bits below the leading one -> bin within the octave
};

struct LogBin {
  int bin = 0;
  uint64_t lo = 0;  // ns, the bin's bounds (LogScale::lo_ns)
  uint64_t hi = 0;
  uint64_t count = 0;
};

struct LogBins {
  uint64_t zeros = 0;         // durations of 0 (a compensated call can come out at 0)
  std::vector<LogBin> bins;   // the non-empty bins, lowest first
  uint64_t max_count() const;
  // The span of the non-empty bins, lowest bound to highest; (0, 0) when there are none.
  std::pair<uint64_t, uint64_t> span() const;
};

// The histogram's counts in the scale's bins: each fine bucket goes whole to the bin of
// its midpoint (a value within 1/256 of a bin's edge may be counted in the next bin).
// Zero durations are counted apart.
LogBins log_bins(const LatencyHistogram& h, const LogScale& scale);

}  // namespace uprof
