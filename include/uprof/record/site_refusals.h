// Planning's refusal step, after placement (site_placement.h): a probe whose site the
// kernel refuses, or uprof does (resolve/insn/insn_class.h, "rejected"), never reaches
// an engine. The kernel checks the instruction only when it writes the breakpoint into
// a process, which for a launched workload is after uprof attached: unpredicted, a
// refusal is silent (the perf engine's per-task probe never fires: 0 calls, exit 0) or
// sinks the whole attach (the BPF engine's probes are opened for every process:
// "Unknown error 524"). So uprof refuses the site first:
//
//   -e 'libc:pthread_spin_*'   a glob: the function is skipped, with one line naming
//                              it (resolve/insn/site_refusal.h); the others record
//   -e libc:pthread_spin_lock  names it: the recording fails with that line
//
// A function's return probe sits at its entry site and goes with it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "uprof/resolve/insn/site_refusal.h"
#include "uprof/resolve/resolved_probe.h"
#include "uprof/resolve/resolver.h"
#include "uprof/spec/probe_spec.h"
#include "uprof/util/result.h"

namespace uprof {

// Why `probe`'s site is refused; nullopt when it can be probed.
Result<std::optional<SiteRefusal>> refusal_of(Resolver& resolver, const ResolvedProbe& probe);

// Drops the probes whose site is refused and that came from a glob among `specs` (a
// "skipped ..." line each in `notes`); fails with the refusal of any other.
Status refuse_sites(Resolver& resolver, std::vector<ResolvedProbe>& probes, const std::vector<ProbeSpec>& specs,
                    std::vector<std::string>& notes);

}  // namespace uprof
