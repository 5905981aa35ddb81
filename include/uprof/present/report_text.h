// The text report: a header about the recording, one latency table, then per
// function a histogram (log2 by default, bpftrace/funclatency style), the
// captured values and the unmatched entries by reason.
#pragma once

#include <optional>
#include <string>

#include "uprof/analyse/report_model.h"

namespace uprof {

enum class SortKey { Total, Calls, Mean, P99, Max, Name };
Result<SortKey> parse_sort_key(std::string_view s);

struct TextReportOptions {
  SortKey sort = SortKey::Total;
  bool histograms = true;
  bool values = true;
  std::size_t top_values = 5;
  std::size_t top_callers = 5;      // record -g: callers listed per function
  std::size_t bar_width = 40;
};

std::string render_text_report(const ReportModel& m, const TextReportOptions& o);

// Pieces shared by the other formats.
std::string group_label(const ReportModel& m, const GroupStats& g);
// Groups in the order the sort key asks for (indices into m.groups).
std::vector<std::size_t> sorted_groups(const ReportModel& m, SortKey key);
// The same for any groups of `m` (m.totals: one per function).
std::vector<std::size_t> sort_order(const ReportModel& m, const std::vector<GroupStats>& groups, SortKey key);
// "2026-12-02 12:05:31 UTC"
std::string format_wall_time(uint64_t realtime_ns);
// Seconds the recording covers (trailer end, else the last event, minus the start).
double recording_seconds(const ReportModel& m);
// The workload's argv as one line: "./app --threads 4".
std::string join_command(const std::vector<std::string>& argv);
// "2026-12-02 12:05:31 UTC, 1.110 s, on host (x86_64, Linux 6.1.0, bpf engine)"
std::string recorded_summary(const ReportModel& m);

}  // namespace uprof
