// `uprof report --format html`: one self-contained page (html_page.h) that shows
//   - the recording: command, host, kernel, engine, duration, events, lost, and how
//     exact the figures are (every probe hit recorded? percentiles within 0.39%);
//   - the latency table of every group, as the text report has it;
//   - per function, in the report's order (the first kMaxPlottedFunctions): its
//     figures, the text report's notes (the probe dominates, --compensate), a latency
//     histogram on a log time axis with p50/p90/p99/p99.9 marked, its latency over
//     time (call_timeline.h), a small histogram per thread, process or --by value
//     when the report is split, and its captured values.
// The plots come from the report's histograms and the bounded timelines, never from
// the calls themselves: the page's size does not grow with the number of events.
#pragma once

#include <string>
#include <vector>

#include "uprof/analyse/call_timeline.h"
#include "uprof/analyse/report_model.h"
#include "uprof/present/report_text.h"

namespace uprof {

inline constexpr std::size_t kMaxPlottedFunctions = 60;
inline constexpr std::size_t kMaxSmallMultiples = 24;

// `timelines`: TimelineSink::timelines() of the same pass (one per function of the
// model), or empty for a page without latency over time.
std::string render_html_report(const ReportModel& m, const TextReportOptions& o,
                               const std::vector<CallTimeline>& timelines);

}  // namespace uprof
