// A decoded perf sample -> the values its probe captures, in the probe's
// ValueSpec order: registers by perf index, stack slots from the copied user stack,
// DWARF constants, and values behind an address that points into that stack.
//   "%di" -> sample.reg(5);  "$stack1" -> 8 bytes at stack[8..16)
//   arm64 `struct big b` = [x0]: 8 bytes at stack[x0 - sp ..)
#pragma once

#include <span>

#include "uprof/drain/record_decoder.h"
#include "uprof/model/recording.h"

namespace uprof {

// Fills out.values / out.nvalues. Returns how many values were unavailable (a
// register the sample lacks, a stack slot beyond the bytes the kernel copied);
// those are stored as 0 and counted by the caller.
// `sp_reg` is the perf index of the stack pointer of the probed file's arch.
unsigned extract_values(const Sample& s, std::span<const ValueSpec> specs, uint16_t sp_reg, Event& out);

}  // namespace uprof
