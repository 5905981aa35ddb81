#include "uprof/engine/bpf/uprobe_links.h"

#include <bpf/btf.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>
#include <tuple>

#include "uprof/util/result.h"

namespace uprof {

std::string_view to_string(LinkKind k) {
  switch (k) {
    case LinkKind::Entries: return "entries";
    case LinkKind::Returns: return "returns";
    case LinkKind::Sessions: return "sessions";
  }
  return "?";
}

std::vector<LinkPlan> plan_uprobe_links(const CapturePlan& plan, const std::vector<bool>& texts, bool sessions,
                                        const std::vector<bool>& sleepables) {
  // Key: (path, kind, text, sleepable) -> the link; within it, sites in the plan's order.
  std::map<std::tuple<std::string, LinkKind, bool, bool>, LinkPlan> links;
  auto text_of = [&](std::size_t i) { return i < texts.size() && texts[i]; };
  auto sleeps = [&](std::size_t i) { return i < sleepables.size() && sleepables[i]; };
  auto add = [&](const std::string& path, LinkKind kind, bool text, bool sleepable, LinkSite site) {
    LinkPlan& l = links[{path, kind, text, sleepable}];
    l.path = path;
    l.kind = kind;
    l.text = text;
    l.sleepable = sleepable;
    l.sites.push_back(std::move(site));
  };
  std::vector<bool> taken(plan.probes.size(), false);
  if (sessions) {
    // Each return probe with the entry probe at its offset, if the plan has one.
    std::map<std::pair<std::string, uint64_t>, std::vector<std::size_t>> entries_at;
    for (std::size_t i = 0; i < plan.probes.size(); i++) {
      const ProbeCapture& p = plan.probes[i];
      if (!p.is_return) entries_at[{p.path, p.file_offset}].push_back(i);
    }
    for (std::size_t r = 0; r < plan.probes.size(); r++) {
      const ProbeCapture& ret = plan.probes[r];
      if (!ret.is_return) continue;
      int64_t entry = -1;
      auto it = entries_at.find({ret.path, ret.file_offset});
      if (it != entries_at.end()) {
        for (std::size_t e : it->second)
          if (!taken[e] && plan.probes[e].ref_ctr_offset == 0) {
            entry = static_cast<int64_t>(e);
            break;
          }
      }
      taken[r] = true;
      LinkSite site{.offset = ret.file_offset, .ref_ctr_offset = 0,
                    .cookie = session_cookie(entry, static_cast<int64_t>(r)), .probes = {}};
      if (entry >= 0) {
        taken[static_cast<std::size_t>(entry)] = true;
        site.probes.push_back(static_cast<uint32_t>(entry));
      }
      site.probes.push_back(static_cast<uint32_t>(r));
      const bool text = text_of(r) || (entry >= 0 && text_of(static_cast<std::size_t>(entry)));
      const bool sleepable = sleeps(r) || (entry >= 0 && sleeps(static_cast<std::size_t>(entry)));
      add(ret.path, LinkKind::Sessions, text, sleepable, std::move(site));
    }
  }
  for (std::size_t i = 0; i < plan.probes.size(); i++) {
    if (taken[i]) continue;
    const ProbeCapture& p = plan.probes[i];
    add(p.path, p.is_return ? LinkKind::Returns : LinkKind::Entries, text_of(i), sleeps(i),
        LinkSite{.offset = p.file_offset, .ref_ctr_offset = p.ref_ctr_offset, .cookie = i,
                 .probes = {static_cast<uint32_t>(i)}});
  }
  std::vector<LinkPlan> out;
  out.reserve(links.size());
  for (auto& [key, l] : links) out.push_back(std::move(l));
  return out;
}

UprobeLinkSupport uprobe_link_support() {
  static const UprobeLinkSupport cached = [] {
    UprobeLinkSupport s;
    btf* vmlinux = btf__load_vmlinux_btf();
    if (!vmlinux) return s;
    const int id = btf__find_by_name_kind(vmlinux, "bpf_attach_type", BTF_KIND_ENUM);
    if (id > 0) {
      const btf_type* t = btf__type_by_id(vmlinux, static_cast<uint32_t>(id));
      const struct btf_enum* e = btf_enum(t);
      for (int i = 0; i < btf_vlen(t); i++) {
        std::string_view name = btf__name_by_offset(vmlinux, e[i].name_off);
        if (name == "BPF_TRACE_UPROBE_MULTI") s.multi = static_cast<uint32_t>(e[i].val);
        if (name == "BPF_TRACE_UPROBE_SESSION") s.session = static_cast<uint32_t>(e[i].val);
      }
    }
    btf__free(vmlinux);
    return s;
  }();
  return cached;
}

namespace {

// union bpf_attr's link_create for uprobe_multi, as include/uapi/linux/bpf.h lays it out
// since 6.6 (Debian 12's headers are 6.1's and lack it).
struct UprobeMultiLinkAttr {
  uint32_t prog_fd;
  uint32_t target_fd;
  uint32_t attach_type;
  uint32_t flags;
  uint64_t path;
  uint64_t offsets;
  uint64_t ref_ctr_offsets;
  uint64_t cookies;
  uint32_t cnt;
  uint32_t multi_flags;
  uint32_t pid;
};
static_assert(offsetof(UprobeMultiLinkAttr, path) == 16 && offsetof(UprobeMultiLinkAttr, pid) == 56);
constexpr uint32_t kUprobeMultiReturn = 1;  // BPF_F_UPROBE_MULTI_RETURN

}  // namespace

LinkAttempt create_uprobe_link(int prog_fd, uint32_t attach_type, bool is_return, const std::string& path,
                               std::span<const LinkSite> sites, pid_t pid) {
  std::vector<uint64_t> offsets, ref_ctrs, cookies;
  bool any_ref = false;
  for (const LinkSite& s : sites) {
    offsets.push_back(s.offset);
    ref_ctrs.push_back(s.ref_ctr_offset);
    cookies.push_back(s.cookie);
    any_ref |= s.ref_ctr_offset != 0;
  }
  // The syscall reads the whole union's size: the tail past the uprobe_multi fields is zero.
  union {
    UprobeMultiLinkAttr lc;
    char bytes[sizeof(bpf_attr)];
  } attr;
  std::memset(&attr, 0, sizeof attr);
  attr.lc.prog_fd = static_cast<uint32_t>(prog_fd);
  attr.lc.attach_type = attach_type;
  attr.lc.path = reinterpret_cast<uint64_t>(path.c_str());
  attr.lc.offsets = reinterpret_cast<uint64_t>(offsets.data());
  attr.lc.ref_ctr_offsets = any_ref ? reinterpret_cast<uint64_t>(ref_ctrs.data()) : 0;
  attr.lc.cookies = reinterpret_cast<uint64_t>(cookies.data());
  attr.lc.cnt = static_cast<uint32_t>(sites.size());
  attr.lc.multi_flags = is_return ? kUprobeMultiReturn : 0;
  attr.lc.pid = pid > 0 ? static_cast<uint32_t>(pid) : 0;
  const long fd = ::syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof attr);
  if (fd < 0) return LinkAttempt{.fd = UniqueFd(), .error = errno};
  return LinkAttempt{.fd = UniqueFd(static_cast<int>(fd)), .error = 0};
}

