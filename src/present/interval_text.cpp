#include "uprof/present/interval_text.h"

#include <cstdio>
#include <ctime>
#include <sstream>

#include "uprof/analyse/duration_format.h"
#include "uprof/present/text_histogram.h"
#include "uprof/present/text_table.h"
#include "uprof/util/thousands.h"

namespace uprof {
namespace {

// "2.00": seconds since the recording's start.
std::string seconds(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(ns) / 1e9);
  return buf;
}

std::string wall_clock(uint64_t realtime_ns) {
  const time_t t = static_cast<time_t>(realtime_ns / 1'000'000'000ull);
  tm tmv{};
  gmtime_r(&t, &tmv);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S UTC", &tmv);
  return buf;
}

}  // namespace

std::string render_interval_block(const IntervalReport& block, const IntervalTextOptions& options) {
  std::ostringstream os;
  os << "uprof: interval " << block.index << " (" << seconds(block.begin_ns) << "-" << seconds(block.end_ns) << " s, "
     << wall_clock(block.end_realtime_ns) << "): " << with_commas(block.events) << " events, "
     << with_commas(block.lost) << " lost";
  TextTable t({{"FUNCTION"}, {"CALLS", Align::Right}, {"P50", Align::Right}, {"P99", Align::Right},
               {"MAX", Align::Right}, {"UNMATCHED", Align::Right}});
  for (const IntervalRow& f : block.functions) {
    if (!f.calls && !f.unmatched) continue;
    const auto& h = f.latency;
    if (f.paired && h.count())
      t.add_row({f.function, with_commas(f.calls), format_duration(h.percentile(50)), format_duration(h.percentile(99)),
                 format_duration(h.max()), with_commas(f.unmatched)});
    else
      t.add_row({f.function, with_commas(f.calls), "-", "-", "-", f.paired ? with_commas(f.unmatched) : "-"});
  }
  if (!t.rows()) {
    os << "; no calls\n";
    return os.str();
  }
  os << "\n";
  std::istringstream table(t.render());
  for (std::string line; std::getline(table, line);) os << "  " << line << "\n";
  if (options.histograms) {
    for (const IntervalRow& f : block.functions) {
      if (!f.latency.count()) continue;
      os << "  " << f.function << " latency (log2):\n";
      render_text_histogram(os, f.latency.log2_buckets(), options.bar_width, 0, 0, std::nullopt, std::nullopt, "    ");
    }
  }
  return os.str();
}

}  // namespace uprof
