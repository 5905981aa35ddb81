#include "uprof/engine/bpf/bpf_attach.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include "uprof/util/hex.h"

namespace uprof {

std::string_view to_string(BpfAttach a) {
  switch (a) {
    case BpfAttach::Auto: return "auto";
    case BpfAttach::Links: return "links";
    case BpfAttach::Events: return "events";
  }
  return "?";
}

std::optional<BpfAttach> bpf_attach_from_name(std::string_view name) {
  for (BpfAttach a : {BpfAttach::Auto, BpfAttach::Links, BpfAttach::Events})
    if (to_string(a) == name) return a;
  return std::nullopt;
}

std::string BpfAttachChoice::describe() const {
  if (!links) return "uprobe-PMU events";
  std::string s = sessions ? "multi-uprobe links, sessions" : "multi-uprobe links";
  if (pid_filter > 0) s += ", pid " + std::to_string(pid_filter) + " only";
  return s;
}

namespace {

// "6.18.44-fc" -> (6, 18); (0, 0) when unreadable.
std::pair<int, int> release_version(std::string_view release) {
  int major = 0, minor = 0;
  if (std::sscanf(std::string(release).c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

}  // namespace

Result<BpfAttachChoice> choose_bpf_attach(BpfAttach want, const CaptureTarget& target, UprobeLinkSupport kernel,
                                          std::string_view kernel_release) {
  const char* pretend_env = std::getenv("UPROF_BPF_PRETEND");
  std::string_view pretend = pretend_env ? pretend_env : "";
  if (pretend == "no-multi") kernel = {};
  if (pretend == "no-session") kernel.session = 0;
  BpfAttachChoice c;
  c.types = kernel;
  if (want == BpfAttach::Events) return c;
  if (!kernel.multi) {
    if (want == BpfAttach::Links)
      return err("bpf engine: --attach links: this kernel has no multi-uprobe links (Linux 6.6+)",
                 pretend == "no-multi" ? " (pretended absent by UPROF_BPF_PRETEND)" : "");
    return c;
  }
  c.links = true;
  c.sessions = kernel.session != 0;
  const bool attached_to_process = !target.system_wide && target.pid > 0 && !target.start_on_exec;
  if (attached_to_process && release_version(kernel_release) >= std::pair{6, 10}) c.pid_filter = target.pid;
  return c;
}

std::vector<std::string> bpf_attach_notes(const CapturePlan& plan, const CaptureTarget& target,
                                          const BpfAttachChoice& choice, const std::string& workload_file) {
  std::vector<std::string> out;
  if (choice.pid_filter > 0) {
    out.push_back("note: the probes are only in process " + std::to_string(choice.pid_filter) +
                  " (the kernel's pid filter): its threads are recorded, children it forks from now on are not");
    return out;
  }
  if (target.system_wide) return out;
  std::error_code ec;
  std::map<std::string, bool> files;  // path -> it has return probes, in path order
  for (const ProbeCapture& p : plan.probes) files[p.path] |= p.is_return;
  for (const auto& [path, returns] : files) {
    if (!workload_file.empty() && std::filesystem::equivalent(path, workload_file, ec)) continue;
    std::string line = "note: " + path +
                       " is mapped by other processes too: while uprof records, each call of a probed function in "
                       "any of them takes the probe's trap (about a probe hit's cost)";
    if (returns && choice.sessions)
      line += "; their returns are left alone (uprobe sessions)";
    else if (returns)
      line += std::string("; their returns go through the kernel's return trampoline too (") +
              (choice.links ? "this kernel has no uprobe sessions, Linux 6.13+"
                            : "uprobe-PMU events") +
              "): an exception or a longjmp through such a call can end that process. --engine perf confines the "
              "probes to the workload";
    out.push_back(std::move(line));
  }
  return out;
}

std::string refused_site_note(const CapturePlan& plan, const RefusedSite& site) {
  std::string names;
  for (uint32_t i : site.probes) {
    if (i >= plan.probes.size() || plan.probes[i].label.empty()) continue;
    if (names.find(plan.probes[i].label) != std::string::npos) continue;
    names += (names.empty() ? "" : ", ") + plan.probes[i].label;
  }
  const std::string why = site.error == 524 ? "the kernel does not probe this instruction (ENOTSUPP)"
                                            : std::string("the kernel refused it: ") + std::strerror(site.error);
  return "skipped " + (names.empty() ? std::string("a probe") : names) + " (" + site.path + " @ " + hex(site.offset) +
         "): " + why;
}

}  // namespace uprof
