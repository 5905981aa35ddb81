#include "uprof/analyse/latency_histogram.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "uprof/analyse/duration_format.h"

namespace uprof {

namespace {

constexpr int P = LatencyHistogram::kSubBucketBits;
constexpr uint32_t kBlock = 1u << P;  // the counters of one power of two

}  // namespace

uint64_t nearest_rank(double percent, uint64_t n) {
  if (n == 0) return 0;
  const double x = std::clamp(percent, 0.0, 100.0) * static_cast<double>(n) / 100.0;
  // The relative nudge absorbs the rounding of p * n / 100 (see the header) without
  // moving any true fraction: those are multiples of 1/(100 * 10^decimals of p).
  const double r = std::ceil(x * (1.0 - 1e-12));
  return std::clamp<uint64_t>(static_cast<uint64_t>(r), 1, n);
}

uint32_t LatencyHistogram::bucket_of(uint64_t v) {
  if (v < kExactBelow) return static_cast<uint32_t>(v);
  const int shift = (63 - std::countl_zero(v)) - P;
  return (static_cast<uint32_t>(shift) << P) + static_cast<uint32_t>(v >> shift);
}

uint64_t LatencyHistogram::bucket_lo(uint32_t bucket) {
  if (bucket < kExactBelow) return bucket;
  const uint32_t shift = (bucket >> P) - 1;
  return static_cast<uint64_t>(bucket - (shift << P)) << shift;
}

uint64_t LatencyHistogram::bucket_width(uint32_t bucket) {
  return bucket < kExactBelow ? 1 : uint64_t{1} << ((bucket >> P) - 1);
}

void LatencyHistogram::grow(uint32_t bucket) {
  const uint32_t first = bucket & ~(kBlock - 1);
  if (counts_.empty()) {
    base_ = first;
    counts_.assign(kBlock, 0);
  } else if (bucket < base_) {
    counts_.insert(counts_.begin(), base_ - first, 0);
    base_ = first;
  } else if (bucket - base_ >= counts_.size()) {
    counts_.resize(((bucket - base_) | (kBlock - 1)) + 1, 0);
  }
}

void LatencyHistogram::record(uint64_t ns, uint64_t times) {
  if (times == 0) return;
  const uint32_t b = bucket_of(ns);
  if (b - base_ >= counts_.size()) grow(b);  // unsigned: also catches b < base_
  counts_[b - base_] += times;
  count_ += times;
  total_ += static_cast<unsigned __int128>(ns) * times;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  grow(other.base_);
  grow(other.base_ + static_cast<uint32_t>(other.counts_.size()) - 1);
  for (std::size_t i = 0; i < other.counts_.size(); ++i) counts_[other.base_ + i - base_] += other.counts_[i];
  count_ += other.count_;
  total_ += other.total_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

uint64_t LatencyHistogram::total() const {
  return total_ > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(total_);
}

double LatencyHistogram::mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(total_) / static_cast<double>(count_);
}

uint64_t LatencyHistogram::percentile(double percent) const {
  if (count_ == 0) return 0;
  const uint64_t rank = nearest_rank(percent, count_);
  if (rank == 1) return min_;
  if (rank == count_) return max_;
  uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen < rank) continue;
    const auto b = static_cast<uint32_t>(base_ + i);
    const uint64_t mid = bucket_lo(b) + bucket_width(b) / 2;
    return std::clamp(mid, min_, max_);
  }
  return max_;  // unreachable: the counts sum to count_
}

LatencyHistogram::ValueRange LatencyHistogram::rank_range(uint64_t rank) const {
  if (count_ == 0) return {};
  if (rank <= 1) return {min_, min_};
  if (rank >= count_) return {max_, max_};
  uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen < rank) continue;
    const auto b = static_cast<uint32_t>(base_ + i);
    const uint64_t lo = bucket_lo(b);
    return {std::clamp(lo, min_, max_), std::clamp(lo + (bucket_width(b) - 1), min_, max_)};
  }
  return {max_, max_};  // unreachable: the counts sum to count_
}

std::vector<HistBucket> LatencyHistogram::log2_buckets() const {
  // by_power[0] is [0, 1); by_power[k + 1] is [2^k, 2^(k+1)).
  std::array<uint64_t, 65> by_power{};
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    const uint64_t lo = bucket_lo(static_cast<uint32_t>(base_ + i));
    by_power[static_cast<std::size_t>(std::bit_width(lo))] += counts_[i];
  }
  std::vector<HistBucket> out;
  if (count_ == 0) return out;
  const auto first = static_cast<std::size_t>(std::bit_width(min_));
  const auto last = static_cast<std::size_t>(std::bit_width(max_));
  for (std::size_t k = first; k <= last; ++k) {
    out.push_back(HistBucket{
        .lo = k == 0 ? 0 : uint64_t{1} << (k - 1),
        .hi = k == 0 ? 1 : (k == 64 ? UINT64_MAX : uint64_t{1} << k),
        .count = by_power[k],
    });
  }
  return out;
}

Result<LinearSpec> parse_linear_spec(std::string_view text) {
  const std::string_view whole = text;
  auto fail = [&](std::string_view why) {
    return err("linear: '", whole, "': ", why, " (e.g. linear:0:1ms:100us)");
  };
  if (text.starts_with("linear:")) text.remove_prefix(7);
  std::array<uint64_t, 3> parts{};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::size_t colon = text.find(':');
    if ((colon == std::string_view::npos) != (i == parts.size() - 1)) return fail("expected MIN:MAX:STEP");
    auto v = parse_duration(text.substr(0, colon));
    if (!v) return fail(v.error().message);
    parts[i] = *v;
    text.remove_prefix(colon == std::string_view::npos ? text.size() : colon + 1);
  }
  const LinearSpec spec{.min = parts[0], .max = parts[1], .step = parts[2]};
  if (spec.step == 0) return fail("STEP must be more than 0");
  if (spec.max <= spec.min) return fail("MAX must be more than MIN");
  if (spec.buckets() > kMaxLinearBuckets) return fail("more than 10000 buckets; use a larger STEP");
  return spec;
}

bool LinearHistogram::merge(const LinearHistogram& other) {
  if (!(other.spec_ == spec_)) return false;
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  underflow_ += other.underflow_;
  overflow_ += other.overflow_;
  return true;
}

std::vector<HistBucket> LinearHistogram::buckets() const {
  std::vector<HistBucket> out;
  out.reserve(counts_.size());
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    const uint64_t lo = spec_.min + i * spec_.step;
    const uint64_t hi = spec_.max - lo <= spec_.step ? spec_.max : lo + spec_.step;  // no overflow near 2^64
    out.push_back(HistBucket{.lo = lo, .hi = hi, .count = counts_[i]});
  }
  return out;
}

}  // namespace uprof
