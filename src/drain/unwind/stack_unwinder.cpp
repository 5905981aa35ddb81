#include "uprof/drain/unwind/stack_unwinder.h"

#include <elfutils/libdwfl.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <optional>
#include <tuple>

#include "uprof/drain/unwind/frame_pointers.h"
#include "uprof/drain/unwind/return_trampolines.h"
#include "uprof/util/clock.h"
#include "uprof/util/proc_maps.h"

namespace uprof {
namespace {

// Deeper stacks are cut here (perf's default --max-stack is 127).
constexpr std::size_t kMaxFrames = 127;
// A process's mappings are read again for an address outside them at most this often:
// an address in no mapping at all (a corrupt frame) must not cost a read per stack.
constexpr uint64_t kRereadNs = 100'000'000;

char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kDwflCallbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &g_debuginfo_path,
};

std::string read_maps_text(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string hex_bytes(const unsigned char* bits, int n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < n; i++) {
    s += digits[bits[i] >> 4];
    s += digits[bits[i] & 15];
  }
  return s;
}

}  // namespace

// One followed process: its mappings and libdw's view of them, with the stack being
// unwound for the thread callbacks.
struct StackUnwinder::Process {
  uint32_t pid = 0;
  std::vector<MapsEntry> maps;  // sorted by start
  Dwfl* dwfl = nullptr;
  bool attached = false;
  uint64_t read_at = 0;
  uint64_t trampoline_start = 0, trampoline_end = 0;  // the [uprobes] mapping
  // The hit being unwound: its copy, and its thread's trampolines.
  const UserStack* current = nullptr;
  const ReturnTrampolines* trampolines = nullptr;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint64_t replaced = 0;

  ~Process() {
    if (dwfl) dwfl_end(dwfl);
  }
  // A return trampoline. Where the [uprobes] mapping is not known (mappings from the perf
  // side band, which has no record of it), a value in no mapping where an entry saw a
  // return address is taken for it: no return address lies outside every mapping.
  bool trampoline(uint64_t v) const {
    return trampoline_end != 0 ? v >= trampoline_start && v < trampoline_end : find(v) == nullptr;
  }
  const MapsEntry* find(uint64_t addr) const {
    auto it = std::upper_bound(maps.begin(), maps.end(), addr, [](uint64_t a, const MapsEntry& m) { return a < m.start; });
    if (it == maps.begin()) return nullptr;
    --it;
    return addr < it->end ? &*it : nullptr;
  }
};

// Return trampolines by architecture (return_trampolines.h): x86-64 knows the slot of
// the replaced address, arm64 only the frame that holds it.
struct StackUnwinder::Trampolines {
  ReturnTrampolines by_slot{true}, by_frame{false};
  ReturnTrampolines& of(const ArchInfo& a) { return a.link_reg >= 0 ? by_frame : by_slot; }
};

// The files frames name, numbered from 1 in the order they are first named.
struct StackUnwinder::Objects {
  std::map<std::tuple<uint32_t, uint32_t, uint64_t, std::string>, uint32_t> ids;
  struct Named {
    std::string path, build_id;
    bool written = false;
  };
  std::vector<Named> named;  // by id - 1
};

namespace {

// libdw's thread callbacks: one thread, whose registers and memory are the copy.
pid_t no_next_thread(Dwfl*, void*, void**) { return 0; }

bool the_thread(Dwfl*, pid_t, void* dwfl_arg, void** thread_arg) {
  *thread_arg = dwfl_arg;
  return true;
}

template <typename P>
bool read_copy(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  auto* p = static_cast<P*>(arg);
  auto v = p->current->load(addr);
  if (!v) return false;
  // A return trampoline stands for the return address a return probe's entry saw there.
  if (p->trampolines && p->trampoline(*v))
    if (auto ra = p->trampolines->find(p->tid, addr, p->time)) {
      *v = *ra;
      p->replaced++;
    }
  *result = *v;
  return true;
}

template <typename P>
bool copied_registers(Dwfl_Thread* thread, void* arg) {
  P* p = static_cast<P*>(arg);
  const UserStack& s = *p->current;
  const ArchInfo& a = arch_info(s.arch);
  // The integer registers by their DWARF numbers (x86-64 0-16 with rip, arm64 0-31); the
  // floating-point ones are not copied, and the flags and segments are no frame's.
  for (const RegInfo& r : a.regs) {
    if (r.dwarf_number < 0 || r.dwarf_number >= a.fp_dwarf_regs.first) continue;
    auto v = s.reg(r.perf_index);
    if (!v) continue;
    Dwarf_Word w = *v;
    // arm64: a hit in a return-probed call before its prologue saved x30 (or in a leaf
    // that never does) finds the trampoline in the link register itself.
    if (static_cast<int>(r.perf_index) == a.link_reg && p->trampolines && p->trampoline(w))
      if (auto ra = p->trampolines->find(p->tid, s.sp(), p->time)) {
        w = *ra;
        p->replaced++;
      }
    dwfl_thread_state_registers(thread, r.dwarf_number, 1, &w);
  }
  dwfl_thread_state_register_pc(thread, s.pc());
  return true;
}

struct Walk {
  std::vector<uint64_t> pcs;
};

int on_frame(Dwfl_Frame* frame, void* arg) {
  auto* w = static_cast<Walk*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(frame, &pc, &activation)) return DWARF_CB_ABORT;
  w->pcs.push_back(pc);
  return w->pcs.size() >= kMaxFrames ? DWARF_CB_ABORT : DWARF_CB_OK;
}

}  // namespace

