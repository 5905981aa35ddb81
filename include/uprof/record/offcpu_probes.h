// record --off-cpu: which probes carry their thread's off-CPU totals. A function measured
// at its entry and its return (or its exits) gets them on both: the call's share is the
// return's totals minus the entry's (analyse/pairing.h). Its entry opens a call on the
// thread and its return or exit closes it (OffCpuRole), which is what the BPF engine's
// scheduler program follows. A row without both ends gets none (an entry that no return
// closes would keep its thread followed for ever, and gives no call to split):
//
//   -e add            -> add (entry: Enter)   add%return (Leave)
//   -e 'add+0x10'     -> none (an instruction: no call)
//   -e add --entry-only, lines.c:23, usdt:... -> none
#pragma once

#include "uprof/record/probe_table.h"

namespace uprof {

// Sets ProbeInfo::offcpu and ProbeCapture::offcpu of every probe whose row has both ends.
void mark_offcpu_probes(ProbeTable& table);

}  // namespace uprof
