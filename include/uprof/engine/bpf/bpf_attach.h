// How the BPF engine puts its program on the probed code, decided once per recording
// from what the kernel has (uprobe_links.h: its BTF names the attach types) and what
// the user asked for (record --attach):
//
//   links, sessions   Linux 6.13+: one multi-uprobe link per file and kind; a function's
//                     entry and return probes as one uprobe session whose entry declines
//                     the return in every process uprof does not follow
//   links             Linux 6.6-6.12: entries and returns as multi-uprobe links; returns
//                     go through the kernel's trampoline in every process running the code
//   events            older kernels, or --attach events: one uprobe-PMU perf event per
//                     probe (open ~4.8 ms, close ~94 ms each here)
//
// With -p PID on 6.10+, links carry the kernel's pid filter: the breakpoints go only into
// that process (its threads), and children it forks later are not recorded.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "uprof/engine/bpf/bpf_engine.h"
#include "uprof/engine/bpf/uprobe_links.h"
#include "uprof/engine/capture_engine.h"
#include "uprof/model/capture_plan.h"
#include "uprof/util/result.h"

namespace uprof {

std::string_view to_string(BpfAttach a);
std::optional<BpfAttach> bpf_attach_from_name(std::string_view name);

struct BpfAttachChoice {
  bool links = false;         // multi-uprobe links, else uprobe-PMU events
  bool sessions = false;      // returns as uprobe sessions (links only)
  pid_t pid_filter = 0;       // links' pid filter (-p on 6.10+), 0 for none
  UprobeLinkSupport types{};  // the kernel's attach type numbers
  // For the record line and the data file: "multi-uprobe links, sessions".
  std::string describe() const;
};

// `kernel_release` is uname -r ("6.18.44-..."): the links' pid filter is used from 6.10
// on, the first release where it is known to work (docs/kernel-findings.md).
// $UPROF_BPF_PRETEND=no-multi or no-session answers as a kernel without them.
Result<BpfAttachChoice> choose_bpf_attach(BpfAttach want, const CaptureTarget& target, UprobeLinkSupport kernel,
                                          std::string_view kernel_release);

// Lines for the user about processes outside the recording: each probed file that
// other processes may map (not the workload's own program), what a call there pays,
// and whether its returns are left alone.
std::vector<std::string> bpf_attach_notes(const CapturePlan& plan, const CaptureTarget& target,
                                          const BpfAttachChoice& choice, const std::string& workload_file);

// The line for a site the kernel refused: its function, file, offset and the reason.
std::string refused_site_note(const CapturePlan& plan, const RefusedSite& site);

}  // namespace uprof
