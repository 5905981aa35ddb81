#include "uprof/present/plot_axes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "uprof/analyse/duration_format.h"

namespace uprof {

namespace {

constexpr std::array<double, 3> kSteps = {1, 2, 5};

// "%.3g" without an exponent for the values axes use (below 1e6 in their unit).
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

std::string plot_duration(uint64_t ns) {
  std::string s = format_duration(ns);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, "us") == 0) s.replace(s.size() - 2, 2, "µs");
  return s;
}

std::string axis_duration(double ns) {
  struct Unit {
    double ns;
    const char* name;
  };
  static constexpr std::array<Unit, 4> kUnits = {{{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1, "ns"}}};
  for (const Unit& u : kUnits) {
    // 999.6us rounds to "1e+03" at 3 digits: it is 1ms.
    if (ns >= u.ns * 0.9995 || u.ns == 1) return short_number(ns / u.ns) + u.name;
  }
  return {};
}

std::string axis_count(double n) {
  if (n < 1000) return short_number(n);
  if (n < 999.5e3) return short_number(n / 1e3) + "k";
  if (n < 999.5e6) return short_number(n / 1e6) + "M";
  return short_number(n / 1e9) + "G";
}

std::string coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

double LinearAxis::at(double v) const { return hi == lo ? p0 : p0 + (v - lo) / (hi - lo) * (p1 - p0); }

double LogAxis::at(double v) const {
  const double l = std::log(lo), h = std::log(hi);
  if (h <= l) return p0;
  return p0 + (std::log(std::max(v, lo * 1e-3)) - l) / (h - l) * (p1 - p0);
}

std::pair<double, double> nice_log_range(double lo, double hi) {
  lo = std::max(lo, 1.0);
  hi = std::max(hi, lo);
  auto below = [](double v, bool strictly) {
    const double decade = std::pow(10.0, std::floor(std::log10(v) + 1e-9));
    for (auto s = kSteps.rbegin(); s != kSteps.rend(); ++s) {
      const double c = *s * decade;
      if (strictly ? c < v * (1 - 1e-9) : c <= v * (1 + 1e-9)) return c;
    }
    return decade / 2;  // only when strictly below a power of ten
  };
  auto above = [](double v, bool strictly) {
    const double decade = std::pow(10.0, std::floor(std::log10(v) + 1e-9));
    for (double s : kSteps) {
      const double c = s * decade;
      if (strictly ? c > v * (1 + 1e-9) : c >= v * (1 - 1e-9)) return c;
    }
    return decade * 10;
  };
  if (hi <= lo * (1 + 1e-9)) return {std::max(1.0, below(lo, true)), above(hi, true)};
  return {std::max(1.0, below(lo, false)), above(hi, false)};
}

std::vector<Tick> log_ticks(double lo, double hi, std::size_t max_labels,
                            const std::function<std::string(double)>& label) {
  std::vector<Tick> out;
  if (!(lo > 0) || !(hi >= lo)) return out;
  for (double decade = std::pow(10.0, std::floor(std::log10(lo) + 1e-9)); decade <= hi * (1 + 1e-9); decade *= 10)
    for (double s : kSteps) {
      const double v = s * decade;
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(Tick{.value = v, .label = {}});
    }
  max_labels = std::max<std::size_t>(max_labels, 1);
  if (out.size() <= max_labels) {
    for (Tick& t : out) t.label = label(t.value);
    return out;
  }
  auto is_decade = [](double v) {
    const double l = std::log10(v);
    return std::abs(l - std::round(l)) < 1e-9;
  };
  const std::size_t decades = static_cast<std::size_t>(std::count_if(out.begin(), out.end(), [&](const Tick& t) {
    return is_decade(t.value);
  }));
  const std::size_t every = (decades + max_labels - 1) / max_labels;
  std::size_t seen = 0;
  for (Tick& t : out) {
    if (!is_decade(t.value)) continue;
    if (seen++ % every == 0) t.label = label(t.value);
  }
  return out;
}

std::vector<Tick> linear_ticks(double lo, double hi, std::size_t target,
                               const std::function<std::string(double)>& label) {
  std::vector<Tick> out;
  if (!(hi > lo)) {
    out.push_back(Tick{.value = lo, .label = label(lo)});
    return out;
  }
  const double rough = (hi - lo) / static_cast<double>(std::max<std::size_t>(target, 1));
  const double decade = std::pow(10.0, std::floor(std::log10(rough)));
  double step = decade * 10;
  for (double s : kSteps)
    if (s * decade >= rough * (1 - 1e-9)) {
      step = s * decade;
      break;
    }
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi * (1 + 1e-9) + 1e-12; k += 1) {
    const double v = k == 0 ? 0.0 : k * step;  // not -0: "-0" is no label
    out.push_back(Tick{.value = v, .label = label(v)});
  }
  return out;
}

}  // namespace uprof
