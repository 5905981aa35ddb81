#include "uprof/analyse/duration_format.h"

#include <array>
#include <charconv>

namespace uprof {

namespace {

struct Unit {
  std::string_view name;
  uint64_t ns;
};
constexpr std::array<Unit, 4> kUnits = {{{"ns", 1}, {"us", 1'000}, {"ms", 1'000'000}, {"s", 1'000'000'000}}};

// `n` with `decimals` digits after the point: (1234, 2) -> "12.34".
std::string fixed(uint64_t n, int decimals) {
  std::string digits = std::to_string(n);
  if (decimals == 0) return digits;
  while (digits.size() <= static_cast<std::size_t>(decimals)) digits.insert(0, "0");
  digits.insert(digits.size() - decimals, ".");
  return digits;
}

}  // namespace

std::string format_duration(uint64_t ns) {
  if (ns < 1000) return std::to_string(ns) + "ns";
  for (std::size_t u = 1; u < kUnits.size(); ++u) {
    const uint64_t unit = kUnits[u].ns;
    const bool last = u + 1 == kUnits.size();
    // 3.414us: 2 decimals -> 341 (fits in 3 digits) -> "3.41us". 99.96us: 2 decimals ->
    // 9996, 1 -> 1000, 0 -> 100 -> "100us". The product is done in 128 bits.
    uint64_t scale = 100;
    for (int decimals = 2; decimals >= 0; --decimals, scale /= 10) {
      const unsigned __int128 rounded = (static_cast<unsigned __int128>(ns) * scale + unit / 2) / unit;
      if (rounded < 1000 || (last && decimals == 0)) {
        return fixed(static_cast<uint64_t>(rounded), decimals) + std::string(kUnits[u].name);
      }
    }
  }
  return {};  // unreachable: seconds take everything
}

std::string format_bucket_label(uint64_t lo, uint64_t hi) {
  return "[" + format_duration(lo) + ", " + format_duration(hi) + ")";
}

std::string format_underflow_label(uint64_t below) { return "(..., " + format_duration(below) + ")"; }

std::string format_overflow_label(uint64_t from) { return "[" + format_duration(from) + ", ...)"; }

// A count too small for one '@' (1 of 321 at width 40) draws a '.': visible, but never
// as wide as a count 320 times its size; an empty bucket draws nothing.
std::string format_bar(uint64_t count, uint64_t max_count, std::size_t width) {
  std::size_t filled = 0;
  bool mark = false;
  if (max_count > 0 && count > 0 && width > 0) {
    filled = static_cast<std::size_t>(static_cast<unsigned __int128>(count) * width / max_count);
    if (filled > width) filled = width;
    mark = filled == 0;
  }
  std::string bar = "|";
  bar.append(filled, '@');
  if (mark) bar += '.';
  bar.append(width - filled - (mark ? 1 : 0), ' ');
  bar += '|';
  return bar;
}

Result<uint64_t> parse_duration(std::string_view text) {
  const std::string_view whole = text;
  auto fail = [&](std::string_view why) {
    return err("duration: '", whole, "': ", why, " (e.g. 250, 250ns, 3.5us, 12ms, 1.5s)");
  };
  uint64_t integer = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), integer);
  if (ec != std::errc{} || p == text.data()) return fail("not a number");
  text.remove_prefix(p - text.data());
  std::string_view fraction;
  if (!text.empty() && text.front() == '.') {
    text.remove_prefix(1);
    std::size_t n = 0;
    while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
    fraction = text.substr(0, n);
    text.remove_prefix(n);
  }
  const std::string_view unit_name = text.empty() ? "ns" : text;
  const Unit* unit = nullptr;
  for (const Unit& u : kUnits) {
    if (u.name == unit_name) unit = &u;
  }
  if (unit == nullptr) return fail("unknown unit '" + std::string(unit_name) + "'");

  unsigned __int128 ns = static_cast<unsigned __int128>(integer) * unit->ns;
  uint64_t place = unit->ns;
  for (char c : fraction) {
    place /= 10;
    if (place == 0) {
      if (c != '0') return fail("finer than a nanosecond");
      continue;
    }
    ns += static_cast<unsigned __int128>(c - '0') * place;
  }
  if (ns > UINT64_MAX) return fail("too large");
  return static_cast<uint64_t>(ns);
}

}  // namespace uprof
