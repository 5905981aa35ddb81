// uprof diff --format json: one document, schema "uprof.diff/1" (docs/diff.schema.json).
#include "uprof/present/diff_formats.h"
#include "uprof/present/json_writer.h"
#include "uprof/present/report_formats.h"

namespace uprof {
namespace {

void side_json(JsonWriter& w, const DiffSide& s) {
  if (!s.probed) {
    w.null();
    return;
  }
  w.begin_object();
  w.field("paired", s.paired);
  w.field("calls", s.calls);
  w.field("unmatched", s.unmatched);
  w.key("latency_ns");  // as `uprof report` writes it
  if (s.paired && s.latency.count()) latency_json(w, s.latency, nullptr);
  else w.null();
  w.end_object();
}

void shift_json(JsonWriter& w, const QuantileShift& s) {
  w.begin_object();
  w.field("percentile", s.percent);
  w.field("a_ns", s.a);
  w.field("b_ns", s.b);
  // An unbounded ratio or bound is null (JsonWriter writes no infinity).
  w.field("ratio", s.ratio);
  w.field("ratio_lo", s.ratio_lo);
  w.field("ratio_hi", s.ratio_hi);
  w.field("verdict", to_string(s.verdict));
  w.end_object();
}

// How the two sides were compared: the method, its confidence and percentiles.
void method_json(JsonWriter& w, const DiffModel& d) {
  w.begin_object();
  w.field("name", "order-statistic confidence intervals");
  w.field("confidence", d.options.shift.confidence);
  w.field("min_shift", d.options.shift.min_shift);
  w.key("percentiles");
  w.begin_array();
  for (double p : kDiffPercents) w.value(p);
  w.end_array();
  w.field("description", diff_method(d.options.shift));
  w.end_object();
}

// The binaries of A and B side by side, and whether each is the same build.
void binaries_json(JsonWriter& w, const DiffModel& d) {
  w.begin_array();
  for (const BinaryPair& b : d.binaries) {
    w.begin_object();
    w.field("name", b.name);
    w.field("path_a", b.path_a);
    w.field("path_b", b.path_b);
    w.field("build_id_a", b.build_id_a);
    w.field("build_id_b", b.build_id_b);
    w.field("same_build", b.same_build());
    w.end_object();
  }
  w.end_array();
}

// One row of the "functions" array: a function (or group) in A and B, and its shifts.
void row_json(JsonWriter& w, const DiffModel& d, const DiffRow& r) {
  w.begin_object();
  w.field("name", r.function);
  w.field("label", diff_row_label(r, d.options));
  if (!r.thread.empty()) w.field("thread", r.thread);
  if (d.options.by == GroupBy::Caller) {
    w.key("caller");
    if (r.caller.empty()) w.null();
    else w.value(r.caller);
  }
  if (r.has_by_value && r.value_spec) {
    w.key("by_value");
    value_json(w, r.by_value, *r.value_spec);
  }
  if (r.other_values) w.field("other_values", true);
  w.field("in", r.in_both() ? "both" : r.a.probed ? "a" : "b");
  w.key("a");
  side_json(w, r.a);
  w.key("b");
  side_json(w, r.b);
  w.key("shifts");
  w.begin_array();
  for (const QuantileShift& s : r.shifts) shift_json(w, s);
  w.end_array();
  w.key("max_ratio");
  if (r.compared()) w.value(r.max_ratio);
  else w.null();
  w.end_object();
}

// What --fail-above found: the regressions over `percent`, each with its reason.
void fail_above_json(JsonWriter& w, const DiffModel& d, double percent) {
  w.begin_object();
  w.field("percent", percent);
  w.key("regressions");
  w.begin_array();
  for (const Regression& g : regressions(d, percent)) {
    w.begin_object();
    w.field("label", diff_row_label(d.rows[g.row], d.options));
    w.key("shift");
    shift_json(w, g.shift);
    w.field("reason", regression_text(d, g, percent));
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace

std::string render_json_diff(const DiffModel& d, std::optional<double> fail_above) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", kDiffSchema);
  w.key("method");
  method_json(w, d);
  w.key("a");
  recording_json(w, d.a);
  w.key("b");
  recording_json(w, d.b);
  w.key("binaries");
  binaries_json(w, d);
  w.key("notes");
  w.begin_array();
  for (const std::string& n : diff_notes(d)) w.value(n);
  w.end_array();

  w.key("functions");
  w.begin_array();
  for (const DiffRow& r : d.rows) row_json(w, d, r);
  w.end_array();

  if (fail_above) {
    w.key("fail_above");
    fail_above_json(w, d, *fail_above);
  }
  w.end_object();
  return w.take() + "\n";
}

}  // namespace uprof
