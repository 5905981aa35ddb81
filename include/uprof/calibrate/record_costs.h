// What `uprof record` learns between planning and running: which class each probed
// instruction is in (single-stepped, emulated, optimized), what that costs on this
// kernel with the engine it records with (uprof bench's cache, or a quick measurement
// now for a class it lacks), and so what each probe adds to its function's calls, to
// be stored in the data file.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "uprof/engine/engine_kind.h"
#include "uprof/model/recording.h"
#include "uprof/model/site_move.h"
#include "uprof/record/recording_session.h"
#include "uprof/resolve/insn/insn_class.h"

namespace uprof {

struct RecordCosts {
  ProbeCosts costs;          // empty lists when no figure is known
  std::string sites_line;    // "uprof: first instructions: add single-stepped (lea ...) +14.6us a call, ..."
  std::string warning;       // a measurement or the cache write failed; "" otherwise
};

// `engine`: the one the recording uses (engine_resolution.h), whose figures are taken.
// `measure`: measure the classes the cache lacks for it (about half a second each);
// `before_measuring` is told which, first.
// `moves`: the sites placement moved, named on the first-instructions line.
RecordCosts costs_for_recording(const std::vector<ProbeInfo>& probes, EngineKind engine, bool measure,
                                const std::function<void(std::span<const InsnClass>)>& before_measuring,
                                const std::vector<SiteMove>& moves = {});

}  // namespace uprof