StackUnwinder::StackUnwinder(CallGraphMethod method)
    : method_(method), objects_(std::make_unique<Objects>()), trampolines_(std::make_unique<Trampolines>()) {}
StackUnwinder::~StackUnwinder() = default;

Status StackUnwinder::announce(const Event& e, const std::function<Status(const Event&)>& write) {
  for (const StackFrame& f : e.stack) {
    if (f.object == 0 || f.object > objects_->named.size()) continue;
    Objects::Named& named = objects_->named[f.object - 1];
    if (named.written) continue;
    Event o;
    o.kind = EventKind::Object;
    o.pid = e.pid;
    o.tid = e.tid;
    o.time = e.time;
    o.object = f.object;
    o.path = named.path;
    o.build_id = named.build_id;
    UPROF_TRY(write(o));
    named.written = true;
  }
  return ok();
}

void StackUnwinder::thread_exited(uint32_t tid) {
  trampolines_->by_slot.thread_exited(tid);
  trampolines_->by_frame.thread_exited(tid);
}

void StackUnwinder::forget(uint32_t pid) {
  std::erase_if(processes_, [pid](const std::unique_ptr<Process>& p) { return p->pid == pid; });
  announced_maps_.erase(pid);
}

void StackUnwinder::add_mapping(uint32_t pid, const std::string& maps_line) {
  announced_maps_[pid] += maps_line + "\n";
  // A process read while /proc had nothing for it is read again, with these.
  std::erase_if(processes_, [pid](const std::unique_ptr<Process>& p) { return p->pid == pid && p->maps.empty(); });
}

bool StackUnwinder::has_mappings(uint32_t pid) { return !process(pid, false)->maps.empty(); }

StackUnwinder::Process* StackUnwinder::process(uint32_t pid, bool reread) {
  auto it = std::find_if(processes_.begin(), processes_.end(), [pid](const auto& p) { return p->pid == pid; });
  if (it != processes_.end()) {
    if (!reread || monotonic_ns() - (*it)->read_at < kRereadNs) return it->get();
    processes_.erase(it);
  }
  auto p = std::make_unique<Process>();
  p->pid = pid;
  p->read_at = monotonic_ns();
  std::string text = read_maps_text(pid);
  if (text.empty()) {
    if (auto announced = announced_maps_.find(pid); announced != announced_maps_.end()) text = announced->second;
  }
  p->maps = parse_maps(text);
  std::sort(p->maps.begin(), p->maps.end(), [](const MapsEntry& a, const MapsEntry& b) { return a.start < b.start; });
  for (const MapsEntry& m : p->maps)
    if (m.path == "[uprobes]") {
      p->trampoline_start = m.start;
      p->trampoline_end = m.end;
    }
  if (!text.empty()) {
    p->dwfl = dwfl_begin(&kDwflCallbacks);
    if (p->dwfl) {
      dwfl_report_begin(p->dwfl);
      if (FILE* f = fmemopen(text.data(), text.size(), "r")) {
        dwfl_linux_proc_maps_report(p->dwfl, f);
        std::fclose(f);
      }
      dwfl_report_end(p->dwfl, nullptr, nullptr);
      static const Dwfl_Thread_Callbacks threads = {
          .next_thread = no_next_thread,
          .get_thread = the_thread,
          .memory_read = read_copy<Process>,
          .set_initial_registers = copied_registers<Process>,
          .detach = nullptr,
          .thread_detach = nullptr,
      };
      p->attached = dwfl_attach_state(p->dwfl, nullptr, static_cast<pid_t>(pid), &threads, p.get());
    }
  }
  processes_.push_back(std::move(p));
  return processes_.back().get();
}

