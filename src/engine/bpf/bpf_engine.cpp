#include "uprof/engine/bpf/bpf_engine.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "uprof/arch/syscall_kinds.h"
#include "uprof/attach/event_attr.h"
#include "uprof/attach/perf_event.h"
#include "uprof/attach/uprobe_pmu.h"
#include "uprof/drain/bpf_ring_reader.h"
#include "uprof/drain/drain_loop.h"
#include "uprof/drain/event_order.h"
#include "uprof/attach/mapping_watch.h"
#include "uprof/drain/unwind/stack_unwinder.h"
#include "uprof/engine/bpf/bpf_attach.h"
#include "uprof/engine/bpf/bpf_capture_table.h"
#include "uprof/engine/bpf/bpf_records.h"
#include "uprof/engine/engine_kind.h"
#include "uprof/util/clock.h"
#include "uprof/util/hex.h"
#include "uprof_capture.skel.h"

namespace uprof {
namespace {

// libbpf's messages: the last warning explains a failed load.
std::string& libbpf_last_message() {
  static std::string last;
  return last;
}

int keep_libbpf_message(enum libbpf_print_level level, const char* format, va_list args) {
  if (std::getenv("UPROF_LIBBPF_LOG")) std::vfprintf(stderr, format, args);
  if (level == LIBBPF_DEBUG) return 0;
  char line[512];
  int n = std::vsnprintf(line, sizeof line, format, args);
  std::string_view s(line, n > 0 ? std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  if (!s.empty()) libbpf_last_message() = std::string(s);
  return 0;
}

std::string libbpf_error(std::string_view what, int rc) {
  std::string m = std::string(what) + ": " + std::strerror(rc < 0 ? -rc : rc);
  if (!libbpf_last_message().empty()) m += " (libbpf: " + libbpf_last_message() + ")";
  return m;
}

struct SkelDelete {
  void operator()(uprof_capture* s) const { uprof_capture__destroy(s); }
};
struct LinkDelete {
  void operator()(bpf_link* l) const { bpf_link__destroy(l); }
};
using Skel = std::unique_ptr<uprof_capture, SkelDelete>;
using Link = std::unique_ptr<bpf_link, LinkDelete>;

// Whether sleepable hit programs can read strings: bpf_copy_from_user_str (Linux 6.12+)
// is a kfunc, named in the kernel's BTF. Without it (or with
// UPROF_BPF_PRETEND=no-sleepable) every probe takes the non-sleepable programs, and a
// value in a page not faulted in yet reads as missing.
bool kernel_has_sleepable_reads() {
  const char* pretend = std::getenv("UPROF_BPF_PRETEND");
  if (pretend && std::string_view(pretend) == "no-sleepable") return false;
  static const bool cached = [] {
    btf* vmlinux = btf__load_vmlinux_btf();
    if (!vmlinux) return false;
    const bool found = btf__find_by_name_kind(vmlinux, "bpf_copy_from_user_str", BTF_KIND_FUNC) > 0;
    btf__free(vmlinux);
    return found;
  }();
  return cached;
}

std::size_t pow2_at_least(std::size_t n) {
  std::size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

uint32_t thread_count(pid_t pid) {
  std::error_code ec;
  uint32_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    n++;
  return n ? n : 1;
}

// Closes the links from several threads at once: each close waits for a grace period
// (RCU tasks trace) before it returns, and concurrent closes share them. One link per
// file and kind is the usual count; a glob whose refused sites were split out leaves
// more (uprobe_links.h).
void close_links(std::vector<UniqueFd> links) {
  const std::size_t threads = std::min<std::size_t>(links.size() / 2, 16);
  if (threads < 2) return;  // `links` closes them as it goes
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; t++)
    pool.emplace_back([&links, t, threads] {
      for (std::size_t i = t; i < links.size(); i += threads) links[i] = UniqueFd();
    });
  for (auto& th : pool) th.join();
}

// record --off-cpu: whether any probe carries its thread's off-CPU totals.
bool plan_wants_offcpu(const CapturePlan& plan) {
  return std::any_of(plan.probes.begin(), plan.probes.end(),
                     [](const ProbeCapture& p) { return p.offcpu != OffCpuRole::None; });
}

// The scheduler programs read the kernel's saved registers, so the table is the host's
// (a recording is of the host's architecture: recording_plan refuses others).
void set_offcpu_rodata(uprof_capture& skel, bool on) {
  const SyscallRegs& regs = syscall_regs(host_arch());
  skel.rodata->offcpu_on = on ? 1 : 0;
  skel.rodata->sys_nr_off = regs.nr_offset;
  skel.rodata->sys_nr_size = regs.nr_size;
  skel.rodata->sys_busy_check = regs.check_busy ? 1 : 0;
  skel.rodata->sys_busy_off = regs.busy_offset;
  skel.rodata->sys_busy_value = regs.busy_value;
}

// The system call -> kind table (arch/syscall_kinds.h), every number the map holds.
Status fill_offcpu_syscalls(uprof_capture& skel) {
  const int fd = bpf_map__fd(skel.maps.offcpu_syscalls);
  for (uint32_t nr = 0; nr < UPROF_BPF_MAX_SYSCALLS; nr++) {
    const uint32_t kind = static_cast<uint32_t>(syscall_kind(host_arch(), nr));
    if (bpf_map_update_elem(fd, &nr, &kind, BPF_ANY) != 0)
      return err("bpf engine: writing the system call table (--off-cpu): ", std::strerror(errno));
  }
  return ok();
}

class BpfEngine final : public CaptureEngine {
 public:
  BpfEngine(const CapturePlan& plan, const CaptureTarget& target, Skel skel, std::vector<UniqueFd> probe_fds,
            std::vector<UniqueFd> multi_links, std::vector<Link> task_links, std::vector<bool> texts,
            std::vector<bool> sleepables, std::string attach_path)
      : plan_(plan), target_(target), skel_(std::move(skel)), probe_fds_(std::move(probe_fds)),
        multi_links_(std::move(multi_links)), task_links_(std::move(task_links)), converter_(plan),
        plan_texts_(std::move(texts)), plan_sleepables_(std::move(sleepables)), attach_path_(std::move(attach_path)) {}

  ~BpfEngine() override { close_links(std::move(multi_links_)); }

  std::string_view name() const override { return to_string(EngineKind::Bpf); }
  std::string attach_path() const override { return attach_path_; }
  std::size_t cpus() const override { return 1; }

  Status start() override {
    if (!target_.system_wide && target_.pid > 0) {
      uint32_t tgid = static_cast<uint32_t>(target_.pid);
      uprof_bpf_task t{.threads = target_.start_on_exec ? 1u : thread_count(target_.pid),
                       .active = target_.start_on_exec ? 0u : 1u};
      if (bpf_map_update_elem(bpf_map__fd(skel_->maps.tasks), &tgid, &t, BPF_ANY) != 0)
        return err("bpf engine: adding pid ", tgid, " to the followed processes: ", std::strerror(errno));
    }
    // Uprobe-PMU events carry the program from now on; multi-uprobe links have carried it
    // since open, and it has ignored every hit until `running`.
    for (std::size_t i = 0; i < probe_fds_.size(); i++) {
      if (!probe_fds_[i].valid()) continue;  // a site the kernel refused
      LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = i);
      // A probe that reads strings has a program of its own, and one that reads memory
      // behind an address its sleepable twin (uprof_capture.bpf.c).
      bpf_program* prog = plan_sleepables_[i] ? (plan_texts_[i] ? skel_->progs.uprof_hit_text_s : skel_->progs.uprof_hit_s)
                                              : (plan_texts_[i] ? skel_->progs.uprof_hit_text : skel_->progs.uprof_hit);
      bpf_link* l = bpf_program__attach_perf_event_opts(prog, probe_fds_[i].get(), &opts);
      if (!l) {
        const ProbeCapture& p = plan_.probes[i];
        return err("bpf engine: attaching the program to ", p.path, " @ ", hex(p.file_offset), ": ",
                   libbpf_error("attach", errno));
      }
      probe_fds_[i].release();  // the link closes it
      probe_links_.emplace_back(l);
    }
    if (mappings_ && !(target_.start_on_exec && !target_.system_wide)) UPROF_TRY(mappings_->enable());
    set_running(true);
    return ok();
  }

  // record -g: the kernel's records of the processes' file mappings (attach/mapping_watch.h).
  void watch_mappings(MappingWatch watch) { mappings_ = std::move(watch); }

  Result<CaptureResult> capture(const StopCondition& stop, const CaptureSink& sink) override {
    const int ring_fd = bpf_map__fd(skel_->maps.events);
    UPROF_ASSIGN(BpfRingReader ring, BpfRingReader::open(ring_fd));
    EventOrderer order(target_.drain_budget ? target_.drain_budget : kDefaultDrainBudget);
    // Space goes back to the kernel in steps of an eighth of the ring (bpf_ring_reader.h).
    const uint64_t release_step = std::max<uint64_t>(ring.size() / 8, 4096);
    BpfEvent ev;
    // record -g: the Object events of the files frames name go just before the first
    // event written that names each (drain/unwind/stack_unwinder.h).
    const EventOrderer::Sink write = [&](const Event& e) -> Status {
      if (!e.stack.empty()) UPROF_TRY(unwinder_.announce(e, sink.write));
      return sink.write(e);
    };
    // One pass: the records the ring held when it began, fewer when the events held
    // reach the budget (drain/event_order.h) or the pass has taken 100 ms; then what
    // can no longer be overtaken goes to the file. Returns the records read.
    auto pass = [&]() -> Result<uint64_t> {
      const uint64_t started = monotonic_ns();
      order.pass_started(started);
      // The mappings first: a stack read below may be of a process that has exited since.
      if (mappings_) UPROF_TRY(read_mappings());
      ring.begin_pass();
      uint64_t n = 0;
      bool cut = false;
      for (;;) {
        if (order.full()) {
          cut = true;
          break;
        }
        auto rec = ring.next();
        if (!rec) break;
        UPROF_TRY(converter_.convert_into(*rec, ev));
        if (ev.lost_before) order.push(ev.cpu, *ev.lost_before);
        if (!ev.none) {
          if (ev.stack) {  // record -g
            // A process gone before its first stack was read: its mappings may have been
            // recorded since the pass began (they came before the stack).
            if (mappings_ && !unwinder_.has_mappings(ev.event.pid)) UPROF_TRY(read_mappings());
            unwinder_.unwind(*ev.stack, plan_.probes[ev.event.probe], ev.event);
          }
          else if (ev.event.kind == EventKind::Exit) exited(ev.event);
          order.push(ev.cpu, ev.event);
        }
        n++;
        if (ring.unreleased() >= release_step) {
          ring.release();
          // A pass is also bounded in time, so that a stop is seen soon whatever an
          // event costs to write.
          if (monotonic_ns() - started > kPassSliceNs) {
            cut = true;
            break;
          }
        }
      }
      ring.release();
      if (cut) order.pass_cut();
      UPROF_TRY(order.pass_ended(write));
      UPROF_TRY(sink.flush());
      return n;
    };
    const int fds[] = {ring_fd};
    UPROF_ASSIGN(StopWaiter waiter, StopWaiter::open(stop, fds));
    CaptureResult r;
    for (;;) {
      bool ready = false;
      UPROF_ASSIGN(std::optional<StopReason> reason, waiter.wait(kPollMs, ready));
      if (reason) {
        r.stop_reason = *reason;
        break;
      }
      UPROF_TRY(pass());
    }
    // Stop every probe at once, then read what is left; detaching them one by one
    // takes long enough for many calls to lose their entry or their return.
    set_running(false);
    probe_links_.clear();
    close_links(std::move(multi_links_));
    task_links_.clear();
    // What the ring holds now is all there is: at most one ring's worth.
    for (;;) {
      UPROF_ASSIGN(uint64_t n, pass());
      if (n == 0 && ring.pending() == 0) break;
    }
    push_unmarked_losses(order);
    UPROF_TRY(order.flush_all(write));

    r.samples = converter_.samples();
    r.missing_values = converter_.missing_values();
    r.late = order.late();
    r.unwinding = unwinder_.counts();
    r.per_probe.resize(plan_.probes.size());
    const int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) return err(libbpf_error("bpf engine: counting CPUs", ncpu));
    std::vector<uprof_bpf_counts> per_cpu(static_cast<std::size_t>(ncpu));
    for (uint32_t i = 0; i < r.per_probe.size(); i++) {
      if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.counts), &i, per_cpu.data()) != 0)
        return err("bpf engine: reading probe ", i, "'s counts: ", std::strerror(errno));
      ProbeAccount& a = r.per_probe[i];
      a.recorded = converter_.recorded()[i];
      for (const auto& c : per_cpu) {
        a.hits += c.hits;
        a.dropped += c.dropped;
      }
    }
    std::vector<uint64_t> drops(static_cast<std::size_t>(ncpu));
    const uint32_t zero = 0;
    if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.task_drops), &zero, drops.data()) != 0)
      return err("bpf engine: reading the task records' drops: ", std::strerror(errno));
    for (uint64_t d : drops) r.task_dropped += d;
    return r;
  }

 private:
  static constexpr int kPollMs = 100;
  static constexpr uint64_t kPassSliceNs = 100'000'000;


  Status read_mappings() {
    return mappings_->drain([&](uint32_t pid, const std::string& line) { unwinder_.add_mapping(pid, line); });
  }

  void exited(const Event& e) {
    unwinder_.thread_exited(e.tid);
    if (e.pid == e.tid) unwinder_.forget(e.pid);
  }

  void set_running(bool on) {
    __atomic_store_n(&skel_->bss->running, on ? 1u : 0u, __ATOMIC_SEQ_CST);
  }

  // Threads that lost records and wrote none after (a note no record took,
  // uprof_capture.bpf.c): their Lost events come last, when the recording stopped.
  void push_unmarked_losses(EventOrderer& order) {
    const int fd = bpf_map__fd(skel_->maps.lost_threads);
    const uint64_t now = monotonic_ns();
    const std::size_t lane = static_cast<std::size_t>(std::max(libbpf_num_possible_cpus(), 1));
    uint32_t key = 0, next = 0;
    for (const uint32_t* prev = nullptr; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
      uprof_bpf_lost note{};
      if (bpf_map_lookup_elem(fd, &next, &note) == 0) order.push(lane, thread_lost_event(note.pid, next, now, note.records));
      key = next;
    }
  }

  const CapturePlan& plan_;
  CaptureTarget target_;
  Skel skel_;
  std::vector<UniqueFd> probe_fds_;    // uprobe-PMU events (BpfAttach::Events)
  std::vector<UniqueFd> multi_links_;  // multi-uprobe links (BpfAttach::Links)
  std::vector<Link> task_links_;
  std::vector<Link> probe_links_;
  BpfRecordConverter converter_;
  StackUnwinder unwinder_{plan_.call_graph.method};
  std::optional<MappingWatch> mappings_;  // record -g
  std::vector<bool> plan_texts_;       // per probe: it reads strings (the uprof_hit_text program)
  std::vector<bool> plan_sleepables_;  // per probe: it reads memory behind an address (the _s twin)
  std::string attach_path_;
};

}  // namespace

