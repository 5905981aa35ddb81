#include "uprof/calibrate/record_costs.h"

#include "uprof/calibrate/probe_bench.h"
#include "uprof/calibrate/probe_sites.h"

namespace uprof {

RecordCosts costs_for_recording(const std::vector<ProbeInfo>& probes, EngineKind engine, bool measure,
                                const std::function<void(std::span<const InsnClass>)>& before_measuring,
                                const std::vector<SiteMove>& moves) {
  auto sites = classify_probe_sites(probes, host_arch());
  for (auto& site : sites)
    for (const auto& m : moves)
      if (m.path == site.path && m.file_offset == site.file_offset) site.moved_from = m.from;
  std::vector<InsnClass> classes;
  for (const auto& site : sites) classes.push_back(site.info.cls);
  RecordCalibration cal = calibrate_for_record(classes, engine, measure, before_measuring);
  RecordCosts out;
  out.warning = cal.why;
  if (cal.table) {
    const EngineCosts& figures = cal.table->engine(engine);
    out.costs.inside_ns = probe_costs_for(figures, probes, sites);
    out.costs.hit_ns = probe_hit_costs_for(figures, probes, sites);
    set_site_costs(sites, probes, out.costs.inside_ns);
  }
  out.sites_line = render_probe_sites(sites);
  return out;
}

}  // namespace uprof
