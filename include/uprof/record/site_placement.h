// Planning's placement step: moves each function entry's probe site forward when the
// rules of resolve/insn/probe_placement.h allow it (unless --exact-site), after the values
// are bound at the entry. The return probe of the same function moves with it (one trap
// serves both). Reads the function's bytes and the file's branch targets through the
// resolver, which keeps them per file.
#pragma once

#include <string>
#include <vector>

#include "uprof/model/site_move.h"
#include "uprof/record/probe_table.h"
#include "uprof/record/unwind_risk.h"
#include "uprof/resolve/insn/probe_placement.h"
#include "uprof/resolve/resolved_probe.h"
#include "uprof/resolve/resolver.h"
#include "uprof/util/result.h"

namespace uprof {

// Moves the entry probes' vaddr and file_offset (the one field of the probe this stage
// writes: the site is the probe's address). `risks` says which functions keep no return
// probe (a moved entry need not serve one). A site moved past an instruction the kernel
// refuses gets a line in `notes`: the refusal (resolve/insn/site_refusal.h) and where the
// probe went instead. `placements`, when given, gets one entry per probe (the default for
// a probe that is not at a function's entry), for `uprof probe` to say what was chosen
// and why.
Status place_sites(Resolver& resolver, std::vector<ResolvedProbe>& probes, const PlanOptions& plan,
                   const ReturnRisks& risks, std::vector<SiteMove>& moves, std::vector<std::string>& notes,
                   std::vector<Placement>* placements = nullptr);

}  // namespace uprof