Status bpf_engine_supported() {
  const char* pretend = std::getenv("UPROF_BPF_PRETEND");
  std::string_view p = pretend ? pretend : "";
  libbpf_set_print(keep_libbpf_message);
  if (p == "no-bpf" || libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, nullptr) <= 0)
    return err("the kernel cannot load BPF programs on uprobes (bpf(): ",
               p == "no-bpf" ? "pretended absent by UPROF_BPF_PRETEND" : std::strerror(errno), ")");
  if (p == "no-ringbuf" || libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) <= 0)
    return err("the kernel has no BPF ring buffer (Linux 5.8+)",
               p == "no-ringbuf" ? " (pretended absent by UPROF_BPF_PRETEND)" : "");
  if (p == "no-cookie" || libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, nullptr) <= 0)
    return err("the kernel has no bpf_get_attach_cookie for uprobes (Linux 5.15+)",
               p == "no-cookie" ? " (pretended absent by UPROF_BPF_PRETEND)" : "");
  return ok();
}

Result<std::unique_ptr<CaptureEngine>> open_bpf_engine(const CapturePlan& plan, const CaptureTarget& target,
                                                       const BpfEngineOptions& options) {
  UPROF_TRY(bpf_engine_supported());
  UPROF_ASSIGN(std::vector<uprof_bpf_probe> table, bpf_capture_table(plan));
  libbpf_last_message().clear();
  Skel skel(uprof_capture__open());
  if (!skel) return err(libbpf_error("bpf engine: opening the embedded BPF object", errno));
  skel->rodata->follow_all = target.system_wide ? 1 : 0;
  skel->rodata->self_tgid = static_cast<uint32_t>(::getpid());
  const long page = ::sysconf(_SC_PAGESIZE);
  const std::size_t ring =
      pow2_at_least((target.ring_pages ? target.ring_pages : kBpfDefaultRingPages) * static_cast<std::size_t>(page));
  skel->rodata->wakeup_bytes = ring / 4;
  if (plan.call_graph.on) {  // record -g (uprof_capture.bpf.c, emit_stack)
    skel->rodata->stack_bytes = plan.call_graph.stack_bytes;
    skel->rodata->regs_bytes = pt_regs_bytes(plan.arch);
    skel->rodata->sp_offset = pt_regs_offset(plan.arch, arch_info(plan.arch).sp_reg).value_or(0);
    skel->rodata->stack_min_ns = plan.call_graph.stack_min_ns;
  }
  const uint32_t entries = static_cast<uint32_t>(std::max<std::size_t>(1, table.size()));
  if (bpf_map__set_max_entries(skel->maps.events, static_cast<uint32_t>(ring)) ||
      bpf_map__set_max_entries(skel->maps.probes, entries) || bpf_map__set_max_entries(skel->maps.counts, entries))
    return err(libbpf_error("bpf engine: sizing the maps", errno));
  std::vector<bool> texts, sleepables;
  const bool can_sleep = kernel_has_sleepable_reads();
  for (const auto& e : table) {
    texts.push_back(e.text != 0);
    sleepables.push_back(can_sleep && e.faults != 0);
  }
  const bool any_text = std::find(texts.begin(), texts.end(), true) != texts.end();
  auto events_use = [&](bool text, bool sleepable) {
    for (std::size_t i = 0; i < table.size(); i++)
      if (texts[i] == text && sleepables[i] == sleepable) return true;
    return false;
  };
  if (any_text && libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, nullptr) <= 0)
    return err("bpf engine: string values need bpf_loop (Linux 5.17+), which this kernel lacks: use --engine perf");

  struct utsname uts {};
  ::uname(&uts);
  UPROF_ASSIGN(BpfAttachChoice how, choose_bpf_attach(options.attach, target, uprobe_link_support(), uts.release));
  // Only the programs this recording attaches are loaded (and verified).
  auto load = [&](bpf_program* prog, bool wanted, uint32_t attach_type) {
    bpf_program__set_autoload(prog, wanted);
    if (wanted && attach_type) bpf_program__set_expected_attach_type(prog, static_cast<bpf_attach_type>(attach_type));
  };
  // Each program costs a verification (~0.1 s here): only those the links use.
  const std::vector<LinkPlan> planned = how.links ? plan_uprobe_links(plan, texts, how.sessions, sleepables)
                                                  : std::vector<LinkPlan>{};
  auto links_use = [&](bool session, bool text, bool sleepable) {
    return std::any_of(planned.begin(), planned.end(), [&](const LinkPlan& l) {
      return (l.kind == LinkKind::Sessions) == session && l.text == text && l.sleepable == sleepable;
    });
  };
  load(skel->progs.uprof_hit, !how.links && events_use(false, false), 0);
  load(skel->progs.uprof_hit_text, !how.links && events_use(true, false), 0);
  load(skel->progs.uprof_hit_s, !how.links && events_use(false, true), 0);
  load(skel->progs.uprof_hit_text_s, !how.links && events_use(true, true), 0);
  load(skel->progs.uprof_multi, links_use(false, false, false), how.types.multi);
  load(skel->progs.uprof_multi_text, links_use(false, true, false), how.types.multi);
  load(skel->progs.uprof_multi_s, links_use(false, false, true), how.types.multi);
  load(skel->progs.uprof_multi_text_s, links_use(false, true, true), how.types.multi);
  load(skel->progs.uprof_session, links_use(true, false, false), how.types.session);
  load(skel->progs.uprof_session_text, links_use(true, true, false), how.types.session);
  load(skel->progs.uprof_session_s, links_use(true, false, true), how.types.session);
  load(skel->progs.uprof_session_text_s, links_use(true, true, true), how.types.session);
  // --off-cpu: the scheduler programs and their maps only when a probe asks for them.
  const bool offcpu = plan_wants_offcpu(plan);
  set_offcpu_rodata(*skel, offcpu);
  load(skel->progs.uprof_offcpu_switch, offcpu, 0);
  load(skel->progs.uprof_offcpu_wakeup, offcpu, 0);
  bpf_map__set_autocreate(skel->maps.offcpu_task, offcpu);
  bpf_map__set_autocreate(skel->maps.offcpu_syscalls, offcpu);
  // The sleepable programs' scratch (a task storage map) only when one is loaded.
  bpf_map__set_autocreate(skel->maps.scratch_task, std::find(sleepables.begin(), sleepables.end(), true) !=
                                                       sleepables.end());
  if (int rc = uprof_capture__load(skel.get()); rc != 0)
    return err(libbpf_error(offcpu ? "bpf engine: loading the BPF programs (--off-cpu needs Linux 5.18+: task "
                                     "storage, bpf_task_pt_regs, sched_switch's prev_state)"
                                   : "bpf engine: loading the BPF programs",
                            rc));
  if (offcpu) UPROF_TRY(fill_offcpu_syscalls(*skel));
  for (uint32_t i = 0; i < table.size(); i++)
    if (bpf_map_update_elem(bpf_map__fd(skel->maps.probes), &i, &table[i], BPF_ANY) != 0)
      return err("bpf engine: writing probe ", i, "'s capture table: ", std::strerror(errno));

  std::vector<UniqueFd> fds;
  std::vector<UniqueFd> links;
  if (how.links) {
    // The links go on now: a refused site is known before the workload runs, and the
    // program ignores every hit until start() sets `running` (a session's entry then
    // declines the return, so nothing is hijacked meanwhile).
    auto fd_of = [](bpf_program* p) { return p && bpf_program__autoload(p) ? bpf_program__fd(p) : -1; };
    LinkPrograms programs{.entries = fd_of(skel->progs.uprof_multi),
                          .entries_text = fd_of(skel->progs.uprof_multi_text),
                          .sessions = fd_of(skel->progs.uprof_session),
                          .sessions_text = fd_of(skel->progs.uprof_session_text),
                          .entries_s = fd_of(skel->progs.uprof_multi_s),
                          .entries_text_s = fd_of(skel->progs.uprof_multi_text_s),
                          .sessions_s = fd_of(skel->progs.uprof_session_s),
                          .sessions_text_s = fd_of(skel->progs.uprof_session_text_s),
                          .types = how.types};
    UPROF_ASSIGN(AttachedLinks attached, attach_uprobe_links(planned, programs, how.pid_filter));
    if (attached.links.empty() && !attached.refused.empty())
      return err("bpf engine: ", refused_site_note(plan, attached.refused.front()),
                 attached.refused.size() > 1 ? " (and every other site: nothing to record)" : "");
    if (options.on_note)
      for (const RefusedSite& r : attached.refused) options.on_note(refused_site_note(plan, r));
    links = std::move(attached.links);
  } else {
    // The probes' events, opened now so that a bad path or offset fails before the
    // workload runs; the program is attached (and the event enabled) by start().
    UPROF_ASSIGN(UprobePmu pmu, read_uprobe_pmu(uprobe_pmu_dir()));
    for (const ProbeCapture& p : plan.probes) {
      UprobeTarget t{.path = p.path, .offset = p.file_offset, .is_return = p.is_return,
                     .ref_ctr_offset = p.ref_ctr_offset};
      UPROF_TRY(check_uprobe_target(pmu, t));
      UPROF_ASSIGN(UniqueFd fd, open_perf_event(build_bpf_uprobe_attr(pmu, t), -1, 0, -1, PERF_FLAG_FD_CLOEXEC, &t));
      fds.push_back(std::move(fd));
    }
  }
  if (options.on_note)
    for (const std::string& line : bpf_attach_notes(plan, target, how, options.workload_file)) options.on_note(line);
  std::vector<Link> task_links;
  const std::pair<bpf_program*, const char*> tracepoints[] = {
      {skel->progs.uprof_fork, "sched_process_fork"},
      {skel->progs.uprof_exit, "sched_process_exit"},
      {skel->progs.uprof_exec, "sched_process_exec"},
      {skel->progs.uprof_rename, "task_rename"},
  };
  for (auto [prog, name] : tracepoints) {
    bpf_link* l = bpf_program__attach_raw_tracepoint(prog, name);
    if (!l) return err(libbpf_error(std::string("bpf engine: attaching to the tracepoint ") + name, errno));
    task_links.emplace_back(l);
  }
  if (offcpu)
    for (auto [prog, name] : {std::pair{skel->progs.uprof_offcpu_switch, "sched_switch"},
                              std::pair{skel->progs.uprof_offcpu_wakeup, "sched_wakeup"}}) {
      bpf_link* l = bpf_program__attach(prog);
      if (!l) return err(libbpf_error(std::string("bpf engine: --off-cpu: attaching to the tracepoint ") + name, errno));
      task_links.emplace_back(l);
    }
  auto engine = std::make_unique<BpfEngine>(plan, target, std::move(skel), std::move(fds), std::move(links),
                                            std::move(task_links), std::move(texts), std::move(sleepables),
                                            how.describe());
  if (plan.call_graph.on) {
    // A stack is unwound with its process's mappings: /proc/PID/maps, read at its first
    // stack while it runs, else these records (a process that ended first).
    auto watch = MappingWatch::open({.pid = target.system_wide ? -1 : target.pid,
                                     .on_exec = target.start_on_exec && !target.system_wide});
    if (watch)
      engine->watch_mappings(std::move(*watch));
    else if (options.on_note)
      options.on_note("record -g: no mapping records (" + watch.error().message +
                      "): a process that ends before uprof reads its /proc/PID/maps keeps no frames");
  }
  return std::unique_ptr<CaptureEngine>(std::move(engine));
}

}  // namespace uprof
