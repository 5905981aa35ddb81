#include "why_slow_check.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

using uprof::Event;
using uprof::EventKind;
using uprof::OffCpuKind;

namespace {

const char* const kCallers[2] = {"spinner", "sleeper"};
constexpr std::size_t kMaxProblems = 20;

uint64_t total(const uprof::OffCpuTimes& t) {
  uint64_t s = 0;
  for (uint64_t v : t) s += v;
  return s;
}
uint64_t kind(const uprof::OffCpuTimes& t, OffCpuKind k) { return t[static_cast<std::size_t>(k)]; }

}  // namespace

template <class... Parts>
void WhySlowCheck::fail(Parts&&... parts) {
  if (problems_.size() >= kMaxProblems) return;
  std::ostringstream os;
  (os << ... << parts);
  problems_.push_back(os.str());
}

std::vector<std::string> WhySlowCheck::frame_names(const Event& e) {
  std::vector<std::string> names;
  for (const uprof::StackFrame& f : e.stack) {
    auto o = objects_.find(f.object);
    if (f.object == 0 || o == objects_.end()) {
      if (f.object != 0) fail("a frame names object ", f.object, " before its Object event");
      names.push_back("?");
      continue;
    }
    std::string name = names_.at_return_address(root_ + o->second, f.offset);
    if (name.empty()) fail("cannot name a frame: ", names_.error());
    names.push_back(name.empty() ? "?" : name);
  }
  return names;
}

// A stack's frames named through the host's copies of the files; frame 0 must be in the
// call's caller, some later frame in main.
void WhySlowCheck::check_stack(const Event& e, uint64_t k) {
  const char* want = kCallers[k % 2];
  by_caller_[k % 2].stacks++;
  if (e.stack.empty()) {
    fail("tid ", e.tid, ": call ", k, " of work (", want, "'s) has no stack");
    return;
  }
  std::vector<std::string> names = frame_names(e);
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ";") + n;
  if (names[0] != want)
    fail("tid ", e.tid, ": call ", k, " of work should be ", want, "'s, its stack is ", joined);
  else if (std::find(names.begin() + 1, names.end(), "main") == names.end())
    fail("tid ", e.tid, ": call ", k, " of work: the stack does not reach main: ", joined);
  else if (example_[k % 2].empty())
    example_[k % 2] = joined;
}

// A probe called inside sleeper's work (libc's clock_nanosleep, under nanosleep): its
// stack goes through work, sleeper and main, in that order. work is return-probed: while
// it runs, the return address its prologue saved is the kernel's return trampoline.
void WhySlowCheck::check_inner_stack(const Event& e) {
  inner_++;
  std::vector<std::string> names = frame_names(e);
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ";") + n;
  auto w = std::find(names.begin(), names.end(), "work");
  if (w == names.end() || names.end() - w < 3 || w[1] != "sleeper" || w[2] != "main")
    fail("tid ", e.tid, ": a stack inside work does not run work;sleeper;main: ", joined);
  else if (inner_example_.empty())
    inner_example_ = joined;
}

void WhySlowCheck::on_event(const Event& e, const uprof::ProbeInfo* probe, bool entry_side) {
  if (e.kind == EventKind::Object) {
    objects_[e.object] = e.path;
    return;
  }
  if (e.kind != EventKind::Sample || !probe) return;
  if (probe->function != "work") {
    if (entry_side) check_inner_stack(e);
    return;
  }
  offcpu_ |= probe->offcpu;
  Thread& t = threads_[e.tid];
  if (entry_side) {
    const uint64_t k = t.calls++;
    t.open.push_back({e.time, e.offcpu, k});
    if (stacks_at_ == "entry") check_stack(e, k);
    else if (!e.stack.empty()) fail("tid ", e.tid, ": call ", k, " of work has a stack at its entry");
    return;
  }
  if (t.open.empty()) {
    fail("tid ", e.tid, ": a return of work without an entry");
    return;
  }
  const Open call = t.open.back();
  t.open.pop_back();
  if (stacks_at_ == "return") check_stack(e, call.k);
  else if (!e.stack.empty()) fail("tid ", e.tid, ": call ", call.k, " of work has a stack at its return");
  Share& s = by_caller_[call.k % 2];
  s.calls++;
  s.wall += e.time - call.time;
  for (std::size_t i = 0; i < uprof::kOffCpuKinds; i++) {
    if (e.offcpu[i] < call.offcpu[i]) fail("tid ", e.tid, ": off-CPU totals went down in call ", call.k);
    s.off[i] += e.offcpu[i] - call.offcpu[i];
  }
}

std::vector<std::string> WhySlowCheck::finish() {
  const Share &spin = by_caller_[0], &sleep = by_caller_[1];
  if (spin.calls == 0 || spin.calls != sleep.calls)
    fail("calls of work: ", spin.calls, " from spinner, ", sleep.calls, " from sleeper (want the same, above 0)");
  std::ostringstream os;
  os << spin.calls << "+" << sleep.calls << " calls";
  if (stacks_at_ != "none")
    os << ", stacks at the " << stacks_at_ << ": spinner's " << spin.stacks << " like " << example_[0]
       << "; sleeper's " << sleep.stacks << " like " << example_[1];
  if (inner_) os << "; " << inner_ << " stacks inside work like " << inner_example_;
  if (offcpu_) {
    const uint64_t spin_off = total(spin.off), sleep_off = total(sleep.off);
    const uint64_t spin_blocked = spin_off - kind(spin.off, OffCpuKind::Runnable);
    const uint64_t sleep_blocked = sleep_off - kind(sleep.off, OffCpuKind::Runnable);
    const uint64_t asleep = kind(sleep.off, OffCpuKind::Sleep);
    if (sleep_off < sleep.wall / 5 * 4)
      fail("sleeper's calls were off the CPU ", sleep_off, " of ", sleep.wall, " ns (want at least 80%)");
    if (sleep_blocked != asleep)
      fail("sleeper's calls blocked ", sleep_blocked, " ns, asleep only ", asleep, " ns (want all asleep)");
    if (asleep < sleep.calls * us_ * 1000 / 10 * 9)
      fail("sleeper's calls asleep ", asleep, " ns for ", sleep.calls, " sleeps of ", us_, " us");
    if (spin_blocked > spin.wall / 5)
      fail("spinner's calls blocked ", spin_blocked, " of ", spin.wall, " ns (want at most 20%)");
    char figures[256];
    std::snprintf(figures, sizeof figures,
                  "; on-CPU: spinner's %.1f of %.1f ms (%.0f%%), sleeper's %.1f of %.1f ms (%.0f%%, asleep %.1f ms)",
                  (spin.wall - spin_off) / 1e6, spin.wall / 1e6, spin.wall ? 100.0 * (spin.wall - spin_off) / spin.wall : 0,
                  (sleep.wall - sleep_off) / 1e6, sleep.wall / 1e6,
                  sleep.wall ? 100.0 * (sleep.wall - sleep_off) / sleep.wall : 0, asleep / 1e6);
    os << figures;
  }
  summary_ = os.str();
  return problems_;
}
