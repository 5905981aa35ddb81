#include "uprof/analyse/quantile_shift.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace uprof {
namespace {

double log_binomial_pmf(double n, double k, double q) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1) + k * std::log(q) + (n - k) * std::log1p(-q);
}

// a / b for the ratio's bounds, where 0 and UINT64_MAX (an unbounded end) both occur.
double bound_ratio(uint64_t num, uint64_t den, bool upper) {
  constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  if (upper ? (num == kNone || den == 0) : (den == kNone || num == 0)) return upper ? kUnbounded : 0.0;
  return static_cast<double>(num) / static_cast<double>(den);
}

}  // namespace

RankInterval quantile_rank_interval(uint64_t n, double q, double confidence) {
  if (n == 0) return {0, 1};
  q = std::clamp(q, 1e-9, 1 - 1e-9);
  confidence = std::clamp(confidence, 0.5, 0.9999);
  const double tail = (1 - confidence) / 2;
  const double nd = static_cast<double>(n);
  const double mean = nd * q;
  // Below mean - reach and above mean + reach the binomial holds less than 1e-13 of its
  // mass (Bernstein's inequality), nothing next to a tail of at least 5e-5: the walk
  // covers that window and counts what lies outside as 0, so it takes ~20 standard
  // deviations of steps, not n.
  const double reach = 10 * std::sqrt(nd * q * (1 - q)) + 20;
  const uint64_t first = mean > reach ? static_cast<uint64_t>(mean - reach) : 0;
  const uint64_t last = static_cast<uint64_t>(std::min(nd, mean + reach));
  const double log_odds = std::log(q) - std::log1p(-q);
  // pmf(k) for k = first..last, by pmf(k + 1) = pmf(k) * (n - k) / (k + 1) * q / (1 - q).
  // Its start comes from lgamma, which at n = 10^10 is off by ~1e-4 relatively (its
  // absolute error grows with n log n): each walk divides by the window's sum instead.
  auto walk = [&](auto&& visit) {
    double log_pmf = log_binomial_pmf(nd, static_cast<double>(first), q);
    for (uint64_t k = first;; ++k) {
      if (!visit(k, std::exp(log_pmf)) || k == last) return;
      log_pmf += std::log((nd - static_cast<double>(k)) / static_cast<double>(k + 1)) + log_odds;
    }
  };
  double total = 0;
  walk([&](uint64_t, double pmf) { total += pmf; return true; });
  // P(B <= j) ~ 0 <= tail for every j < first, so rank `first` is a lower bound (0: none is).
  RankInterval out{.lo = first, .hi = n + 1};
  double cdf = 0;
  walk([&](uint64_t k, double pmf) {
    cdf += pmf / total;                                    // P(B <= k)
    if (cdf <= tail) out.lo = k + 1;                       // P(B < k + 1) <= tail
    if (cdf < 1 - tail) return true;
    out.hi = k + 1;                                        // P(B >= k + 2) <= tail; k = n: none above
    return false;
  });
  return out;
}

QuantileInterval quantile_interval(const LatencyHistogram& h, double percent, double confidence) {
  QuantileInterval out;
  const uint64_t n = h.count();
  if (n == 0) return out;
  const RankInterval r = quantile_rank_interval(n, percent / 100, confidence);
  if (r.lo >= 1) out.lo = h.rank_range(r.lo).lo;
  if (r.hi <= n) out.hi = h.rank_range(r.hi).hi;
  out.bounded = r.lo >= 1 && r.hi <= n;
  return out;
}

std::string_view to_string(ShiftVerdict v) {
  static constexpr std::array<std::string_view, 4> kNames = {"same", "slower", "faster", "too few calls"};
  return kNames[static_cast<std::size_t>(v)];
}

QuantileShift compare_quantile(const LatencyHistogram& a, const LatencyHistogram& b, double percent,
                               const ShiftOptions& options) {
  QuantileShift s;
  s.percent = percent;
  if (a.count() == 0 || b.count() == 0) return s;
  s.a = a.percentile(percent);
  s.b = b.percentile(percent);
  s.ratio = s.a == 0 ? (s.b == 0 ? 1.0 : kUnbounded) : static_cast<double>(s.b) / static_cast<double>(s.a);
  // Each side at sqrt(confidence): both hold at once with probability >= confidence.
  const double each = std::sqrt(std::clamp(options.confidence, 0.5, 0.9999));
  const QuantileInterval ia = quantile_interval(a, percent, each);
  const QuantileInterval ib = quantile_interval(b, percent, each);
  s.ratio_lo = bound_ratio(ib.lo, ia.hi, false);
  s.ratio_hi = bound_ratio(ib.hi, ia.lo, true);
  const double up = 1 + std::max(0.0, options.min_shift);
  if (s.ratio_lo > up) s.verdict = ShiftVerdict::Slower;
  else if (s.ratio_hi < 1 / up) s.verdict = ShiftVerdict::Faster;
  else if (!ia.bounded || !ib.bounded) s.verdict = ShiftVerdict::TooFew;
  else s.verdict = ShiftVerdict::Same;
  return s;
}

bool worse_by_more_than(const QuantileShift& s, double percent) {
  return s.verdict == ShiftVerdict::Slower && s.ratio_lo > 1 + percent / 100;
}

}  // namespace uprof
