// Sentences the report formats share, so that text and HTML say the same thing:
//   compensation:  "compensated: 2.69us (the probes' own cost per call, from 'uprof bench') taken off every duration, at least 0"
//   group notes:   "note: the median (3.10us) is within 10x of the probe's own cost (2.69us per call): the probe dominates what is measured"
//   losses:        "1,234 calls cut by lost events, not paired (1,000 open across a loss, 234 returns after one): no latency spans a gap"
//   a value:       "%di: min 0, max 499; most frequent: 7 (3) 9 (2)"
#pragma once

#include <string>
#include <vector>

#include "uprof/analyse/report_model.h"

namespace uprof {

// What --compensate took off, or "" when it was not asked for.
std::string compensation_text(const ReportModel& m);

// How many calls losses cut (analyse/pairing.h): `open` entries whose calls were open
// across a loss (unmatched "events lost"), `returns` whose entries were before one.
std::string loss_cut_text(uint64_t open, uint64_t returns);

// The caveats of one group's figures: calls cut by lost events, probed
// callees' probes that dominate its time, its own probe's cost that dominates it.
std::vector<std::string> group_notes(const ReportModel& m, const GroupStats& g);

// One captured value's statistics, "" when it has none worth showing.
std::string value_summary(const ValueSpec& spec, const ValueStats& stats, std::size_t top_values);

}  // namespace uprof
