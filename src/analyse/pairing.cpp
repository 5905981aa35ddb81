#include "uprof/analyse/pairing.h"

#include <algorithm>

namespace uprof {

namespace {

constexpr std::array<std::string_view, kUnmatchedReasons> kReasonNames = {
    "thread exited",        "unwound", "nesting limit", "events lost", "recording stopped",
    "return without entry", "return after lost events",
};

std::span<const uint64_t> values_of(const Event& e) {
  return {e.values.data(), std::min<std::size_t>(e.nvalues, kMaxValues)};
}

FlatIndex::Key tid_key(uint32_t tid) { return {.a = tid, .b = 0}; }
// A goroutine's key: never a tid's (b is g, never 0; the top bit of a is set).
FlatIndex::Key goroutine_key(uint32_t pid, uint64_t g) { return {.a = uint64_t{1} << 63 | pid, .b = g}; }

}  // namespace

std::string_view to_string(UnmatchedReason reason) {
  return kReasonNames[static_cast<std::size_t>(reason)];
}

uint64_t PairingCounts::cut_by_loss() const {
  return unmatched_of(UnmatchedReason::Lost) + unmatched_of(UnmatchedReason::ReturnAfterLoss);
}

bool PairingCounts::balanced() const {
  const uint64_t unmatched_returns =
      unmatched_of(UnmatchedReason::ReturnWithoutEntry) + unmatched_of(UnmatchedReason::ReturnAfterLoss);
  uint64_t unmatched_all = 0;
  for (uint64_t n : unmatched) unmatched_all += n;
  return entries + inherited == calls + unmatched_all - unmatched_returns && returns == calls + unmatched_returns;
}

Pairer::Pairer(const ProbeFunctions& functions, std::span<const uint64_t> hit_cost_ns)
    : function_of_probe_(functions.function_of_probe),
      role_of_probe_(functions.role_of_probe) {
  for (const FunctionInfo& f : functions.functions) {
    at_exits_.push_back(f.at_exits);
    usdt_.push_back(f.usdt);
    key_.push_back(f.key);
  }
  offcpu_of_probe_ = functions.offcpu_of_probe;
  if (std::any_of(hit_cost_ns.begin(), hit_cost_ns.end(), [](uint64_t c) { return c != 0; }))
    hit_cost_of_probe_.assign(hit_cost_ns.begin(), hit_cost_ns.end());
}

void Pairer::add(const Event& e, PairingSink& sink) {
  switch (e.kind) {
    case EventKind::Sample: return on_sample(e, sink);
    case EventKind::Lost: return on_lost(e, sink);
    case EventKind::Comm: return sink.on_comm(e.pid, e.tid, e.comm);
    case EventKind::Exit: return on_exit(e, sink);
    case EventKind::Fork: return on_fork(e, sink);
    case EventKind::Object: return sink.on_object(e.object, e.path, e.build_id);
  }
  ++counts_.bad_events;
}

std::optional<uint32_t> Pairer::find_thread(uint32_t tid) const {
  if (last_thread_ != UINT32_MAX && last_tid_ == tid) return last_thread_;
  return thread_of_tid_.find(tid_key(tid));
}

uint32_t Pairer::thread(uint32_t pid, uint32_t tid, PairingSink& sink) {
  if (auto found = find_thread(tid)) {
    last_tid_ = tid;
    last_thread_ = *found;
    Thread& t = threads_[*found];
    if (t.pid != pid) {
      close_frames(t, 0, UnmatchedReason::ThreadExited, sink);
      t.pid = pid;
    }
    return *found;
  }
  uint32_t index;
  if (!free_threads_.empty()) {
    index = free_threads_.back();
    free_threads_.pop_back();
  } else {
    index = static_cast<uint32_t>(threads_.size());
    threads_.emplace_back();
  }
  Thread& t = threads_[index];
  t.pid = pid;
  t.tid = tid;
  t.g = 0;
  t.live = true;
  t.lost = gap_seen_;  // it may have run in a gap, unseen
  t.probe_ns = 0;
  t.stack.clear();  // keeps its capacity from the slot's previous thread
  t.trampolines = 0;
  thread_of_tid_.insert(tid_key(tid), index);
  last_tid_ = tid;
  last_thread_ = index;
  return index;
}

uint32_t Pairer::goroutine(uint32_t pid, uint64_t g) {
  const FlatIndex::Key key = goroutine_key(pid, g);
  if (auto found = thread_of_tid_.find(key)) return *found;
  uint32_t index;
  if (!free_threads_.empty()) {
    index = free_threads_.back();
    free_threads_.pop_back();
  } else {
    index = static_cast<uint32_t>(threads_.size());
    threads_.emplace_back();
  }
  Thread& t = threads_[index];
  t.pid = pid;
  t.tid = 0;
  t.g = g;
  t.live = true;
  t.lost = gap_seen_;
  t.probe_ns = 0;
  t.stack.clear();
  t.trampolines = 0;
  thread_of_tid_.insert(key, index);
  return index;
}

void Pairer::close_goroutines(uint32_t pid, UnmatchedReason reason, bool release, PairingSink& sink) {
  for (uint32_t i = 0; i < threads_.size(); ++i) {
    Thread& t = threads_[i];
    if (!t.live || t.g == 0 || t.pid != pid) continue;
    if (reason == UnmatchedReason::Lost) cut_thread(t, sink);
    else close_frames(t, 0, reason, sink);
    if (release) release_thread(i);
  }
}

void Pairer::release_thread(uint32_t index) {
  Thread& t = threads_[index];
  thread_of_tid_.erase(t.g ? goroutine_key(t.pid, t.g) : tid_key(t.tid));
  t.g = 0;
  t.live = false;
  t.stack.clear();
  t.trampolines = 0;
  free_threads_.push_back(index);
  if (last_thread_ == index) last_thread_ = UINT32_MAX;
}

void Pairer::report_frame(const Thread& t, const Frame& f, UnmatchedReason reason, PairingSink& sink) {
  if (f.cut) reason = UnmatchedReason::Lost;
  ++counts_.unmatched[static_cast<std::size_t>(reason)];
  sink.on_unmatched(Unmatched{
      .function = f.function,
      .probe = f.probe,
      .pid = t.pid,
      .tid = t.g ? f.tid : t.tid,
      .time = f.time,
      .reason = reason,
      .goroutine = t.g,
      .values = {f.values.data(), f.nvalues},
      .missing = f.missing,
  });
}

void Pairer::pop_frame(Thread& t) {
  if (t.stack.back().trampoline) --t.trampolines;
  t.stack.pop_back();
}

void Pairer::close_frames(Thread& t, std::size_t keep, UnmatchedReason reason, PairingSink& sink) {
  while (t.stack.size() > keep) {
    report_frame(t, t.stack.back(), reason, sink);
    pop_frame(t);
  }
}

void Pairer::close_popped_frames(Thread& t, uint64_t sp, PairingSink& sink) {
  // From the top: a frame without a stack pointer above a popped one is popped too; the
  // first frame with one that is still on the stack (above `sp`) keeps all below it.
  std::size_t keep = t.stack.size();
  for (std::size_t j = t.stack.size(); j > 0; --j) {
    const Frame& f = t.stack[j - 1];
    if (f.sp == 0) continue;
    if (f.sp > sp) break;
    keep = j - 1;
  }
  close_frames(t, keep, UnmatchedReason::Unwound, sink);
}

void Pairer::on_sample(const Event& e, PairingSink& sink) {
  const ProbeRole role = e.probe < role_of_probe_.size() ? role_of_probe_[e.probe] : ProbeRole::Unknown;
  if (role == ProbeRole::Unknown) {
    ++counts_.bad_events;
    return;
  }
  const uint32_t fn = function_of_probe_[e.probe];
  const std::span<const uint64_t> values = values_of(e);

  if (role == ProbeRole::HitOnly) {
    ++counts_.hits;
    if (!hit_cost_of_probe_.empty()) threads_[thread(e.pid, e.tid, sink)].probe_ns += hit_cost(e.probe);
    sink.on_hit(Hit{.function = fn, .probe = e.probe, .pid = e.pid, .tid = e.tid, .time = e.time, .values = values, .missing = e.missing});
    return;
  }

  // A Go function's call belongs to its goroutine, whatever thread runs it now.
  Thread& t = threads_[e.goroutine ? goroutine(e.pid, e.goroutine) : thread(e.pid, e.tid, sink)];
  const uint64_t before = t.probe_ns;
  if (!hit_cost_of_probe_.empty()) t.probe_ns += hit_cost(e.probe);
  const bool at_exits = fn < at_exits_.size() && at_exits_[fn];
  const Sample s{.e = e,
                 .function = fn,
                 .values = values,
                 .at_exits = at_exits,
                 .trampoline = !at_exits && !(fn < usdt_.size() && usdt_[fn])};
  if (role == ProbeRole::Entry) {
    on_entry(t, s, sink);
  } else {
    on_return(t, s, before, sink);
  }
}

void Pairer::on_entry(Thread& t, const Sample& s, PairingSink& sink) {
  const Event& e = s.e;
  ++counts_.entries;
  // A goroutine's stack moves when it grows: its frames' stack pointers tell nothing.
  const bool by_sp = s.at_exits && e.frame && !t.g;
  if (by_sp) close_popped_frames(t, e.frame, sink);
  if (s.trampoline && t.trampolines >= kMaxUretprobeDepth) {
    // The kernel refused to arm this return ("uprobe: omit uretprobe due to
    // nestedness limit"): it will never come, and its frame does not count
    // toward the kernel's depth, so it is not pushed.
    ++counts_.unmatched[static_cast<std::size_t>(UnmatchedReason::NestingLimit)];
    sink.on_unmatched(Unmatched{.function = s.function, .probe = e.probe, .pid = e.pid, .tid = e.tid, .time = e.time,
                                .reason = UnmatchedReason::NestingLimit, .goroutine = t.g, .values = s.values,
                                .missing = e.missing});
    return;
  }
  Frame& f = t.stack.emplace_back();
  f.function = s.function;
  f.probe = e.probe;
  f.time = e.time;
  f.cut = in_gap(e.time);
  f.probe_ns_mark = t.probe_ns;
  f.nvalues = static_cast<uint8_t>(s.values.size());
  f.trampoline = s.trampoline;
  t.trampolines += f.trampoline;
  f.sp = by_sp ? e.frame : 0;
  f.tid = e.tid;
  f.missing = e.missing;
  std::copy(s.values.begin(), s.values.end(), f.values.begin());
  f.stack.assign(e.stack.begin(), e.stack.end());
  f.has_offcpu = e.probe < offcpu_of_probe_.size() && offcpu_of_probe_[e.probe];
  f.offcpu = e.offcpu;
}

std::size_t Pairer::returning_frame(const Thread& t, const Sample& s) const {
  const Event& e = s.e;
  static const std::vector<std::pair<uint16_t, uint16_t>> kNoKey;
  const auto& key = s.function < key_.size() ? key_[s.function] : kNoKey;
  auto same_key = [&](const Frame& f) {
    for (auto [in, out] : key) {
      if (in >= f.nvalues || out >= s.values.size() || (f.missing >> in & 1) || (e.missing >> out & 1)) continue;
      if (f.values[in] != s.values[out]) return false;
    }
    return true;
  };
  auto returns = [&](const Frame& f) {
    return f.function == s.function &&
           (!s.at_exits || f.sp == 0 || e.frame == 0 || e.goroutine != 0 || f.sp == e.frame) && same_key(f);
  };
  std::size_t i = t.stack.size();
  while (i > 0 && !returns(t.stack[i - 1])) --i;
  return i;
}

void Pairer::on_return(Thread& t, const Sample& s, uint64_t probe_ns_before, PairingSink& sink) {
  const Event& e = s.e;
  ++counts_.returns;
  const std::size_t i = returning_frame(t, s);
  const bool gap = in_gap(e.time);
  if (i == 0 || gap || t.stack[i - 1].cut) {
    // After a loss the frame found may be another call's (this one's entry lost): the
    // frame, and the inner ones a loss left open, are cut, and so is the return.
    if (i > 0) close_frames(t, i - 1, UnmatchedReason::Lost, sink);
    const UnmatchedReason reason =
        i == 0 && !gap && !t.lost ? UnmatchedReason::ReturnWithoutEntry : UnmatchedReason::ReturnAfterLoss;
    ++counts_.unmatched[static_cast<std::size_t>(reason)];
    sink.on_unmatched(Unmatched{.function = s.function, .probe = e.probe, .pid = e.pid, .tid = e.tid, .time = e.time,
                                .reason = reason, .goroutine = t.g, .values = s.values, .missing = e.missing});
    return;
  }
  const std::size_t depth = i - 1;
  // Frames above the one returning never returned themselves: an outer frame's
  // return while inner ones are open is how a longjmp or a C++ exception shows.
  close_frames(t, depth + 1, UnmatchedReason::Unwound, sink);
  const Frame& f = t.stack[depth];
  ++counts_.calls;
  // Off-CPU time: the thread's totals at the return minus those at the entry (a Go call
  // that moved threads has no such difference: it is not given one).
  const bool offcpu = f.has_offcpu && e.probe < offcpu_of_probe_.size() && offcpu_of_probe_[e.probe] && f.tid == e.tid;
  OffCpuTimes off{};
  if (offcpu)
    for (std::size_t k = 0; k < kOffCpuKinds; k++) off[k] = e.offcpu[k] >= f.offcpu[k] ? e.offcpu[k] - f.offcpu[k] : 0;
  sink.on_call(Call{
      .function = s.function,
      .pid = t.pid,
      .tid = t.g ? f.tid : t.tid,
      .entry_time = f.time,
      .return_time = e.time,
      .duration = e.time >= f.time ? e.time - f.time : 0,
      .entry_values = {f.values.data(), f.nvalues},
      .return_values = s.values,
      .entry_missing = f.missing,
      .return_missing = e.missing,
      .depth = static_cast<uint32_t>(depth),
      .goroutine = t.g,
      .nested_probe_ns = probe_ns_before - f.probe_ns_mark,
      .stack = f.stack.empty() ? std::span<const StackFrame>(e.stack) : std::span<const StackFrame>(f.stack),
      .has_offcpu = offcpu,
      .offcpu = off,
  });
  pop_frame(t);
}

void Pairer::cut_thread(Thread& t, PairingSink& sink) {
  close_frames(t, 0, UnmatchedReason::Lost, sink);
  t.lost = true;
}

void Pairer::on_lost(const Event& e, PairingSink& sink) {
  counts_.lost_samples += e.lost;
  // Whatever probe the event names: every probe of a thread writes into the same ring,
  // and the kernel tags PERF_RECORD_LOST with the event that wrote next.
  if (e.tid != 0) {
    // The thread's lost events may have been any of its process's goroutines'.
    close_goroutines(e.pid, UnmatchedReason::Lost, false, sink);
    return cut_thread(threads_[thread(e.pid, e.tid, sink)], sink);
  }
  gap_seen_ = true;
  gap_until_ = std::max({gap_until_, e.time, e.lost_until});
  for (Thread& t : threads_)
    if (t.live) cut_thread(t, sink);
}

void Pairer::on_exit(const Event& e, PairingSink& sink) {
  if (const auto index = find_thread(e.tid)) {
    close_frames(threads_[*index], 0, UnmatchedReason::ThreadExited, sink);
    release_thread(*index);
  }
  // The process's main thread: its goroutines are gone with it.
  if (e.tid == e.pid) close_goroutines(e.pid, UnmatchedReason::ThreadExited, true, sink);
  sink.on_exit(e.pid, e.tid);
}

void Pairer::on_fork(const Event& e, PairingSink& sink) {
  const bool has_parent = e.nvalues >= 2;
  const auto parent_pid = static_cast<uint32_t>(e.values[0]);
  const auto parent_tid = static_cast<uint32_t>(e.values[1]);

  // A new task with a tid we still track: the old owner exited unseen. Its frames
  // are reported before the sink hears of the fork, while the tid still has the
  // old owner's name.
  if (const auto stale = find_thread(e.tid)) {
    close_frames(threads_[*stale], 0, UnmatchedReason::ThreadExited, sink);
    release_thread(*stale);
  }
  if (has_parent) sink.on_fork(e.pid, e.tid, parent_pid, parent_tid);
  // A new process (fork or vfork, not a thread) gets copies of its parent's armed
  // return probes (uprobe_copy_process): if f() calls fork(), both processes
  // return from f and both returns must find an open f.
  if (!has_parent || parent_pid == e.pid) return;
  const auto parent = find_thread(parent_tid);
  if (!parent || threads_[*parent].stack.empty()) return;
  const uint32_t child = thread(e.pid, e.tid, sink);  // may move threads_: index again below
  threads_[child].stack = threads_[*parent].stack;
  threads_[child].trampolines = threads_[*parent].trampolines;
  threads_[child].probe_ns = threads_[*parent].probe_ns;  // the copied frames' marks count from it
  threads_[child].lost = threads_[child].lost || threads_[*parent].lost;
  counts_.inherited += threads_[child].stack.size();
}

void Pairer::open_frames(std::vector<OpenFrame>& out) const {
  out.clear();
  for (const Thread& t : threads_) {
    if (!t.live) continue;
    for (const Frame& f : t.stack)
      out.push_back(OpenFrame{.function = f.function, .probe = f.probe, .pid = t.pid, .tid = t.g ? f.tid : t.tid,
                              .time = f.time,
                              .values = {f.values.data(), f.nvalues}, .missing = f.missing});
  }
}

void Pairer::finish(PairingSink& sink) {
  for (uint32_t i = 0; i < threads_.size(); ++i) {
    if (!threads_[i].live) continue;
    close_frames(threads_[i], 0, UnmatchedReason::RecordingStopped, sink);
    release_thread(i);
  }
}

}  // namespace uprof
