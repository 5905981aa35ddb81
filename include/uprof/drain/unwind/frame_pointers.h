// record --call-graph fp: the callers by the frame-pointer chain in the copied stack,
// for code built with frame pointers (the DWARF unwinder needs no such help). Pure.
//
//   at work's entry (x86-64): pc = work, sp -> [ret into spinner], rbp = spinner's frame
//     -> {work, [sp] (in spinner), [rbp + 8] (in main), [[rbp] + 8], ...}
// The first return address is the one a function's entry or exit has at hand (x86-64
// [sp], arm64 lr); a probe inside a function past its frame setup gets its caller twice.
#pragma once

#include <cstdint>
#include <vector>

#include "uprof/drain/unwind/user_stack.h"

namespace uprof {

// The pcs from the probe's own (pc first), at most `max` of them; the walk stops where a
// link leaves the copy or does not go up the stack.
std::vector<uint64_t> walk_frame_pointers(const UserStack& stack, bool from_return, std::size_t max);

}  // namespace uprof
