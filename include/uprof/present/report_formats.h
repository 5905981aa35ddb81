// The report as data: JSON (one document, schema "uprof.report/1", described in
// docs/report.schema.json) and CSV (one row per group).
#pragma once

#include <string>

#include "uprof/analyse/report_model.h"
#include "uprof/present/report_text.h"

namespace uprof {

inline constexpr const char* kReportSchema = "uprof.report/1";

std::string render_json_report(const ReportModel& m, const TextReportOptions& o);
std::string render_csv_report(const ReportModel& m, const TextReportOptions& o);

}  // namespace uprof
