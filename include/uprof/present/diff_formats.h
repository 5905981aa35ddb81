// `uprof diff`'s outputs: text (a table read at a glance, with a legend naming the
// method), JSON (schema "uprof.diff/1", described in docs/diff.schema.json) and HTML
// (one self-contained page: inline CSS and SVG, nothing fetched).
//   FUNCTION  CALLS A->B   P50 A->B          B/A           P90 A->B ...
//   nap       400 -> 400   1.12ms -> 1.63ms  x1.45 slower  ...
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "uprof/analyse/diff_model.h"

namespace uprof {

inline constexpr const char* kDiffSchema = "uprof.diff/1";

// fail_above: --fail-above PCT when given, whose regressions JSON and HTML list too.
std::string render_text_diff(const DiffModel& d);
std::string render_json_diff(const DiffModel& d, std::optional<double> fail_above);
std::string render_html_diff(const DiffModel& d, std::optional<double> fail_above);

// Pieces the formats share.
// "parse", "work [thread worker]", "get [key=42]", "gone (only in A)"
std::string diff_row_label(const DiffRow& r, const DiffOptions& o);
// One side's quantile as the report prints it (percent 100: the max); "-" for a side
// without the function or without latencies.
std::string side_latency(const DiffSide& s, double percent);
// B/A for people: "x1.45", "x0.98", "x12.3"; "-" when unbounded.
std::string format_ratio(double ratio);
// The method and its confidence, in one paragraph (the legend).
std::string diff_method(const ShiftOptions& o);
// What differs between the runs beyond the code, one line each: the builds of the
// probed binaries, architecture, host, kernel, engine, lost events.
std::vector<std::string> diff_notes(const DiffModel& d);
// Why --fail-above fails: "nap: p50 1.12ms -> 1.63ms, x1.45, at least x1.41 (99%
// confidence): slower by more than 20%"
std::string regression_text(const DiffModel& d, const Regression& r, double percent);

}  // namespace uprof
