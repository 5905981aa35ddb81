// One block of `uprof record --interval SEC` (record/interval_report.h), as it prints
// while recording:
//
//   uprof: interval 3 (2.00-3.00 s, 08:41:03 UTC): 24,690 events, 0 lost
//     FUNCTION   CALLS    P50    P99     MAX  UNMATCHED
//     add       12,345  2.1us  5.0us  1.20ms          0
//     main           1      -      -       -          -
//
// Functions with nothing in the block are left out; a block with nothing says so in one
// line. With `histograms`, each paired function's log2 latency histogram follows the table.
#pragma once

#include <cstddef>
#include <string>

#include "uprof/record/interval_report.h"

namespace uprof {

struct IntervalTextOptions {
  bool histograms = false;  // --interval-hist
  std::size_t bar_width = 40;
};

std::string render_interval_block(const IntervalReport& block, const IntervalTextOptions& options);

}  // namespace uprof
