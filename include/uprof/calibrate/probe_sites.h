// Which class each probed instruction is in (insn_class.h), for the line `uprof record`
// prints before it starts, and the probe cost it stores from `uprof bench`'s figures.
#pragma once

#include <string>
#include <vector>

#include "uprof/calibrate/probe_cost.h"
#include "uprof/resolve/insn/insn_class.h"
#include "uprof/model/recording.h"

namespace uprof {

struct ProbeSite {
  std::string label;    // "add", "loop_sum+0x1c", or the offset
  InsnInfo info;
  std::string path;     // the probed instruction
  uint64_t file_offset = 0;
  // What its probes add to each call's measured latency (0: unknown): the figure the
  // report's "probe dominates" note and --compensate use, so that record and report
  // state one cost per function.
  uint64_t cost_ns = 0;
  std::string moved_from{};   // placement moved the site: "endbr64 (single-stepped) -> +0x4"
};

// One per probed instruction: an entry and a return probe on one function are one
// site (the kernel puts both on the function's first instruction). A file that cannot
// be read gives no site.
std::vector<ProbeSite> classify_probe_sites(const std::vector<ProbeInfo>& probes, Arch arch);

// "uprof: first instructions: add emulated (push %rbp) +2.7us a call, mul single-stepped (lea ...)
// +14.6us a call" (the cost where known); with more than `max_listed` sites, counts per class
// instead, with the range of their costs.
std::string render_probe_sites(const std::vector<ProbeSite>& sites, std::size_t max_listed = 4);

// Sets each site's cost_ns from `inside_costs` (per probe, probe_costs_for) of the
// probes on it: the largest, as an entry and a return probe on one site share it.
void set_site_costs(std::vector<ProbeSite>& sites, const std::vector<ProbeInfo>& probes,
                    const std::vector<uint64_t>& inside_costs);

// RecordingMeta::probe_costs_ns: per probe, what the probes on its instruction add to a
// measured call (ClassCost::inside_ns of the instruction's class, among the figures of
// the engine that records); 0 when the class was not measured or the probe's
// instruction is not among `sites`.
std::vector<uint64_t> probe_costs_for(const EngineCosts& t, const std::vector<ProbeInfo>& probes,
                                      const std::vector<ProbeSite>& sites);

// RecordingMeta::probe_hit_costs_ns: per probe, what one hit costs in all, from its
// instruction's class: half the entry + return figure for a probe of a function probed
// at both ends, the entry or the return figure for a probe that does not pair; 0 when
// the class was not measured.
std::vector<uint64_t> probe_hit_costs_for(const EngineCosts& t, const std::vector<ProbeInfo>& probes,
                                          const std::vector<ProbeSite>& sites);

}  // namespace uprof
