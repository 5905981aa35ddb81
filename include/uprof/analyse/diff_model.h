// Two recordings side by side: what `uprof diff A B` shows. Each file is read as
// `uprof report` reads it (report_model.h: one streaming pass, memory bounded by
// functions and groups); then rows are matched by function name (and by thread name
// with --by-thread, by the caller's name with --by-caller, by value with --by), and each row's p50, p90 and p99 are compared
// (quantile_shift.h: an interval on B/A and a verdict). Thread and process ids differ
// between runs, so --by-thread matches threads by name, merging same-named threads.
//
// Also what makes the runs differ beyond the code: the architecture, each probed
// binary's build-id (matched by file name: ./v1/app and ./v2/app are both "app"; or
// the one binary left on each side),
// host, kernel, engine, and events lost in either. A diff of two builds is the point;
// the header only says so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "uprof/analyse/quantile_shift.h"
#include "uprof/analyse/report_model.h"

namespace uprof {

// The quantiles diff compares with an interval; max has a ratio only (one call: no
// interval can be had for it).
inline constexpr double kDiffPercents[] = {50, 90, 99};

struct DiffOptions {
  GroupBy by = GroupBy::Function;  // Function, Thread or Caller (record -g: matched by the caller's name)
  std::string by_value{};          // --by NAME, "" for none
  ShiftOptions shift{};
};

struct DiffSide {
  bool probed = false;        // the file probes this function (else the row is "only in" the other)
  bool paired = false;        // it has latencies (entry and return probes), not only hits
  uint64_t calls = 0;         // 0 too when probed but this thread / value never called it
  uint64_t unmatched = 0;
  LatencyHistogram latency{};  // the row's groups merged
};

struct DiffRow {
  std::string function{};     // the name both files know it by
  std::string thread{};       // --by-thread: the thread's name
  std::string caller{};       // --by-caller: the caller's name ("" for calls without a stack)
  // --by: the value (normalised, a string's pool id), or "other" past the group limit;
  // neither: the calls that did not capture it. `value_spec` is how to print it.
  bool has_by_value = false;
  bool other_values = false;
  uint64_t by_value = 0;
  std::optional<ValueSpec> value_spec{};
  DiffSide a{}, b{};
  // One per kDiffPercents when both sides have latencies, else empty.
  std::vector<QuantileShift> shifts{};
  double max_ratio = 1;       // b.max / a.max, when shifts is not empty

  bool in_both() const { return a.probed && b.probed; }
  bool compared() const { return !shifts.empty(); }
};

// A binary both files probe (the same file name, or the one binary left on each side
// once those are paired: ./app-v1 against ./app-v2), and its build-id in each.
struct BinaryPair {
  std::string name{};         // file name: "app", "libc.so.6"; "app-v1 / app-v2" when they differ
  std::string path_a{}, path_b{};
  std::string build_id_a{}, build_id_b{};  // "" when the file has none
  bool same_build() const { return !build_id_a.empty() && build_id_a == build_id_b; }
};

struct DiffModel {
  ReportModel a, b;
  DiffOptions options{};
  // Flagged slower first (most first), then faster, then the rest by time spent,
  // then the rows only in A, only in B.
  std::vector<DiffRow> rows{};
  std::vector<BinaryPair> binaries{};
};

// Reads both files. A file that cannot be read, or that the reader found damaged or
// cut short, is an error naming it: a diff of part of a recording would mislead.
Result<DiffModel> build_diff(const std::string& path_a, const std::string& path_b, const DiffOptions& options);

// The matching and comparing, on two models already read (pure: tests build them).
DiffModel diff_reports(ReportModel a, ReportModel b, const DiffOptions& options);

// `--fail-above PCT`: the rows whose p50 or p99 got slower beyond noise by more than
// PCT percent (worse_by_more_than), each with the quantile that did.
struct Regression {
  std::size_t row = 0;
  QuantileShift shift{};
};
std::vector<Regression> regressions(const DiffModel& m, double percent);

}  // namespace uprof
