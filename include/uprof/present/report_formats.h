// The report as data: JSON (one document, schema "uprof.report/1", described in
// docs/report.schema.json) and CSV (one row per group).
#pragma once

#include <functional>
#include <string>

#include "uprof/analyse/report_model.h"
#include "uprof/present/report_text.h"

namespace uprof {

inline constexpr const char* kReportSchema = "uprof.report/1";

std::string render_json_report(const ReportModel& m, const TextReportOptions& o);
std::string render_csv_report(const ReportModel& m, const TextReportOptions& o);

// Pieces shared by the other JSON documents (uprof diff's).
class JsonWriter;
// The "recording" object: the file, command, host, engine, counts, problems.
void recording_json(JsonWriter& w, const ReportModel& m);
// A group's "latency_ns" object: count, total, mean, min, percentiles, max, the log2
// buckets, and the linear ones when given. `hidden(p)`: percentile p is no figure (null),
// as GroupStats::compensation_hides says after --compensate.
void latency_json(JsonWriter& w, const LatencyHistogram& h, const LinearHistogram* linear,
                  const std::function<bool(double)>& hidden = {});
// A captured value as its spec says: a signed or unsigned number, a string's bytes.
void value_json(JsonWriter& w, uint64_t normalized, const ValueSpec& spec);

}  // namespace uprof
