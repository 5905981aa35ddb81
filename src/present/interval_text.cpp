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

std::string seconds_since(uint64_t t, uint64_t start) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", t >= start ? static_cast<double>(t - start) / 1e9 : 0.0);
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

std::string render_interval_block(const IntervalBlock& block, const ProbeFunctions& functions,
                                  const IntervalTextOptions& options) {
  std::ostringstream os;
  os << "uprof: interval " << block.index << " (" << seconds_since(block.begin, options.start) << "-"
     << seconds_since(block.end, options.start) << " s, " << wall_clock(block.end + options.realtime_offset)
     << "): " << with_commas(block.samples) << " events, " << with_commas(block.lost) << " lost";
  TextTable t({{"FUNCTION"}, {"CALLS", Align::Right}, {"P50", Align::Right}, {"P99", Align::Right},
               {"MAX", Align::Right}, {"UNMATCHED", Align::Right}});
  for (std::size_t i = 0; i < block.functions.size() && i < functions.functions.size(); ++i) {
    const IntervalFunction& f = block.functions[i];
    if (!f.calls && !f.unmatched) continue;
    const FunctionInfo& fi = functions.functions[i];
    const auto& h = f.latency;
    if (fi.paired() && h.count())
      t.add_row({fi.name, with_commas(f.calls), format_duration(h.percentile(50)), format_duration(h.percentile(99)),
                 format_duration(h.max()), with_commas(f.unmatched)});
    else
      t.add_row({fi.name, with_commas(f.calls), "-", "-", "-", fi.paired() ? with_commas(f.unmatched) : "-"});
  }
  if (!t.rows()) {
    os << "; no calls\n";
    return os.str();
  }
  os << "\n";
  std::istringstream table(t.render());
  for (std::string line; std::getline(table, line);) os << "  " << line << "\n";
  if (options.histograms) {
    for (std::size_t i = 0; i < block.functions.size() && i < functions.functions.size(); ++i) {
      const auto& h = block.functions[i].latency;
      if (!h.count()) continue;
      os << "  " << functions.functions[i].name << " latency (log2):\n";
      render_text_histogram(os, h.log2_buckets(), options.bar_width, 0, 0, std::nullopt, std::nullopt, "    ");
    }
  }
  return os.str();
}

}  // namespace uprof
