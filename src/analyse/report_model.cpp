#include "uprof/analyse/report_model.h"

#include <algorithm>

namespace uprof {

Result<ReportModel> build_report(const std::string& path, const AggregateOptions& options) {
  UPROF_ASSIGN(DataFileReader reader, DataFileReader::open(path));
  ReportModel m;
  m.path = path;
  m.meta = reader.meta();
  m.probes = reader.probes();
  m.file_size = reader.file_size();
  m.functions = group_probes(m.probes);
  m.options = options;
  m.options.start_time = m.meta.start_monotonic_ns;
  if (m.options.compensate) {
    if (!m.meta.probe_cost_ns)
      return err("report: ", path, " holds no probe cost to compensate for (run 'uprof bench' once on the "
                 "recording machine, then 'uprof record')");
    m.options.compensate_ns = m.meta.probe_cost_ns;
  }
  UPROF_TRY(check_aggregate_options(m.functions, m.options));

  Pairer pairer(m.functions);
  Aggregator agg(m.functions, m.options);
  Event e;
  while (reader.next(e)) {
    m.events++;
    if (e.kind == EventKind::Sample) {
      m.samples++;
      if (!m.first_time) m.first_time = e.time;
      m.last_time = e.time;
    } else if (e.kind == EventKind::Lost) {
      m.lost += e.lost;
    }
    pairer.add(e, agg);
  }
  pairer.finish(agg);
  m.trailer = reader.trailer();
  // The recorder's counters see drops that no PERF_RECORD_LOST reported.
  if (m.trailer) m.lost = std::max(m.lost, m.trailer->lost);
  m.problems = reader.problems();
  m.pairing = pairer.counts();
  m.groups = agg.groups();
  m.totals = agg.function_totals();
  m.selected.resize(m.functions.functions.size());
  for (std::size_t i = 0; i < m.selected.size(); i++) m.selected[i] = agg.selected(static_cast<uint32_t>(i));
  m.filtered_out = agg.filtered_out();
  return m;
}

}  // namespace uprof