void StackUnwinder::unwind(const UserStack& stack, const ProbeCapture& probe, Event& e) {
  const bool from_return = probe.kind == ProbeKind::Return;
  e.stack.clear();
  counts_.stacks++;
  const ArchInfo& arch = arch_info(stack.arch);
  if (probe.return_probed) {
    // The return address the kernel is about to replace, and where it will be looked
    // for (return_trampolines.h): x86-64 its slot at [sp]; arm64 the link register,
    // by the call's frame (its entry sp).
    if (arch.link_reg >= 0) {
      if (auto ra = stack.reg(static_cast<unsigned>(arch.link_reg)))
        trampolines_->of(arch).note(e.tid, stack.sp() + arch.entry_cfa, e.time, *ra);
    } else {
      const uint64_t slot = stack.sp() + arch.entry_cfa - 8;
      if (auto ra = stack.load(slot)) trampolines_->of(arch).note(e.tid, slot, e.time, *ra);
    }
  }
  Process* p = process(e.pid, false);
  // An address outside the mappings read: the process mapped a file since (dlopen, exec).
  if (!p->find(stack.pc())) p = process(e.pid, true);
  Walk walk;
  bool whole = false;
  auto walk_dwarf = [&] {
    walk.pcs.clear();
    p->current = &stack;
    p->trampolines = &trampolines_->of(arch);
    p->tid = e.tid;
    p->time = e.time;
    p->replaced = 0;
    whole = dwfl_getthread_frames(p->dwfl, static_cast<pid_t>(e.tid), on_frame, &walk) == 0;
    p->current = nullptr;
    counts_.trampolines += p->replaced;
  };
  if (p->attached && method_ == CallGraphMethod::Dwarf) {
    walk_dwarf();
    // Stopped at an address in no mapping read: the [uprobes] page appears at the first
    // return probe's hit, after the process's first stack; a file mapped since.
    if (!whole && !walk.pcs.empty() && !p->find(walk.pcs.back() - 1)) {
      const uint64_t read_before = p->read_at;
      p = process(e.pid, true);
      if (p->read_at != read_before && p->attached) walk_dwarf();
    }
  } else if (method_ == CallGraphMethod::FramePointer) {
    walk.pcs = walk_frame_pointers(stack, from_return, kMaxFrames);
    whole = true;  // a chain has no sure end: a stack it left early is not counted as cut
  } else {
    walk.pcs.push_back(stack.pc());
  }
  if (walk.pcs.empty()) {
    counts_.empty++;
    return;
  }
  for (std::size_t i = from_return ? 0 : 1; i < walk.pcs.size(); i++) {
    const uint64_t pc = walk.pcs[i];
    // A return address may be the first byte after its mapping (a call that ends it).
    const MapsEntry* m = p->find(i == 0 && from_return ? pc : pc - 1);
    StackFrame f{.object = 0, .offset = pc};
    if (m && m->file_backed()) {
      auto key = std::make_tuple(m->dev_major, m->dev_minor, m->inode, m->path);
      auto [it, fresh] = objects_->ids.try_emplace(key, static_cast<uint32_t>(objects_->ids.size() + 1));
      if (fresh) {
        Objects::Named named;
        named.path = m->path;
        if (p->dwfl) {
          if (Dwfl_Module* mod = dwfl_addrmodule(p->dwfl, pc - 1)) {
            const unsigned char* bits = nullptr;
            GElf_Addr at = 0;
            Dwarf_Addr bias = 0;
            dwfl_module_getelf(mod, &bias);
            const int n = dwfl_module_build_id(mod, &bits, &at);
            if (n > 0) named.build_id = hex_bytes(bits, n);
          }
        }
        objects_->named.push_back(std::move(named));
      }
      f = StackFrame{.object = it->second, .offset = pc - m->start + m->offset};
    }
    e.stack.push_back(f);
  }
  if (e.stack.empty()) counts_.empty++;
  else if (!whole) counts_.truncated++;
}

}  // namespace uprof