namespace {

bool site_error(int e) { return e == 524 /* ENOTSUPP */ || e == EINVAL || e == EFAULT || e == ENOENT || e == EBADF; }

struct LinkAttacher {
  const LinkPrograms& programs;
  pid_t pid;
  AttachedLinks out{};

  Status attach(const LinkPlan& plan, std::span<const LinkSite> sites) {
    if (sites.empty()) return ok();
    const bool session = plan.kind == LinkKind::Sessions;
    const int prog = plan.sleepable
                         ? (session ? (plan.text ? programs.sessions_text_s : programs.sessions_s)
                                    : (plan.text ? programs.entries_text_s : programs.entries_s))
                         : (session ? (plan.text ? programs.sessions_text : programs.sessions)
                                    : (plan.text ? programs.entries_text : programs.entries));
    const uint32_t type = session ? programs.types.session : programs.types.multi;
    out.attempts++;
    LinkAttempt a = create_uprobe_link(prog, type, plan.kind == LinkKind::Returns, plan.path, sites, pid);
    if (a.fd.valid()) {
      out.links.push_back(std::move(a.fd));
      return ok();
    }
    if (!site_error(a.error))
      return err("bpf engine: attaching ", sites.size(), " ", to_string(plan.kind), " probes to ", plan.path, ": ",
                 std::strerror(a.error));
    if (sites.size() == 1) {
      out.refused.push_back(
          RefusedSite{.path = plan.path, .offset = sites[0].offset, .error = a.error, .probes = sites[0].probes});
      return ok();
    }
    const std::size_t half = sites.size() / 2;
    UPROF_TRY(attach(plan, sites.first(half)));
    return attach(plan, sites.subspan(half));
  }
};

}  // namespace

Result<AttachedLinks> attach_uprobe_links(std::span<const LinkPlan> links, const LinkPrograms& programs, pid_t pid) {
  LinkAttacher a{.programs = programs, .pid = pid};
  for (const LinkPlan& l : links) UPROF_TRY(a.attach(l, l.sites));
  return std::move(a.out);
}

}  // namespace uprof
