// The capture plan as the BPF engine's kernel side reads it: one table entry per
// probe (bpf_capture_abi.h), each value slot a few steps over the probed thread's
// registers and user memory. Pure: no kernel, no libbpf.
//
//   %di (x86-64)           -> REG(+112)
//   $stack1                -> REG(sp) READ(8 @ +8)
//   s.b, s at [di], +4     -> REG(di) READ(4 @ +4)
//   a DWARF constant       -> no step (the converter fills it in)
#pragma once

#include <vector>

#include "uprof/engine/bpf/bpf_capture_abi.h"
#include "uprof/model/capture_plan.h"
#include "uprof/util/result.h"

namespace uprof {

// A register pt_regs does not hold, or more values than a record carries, is an
// Error naming the probe's file offset and the value.
Result<uprof_bpf_probe> bpf_capture_entry(const ProbeCapture& probe, Arch arch);

// One entry per probe of the plan, in plan order (the attach cookie is the index).
Result<std::vector<uprof_bpf_probe>> bpf_capture_table(const CapturePlan& plan);

}  // namespace uprof
