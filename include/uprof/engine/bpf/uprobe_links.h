// Multi-uprobe links: one BPF link puts a program on many offsets of one file at once
// (BPF_LINK_CREATE with attach type BPF_TRACE_UPROBE_MULTI, Linux 6.6+; its pid filter
// works from 6.10). Attaching 3,839 libstdc++ functions this way took 0.094 s and
// detaching them 0.185 s on this project's VM, where one uprobe-PMU event per probe
// costs ~4.8 ms to open and ~94 ms to close (each close waits for an RCU-tasks-trace
// grace period: perf_uprobe_destroy -> uprobe_unregister_sync). A link's close waits
// once for all its sites.
//
// A uprobe session (attach type BPF_TRACE_UPROBE_SESSION, Linux 6.13+) runs one program
// at a function's entry and again at its return, and only returns the program's entry
// invocation asked for: an entry that returns 1 gets no return probe. The BPF engine's
// session program declines the return in every process it does not follow, so a
// process outside the recording never has its return address replaced by the kernel's
// trampoline (a C++ exception thrown through such a frame would abort it).
//
// This file plans the links (pure: which probes go into which link, with which cookie)
// and creates them with the raw syscall: Debian 12's libbpf 1.1 has no API for them
// (1.3 added bpf_program__attach_uprobe_multi). The attr layout is the kernel's UAPI
// (include/uapi/linux/bpf.h, union bpf_attr, link_create.uprobe_multi at byte 16).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "uprof/model/capture_plan.h"
#include "uprof/util/result.h"
#include "uprof/util/unique_fd.h"

namespace uprof {

enum class LinkKind : uint8_t {
  Entries,   // a program at each offset (entry probes, exits at RET, lines, USDT)
  Returns,   // a program at each offset's return (uretprobes): kernels without sessions
  Sessions,  // a program at each offset's entry and return, the return only when the entry asks
};
std::string_view to_string(LinkKind k);

// A session cookie names two capture-table entries: the entry probe's in the low half,
// the return probe's in the high half, each as its index + 1 (0: none). Entries and
// Returns links' cookies are the probe's index.
constexpr uint64_t session_cookie(int64_t entry, int64_t ret) {
  return static_cast<uint64_t>(entry + 1) | (static_cast<uint64_t>(ret + 1) << 32);
}

struct LinkSite {
  uint64_t offset = 0;
  uint64_t ref_ctr_offset = 0;  // a USDT semaphore, 0 for none
  uint64_t cookie = 0;
  std::vector<uint32_t> probes{};  // the plan's probe indices this site fires (1, or 2 in a session)
};

struct LinkPlan {
  std::string path{};
  LinkKind kind = LinkKind::Entries;
  bool text = false;  // a site reads strings: the link takes the string-reading program
  bool sleepable = false;  // a site reads memory behind an address: the sleepable twin
  std::vector<LinkSite> sites{};
};

// Groups the plan's probes into links: per file, per kind, per program (with strings or
// without). With `sessions`, a return probe and the entry probe at the same offset
// share a session site (a return probe alone gets a session site with no entry
// record); without, returns get a Returns link. `texts[i]`: probe i reads strings;
// `sleepables[i]`: probe i reads memory behind an address (its program may fault).
std::vector<LinkPlan> plan_uprobe_links(const CapturePlan& plan, const std::vector<bool>& texts, bool sessions,
                                        const std::vector<bool>& sleepables = {});

// The kernel's numbers for the two attach types, read from its BTF (enum
// bpf_attach_type in /sys/kernel/btf/vmlinux): 0 when the kernel has no such attach type.
struct UprobeLinkSupport {
  uint32_t multi = 0;    // BPF_TRACE_UPROBE_MULTI (48 on 6.6+)
  uint32_t session = 0;  // BPF_TRACE_UPROBE_SESSION (57 on 6.13+)
};
UprobeLinkSupport uprobe_link_support();

// Creates one link for `sites` (a subset of a LinkPlan's) with program `prog_fd`;
// `pid` > 0 puts the breakpoints only into that process (Linux 6.10+). On failure `fd`
// is invalid and `error` is the kernel's errno: ENOTSUPP (524) when it refuses an
// instruction it was asked to probe, EINVAL for an offset outside the file.
struct LinkAttempt {
  UniqueFd fd{};
  int error = 0;
};
LinkAttempt create_uprobe_link(int prog_fd, uint32_t attach_type, bool is_return, const std::string& path,
                               std::span<const LinkSite> sites, pid_t pid);

// The programs a LinkPlan's kind, text and sleepable take (their fds), and the kernel's
// numbers for the attach types.
struct LinkPrograms {
  int entries = -1, entries_text = -1;    // also for Returns links
  int sessions = -1, sessions_text = -1;  // -1 when the kernel has no sessions
  int entries_s = -1, entries_text_s = -1, sessions_s = -1, sessions_text_s = -1;  // the sleepable twins
  UprobeLinkSupport types{};
};

// A site the kernel would not probe: ENOTSUPP (524) for an instruction its uprobe code
// does not handle (x86: a lock prefix; see resolve/insn/insn_class.h).
struct RefusedSite {
  std::string path{};
  uint64_t offset = 0;
  int error = 0;
  std::vector<uint32_t> probes{};
};

struct AttachedLinks {
  std::vector<UniqueFd> links{};
  std::vector<RefusedSite> refused{};
  std::size_t attempts = 0;  // BPF_LINK_CREATE calls made
};

// Creates every planned link. A link the kernel refuses is split in halves and each
// half tried again, down to single sites, so one refused site costs O(log n) attempts
// and never the rest: the refused sites are listed, the others attached (in up to
// O(refused * log n) links). An error only when nothing could be attached for a reason
// that is not a site's (no permission, no memory).
Result<AttachedLinks> attach_uprobe_links(std::span<const LinkPlan> links, const LinkPrograms& programs, pid_t pid);

}  // namespace uprof
