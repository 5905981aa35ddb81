// Entry/return pairing on a per-thread shadow stack.
//
// Each thread keeps a stack of its open calls (paired functions only). An entry
// pushes; a return of function F pops the innermost open F. That gives recursion
// and nesting their own durations: f -> f -> f yields three calls, innermost
// shortest, where pairing "last entry of f" with "next return of f" per thread
// without a stack (bcc #2548) gives the outer calls the inner durations.
//
// Every entry ends in exactly one Call or one Unmatched, every return in a Call
// or an Unmatched{ReturnWithoutEntry}; PairingCounts::balanced() checks it.
//   ThreadExited        an Exit event for the thread while the call was open
//                       (exit() or pthread_exit() from inside, or exec, which
//                       the event stream does not tell apart from a rename)
//   Unwound             a return of an outer frame arrived while this inner one was
//                       open: longjmp or a C++ exception left it without returning;
//                       or, for a function measured at its exits, whose samples carry
//                       the stack pointer, a new entry at or above its frame's stack
//                       pointer (the frame was popped without a return, as the kernel
//                       drops stale return instances)
//   NestingLimit        the kernel arms no return probe past MAX_URETPROBE_DEPTH
//                       (64) open return-probed frames per task; such an entry is
//                       reported at once and never pushed, as the kernel does not
//                       count it either (frames measured at their exits do not count)
//   Lost                "events lost": events of its thread were lost while this call
//                       was open (its return, or an entry whose return would close it,
//                       may be among them), so it is not paired across the gap
//   RecordingStopped    still open when the recording ended
//   ReturnWithoutEntry  a return whose entry was before the recording
//   ReturnAfterLoss     a return not paired because of a loss: its entry was before a
//                       loss of its thread (that call is cut), or it came in a loss's gap
//
// Losses never invent latencies: a Lost event (model/recording.h) closes every open call
// of the threads it touched as Lost, so no return after it pairs with an entry before it.
// A Lost of one thread (the BPF engine marks a thread's next record after a drop) is
// exact: everything of the thread before it came before the drops. A Lost of every
// thread (a per-CPU perf ring: any thread that ran there) spans a gap [time, lost_until]
// in which other rings' events of the same threads still come: no call entered or
// returning in the gap is paired either. PairingCounts::cut_by_loss() counts both sides.
//
// Memory grows with live threads and nesting depth only: a thread's stack is a
// vector that keeps its capacity, an exited thread's slot is reused, and no event
// allocates once those have reached their high-water marks.
//
// A USDT pair (probe_functions.h) pairs like a function, on plain uprobes: it arms no
// trampoline, so the nesting limit does not apply, and a keyed pair's return closes
// the innermost open call whose key values equal its own (a value not read matches any).
//
// An exit probe returns the innermost open frame of its function with the same stack
// pointer (at an exit the stack pointer is the entry's again: resolve/insn/exit_sites.h).
//
// Go functions pair by goroutine, not by thread: their samples carry the goroutine's g
// (Event::goroutine), and each goroutine of a process keeps its own stack of open calls,
// whichever threads its entries and exits ran on (Go moves goroutines between threads)
// and wherever its stack was (Go copies a goroutine's stack to grow it, so the stack
// pointer of an exit need not be its entry's). An exit closes the innermost open call of
// its function on that goroutine; inner calls still open were left by a panic (Unwound).
// Such a call's tid is its entry's thread. A goroutine's open calls end with its process
// (ThreadExited when the process's main thread exits); a loss of any thread of the
// process cuts them all, as the lost events may have been any goroutine's.
//
// Limits, for functions with return probes, from what the stream carries (time, no
// stack pointer):
//  - a longjmp from an inner f to a setjmp in an outer f of the same function,
//    followed by that outer f's return, pairs the return with the inner frame;
//  - after a longjmp the kernel drops the stale frames at the next entry, we only at
//    the next outer return; an entry in between may be called NestingLimit too early;
//  - other tracers' return probes in the same task count toward the kernel's 64.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "uprof/analyse/flat_index.h"
#include "uprof/analyse/probe_functions.h"
#include "uprof/model/recording.h"

namespace uprof {

// MAX_URETPROBE_DEPTH in kernel/events/uprobes.c.
inline constexpr std::size_t kMaxUretprobeDepth = 64;

enum class UnmatchedReason : uint8_t {
  ThreadExited = 0,
  Unwound,
  NestingLimit,
  Lost,
  RecordingStopped,
  ReturnWithoutEntry,
  ReturnAfterLoss,
};
inline constexpr std::size_t kUnmatchedReasons = 7;
// "thread exited", "unwound", "nesting limit", "events lost", "recording stopped", "return without entry",
// "return after lost events"
std::string_view to_string(UnmatchedReason reason);

struct Call {
  uint32_t function = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t entry_time = 0;
  uint64_t return_time = 0;
  uint64_t duration = 0;                    // return_time - entry_time (0 if the clock went back)
  std::span<const uint64_t> entry_values;   // valid during the sink call only
  std::span<const uint64_t> return_values;
  uint32_t entry_missing = 0;               // Event::missing of each side
  uint32_t return_missing = 0;
  uint32_t depth = 0;                       // open paired calls below it on this thread (goroutine)
  uint64_t goroutine = 0;                   // a Go function's: its goroutine's g (0: not Go)
  // What the hits of every probe between its entry and its return on this thread
  // cost, by the Pairer's per-probe hit costs (0 without them): the probed calls
  // inside it, for --compensate.
  uint64_t nested_probe_ns = 0;
  // record -g: the call's callers, innermost first (Event::stack): its entry's, or, where
  // only the return carried one (-g --stack-min), the return's. Valid during the sink
  // call only; empty when neither side carried a stack.
  std::span<const StackFrame> stack;
  // record --off-cpu: the call's time off the CPU by kind (its return's totals minus its
  // entry's); its on-CPU time is duration minus their sum. `has_offcpu` false: not recorded.
  bool has_offcpu = false;
  OffCpuTimes offcpu{};
};

struct Unmatched {
  uint32_t function = 0;
  uint32_t probe = 0;          // the entry probe, or the return probe for ReturnWithoutEntry and ReturnAfterLoss
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;           // when that probe fired
  UnmatchedReason reason = UnmatchedReason::RecordingStopped;
  uint64_t goroutine = 0;      // a Go function's: its goroutine's g (0: not Go)
  std::span<const uint64_t> values;  // that probe's values, valid during the sink call only
  uint32_t missing = 0;
};

// A hit of a probe that does not pair: entry-only or return-only function, mid-function probe.
struct Hit {
  uint32_t function = 0;
  uint32_t probe = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  std::span<const uint64_t> values;
  uint32_t missing = 0;
};

class PairingSink {
 public:
  virtual ~PairingSink() = default;
  virtual void on_call(const Call& call) = 0;
  virtual void on_unmatched(const Unmatched& unmatched) = 0;
  virtual void on_hit(const Hit& hit) = 0;
  // Forwarded thread events, for sinks that name or filter threads.
  virtual void on_comm(uint32_t /*pid*/, uint32_t /*tid*/, std::string_view /*comm*/) {}
  virtual void on_fork(uint32_t /*pid*/, uint32_t /*tid*/, uint32_t /*parent_pid*/, uint32_t /*parent_tid*/) {}
  // After the thread's open calls were reported as ThreadExited.
  virtual void on_exit(uint32_t /*pid*/, uint32_t /*tid*/) {}
  // A file that stack frames name (EventKind::Object, record -g).
  virtual void on_object(uint32_t /*object*/, std::string_view /*path*/, std::string_view /*build_id*/) {}
};

struct PairingCounts {
  uint64_t entries = 0;        // entry hits of paired functions
  uint64_t returns = 0;        // return hits of paired functions
  uint64_t inherited = 0;      // open calls copied into a forked child (it returns from them too)
  uint64_t calls = 0;
  std::array<uint64_t, kUnmatchedReasons> unmatched{};
  uint64_t hits = 0;           // hits of probes that do not pair
  uint64_t lost_samples = 0;   // the sum of Lost events
  uint64_t bad_events = 0;     // samples naming no probe, unknown event kinds

  uint64_t unmatched_of(UnmatchedReason r) const { return unmatched[static_cast<std::size_t>(r)]; }
  // Entries and returns not paired because of a loss (Lost + ReturnAfterLoss).
  uint64_t cut_by_loss() const;
  // Every entry is in a call or an unmatched entry; every return in a call or an unmatched return
  // (ReturnWithoutEntry, ReturnAfterLoss).
  bool balanced() const;
};

// A call still open, as Pairer::open_frames lists it; `values` stay valid until the
// pairer is next fed.
struct OpenFrame {
  uint32_t function = 0;
  uint32_t probe = 0;          // its entry probe
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;           // of its entry
  std::span<const uint64_t> values;
  uint32_t missing = 0;
};

class Pairer {
 public:
  // `hit_cost_ns`, per probe (RecordingMeta::probe_hit_costs_ns), makes each Call carry
  // what the probe hits inside it cost (Call::nested_probe_ns); empty: nothing is counted.
  explicit Pairer(const ProbeFunctions& functions, std::span<const uint64_t> hit_cost_ns = {});

  void add(const Event& event, PairingSink& sink);
  // Reports every still-open call as RecordingStopped (innermost first per thread).
  void finish(PairingSink& sink);
  const PairingCounts& counts() const { return counts_; }
  // Every call open now, thread by thread, outermost first (replaces `out`'s contents).
  // O(open calls): for a consumer that orders its output by entry time and must know
  // what may still come (script's text).
  void open_frames(std::vector<OpenFrame>& out) const;

 private:
  struct Frame {
    uint32_t function = 0;
    uint32_t probe = 0;
    uint64_t time = 0;
    bool cut = false;         // entered in a loss's gap: never paired
    uint64_t probe_ns_mark = 0;  // Thread::probe_ns after the entry's own hit
    uint8_t nvalues = 0;
    bool trampoline = true;   // a return probe's: counts toward the kernel's nesting limit
    uint32_t missing = 0;
    uint64_t sp = 0;          // the entry's stack pointer (0: not carried, or a goroutine's)
    uint32_t tid = 0;         // the thread of the entry (a goroutine's calls move between threads)
    std::array<uint64_t, kMaxValues> values{};
    std::vector<StackFrame> stack{};  // the entry's callers (record -g); empty otherwise
    bool has_offcpu = false;          // the entry carried its thread's off-CPU totals
    OffCpuTimes offcpu{};
  };
  struct Thread {
    uint32_t pid = 0;
    uint32_t tid = 0;
    uint64_t g = 0;            // a goroutine's stack of Go calls (keyed by pid and g), not a thread's
    bool live = false;
    bool lost = false;         // a loss touched it: a return without entry is blamed on it
    uint64_t probe_ns = 0;     // the cost of every probe hit on this thread so far
    std::vector<Frame> stack;
    std::size_t trampolines = 0;  // frames in `stack` with `trampoline` set
  };

  void on_sample(const Event& e, PairingSink& sink);
  uint64_t hit_cost(uint32_t probe) const {
    return probe < hit_cost_of_probe_.size() ? hit_cost_of_probe_[probe] : 0;
  }
  void on_lost(const Event& e, PairingSink& sink);
  // A loss touched `t`: its open calls are cut.
  void cut_thread(Thread& t, PairingSink& sink);
  bool in_gap(uint64_t time) const { return gap_seen_ && time <= gap_until_; }
  void on_exit(const Event& e, PairingSink& sink);
  void on_fork(const Event& e, PairingSink& sink);
  // The thread's state, created on first sight; a tid seen under a new pid was reused
  // after an exit we did not see, so the old owner's frames are closed first.
  uint32_t thread(uint32_t pid, uint32_t tid, PairingSink& sink);
  // The stack of goroutine `g` of process `pid`, created on first sight.
  uint32_t goroutine(uint32_t pid, uint64_t g);
  // Reports the open calls of every goroutine of `pid` with `reason` (Lost cuts them);
  // `release`: the process is gone.
  void close_goroutines(uint32_t pid, UnmatchedReason reason, bool release, PairingSink& sink);
  std::optional<uint32_t> find_thread(uint32_t tid) const;
  void release_thread(uint32_t index);
  // Reports every open frame of `t`, innermost first, with `reason` (Lost for a cut frame).
  void close_frames(Thread& t, std::size_t keep, UnmatchedReason reason, PairingSink& sink);
  void report_frame(const Thread& t, const Frame& f, UnmatchedReason reason, PairingSink& sink);

  void pop_frame(Thread& t);
  // What on_sample knows of a sample once its role is Entry or Return.
  struct Sample {
    const Event& e;
    uint32_t function;
    std::span<const uint64_t> values;
    bool at_exits;    // the function's returns are probed at its exit sites
    bool trampoline;  // its return is a uretprobe, which the kernel nests only so deep
  };
  // An entry pushes a frame (or is unmatched at the kernel's nesting limit).
  void on_entry(Thread& t, const Sample& s, PairingSink& sink);
  // A return pairs with its frame; `probe_ns_before` is the thread's probe time before
  // this return's own probe was counted.
  void on_return(Thread& t, const Sample& s, uint64_t probe_ns_before, PairingSink& sink);
  // The index + 1 of the frame a return of `s` closes, 0 when none: at an exit, the frame
  // with its stack pointer (a recursive function has one per level); a keyed USDT pair,
  // the call with the same key values.
  std::size_t returning_frame(const Thread& t, const Sample& s) const;
  // For an entry at stack pointer `sp`: frames whose stack is gone were left unreturned.
  void close_popped_frames(Thread& t, uint64_t sp, PairingSink& sink);

  std::vector<uint32_t> function_of_probe_;
  std::vector<bool> at_exits_;           // by function: FunctionInfo::at_exits
  std::vector<bool> usdt_;               // by function: FunctionInfo::usdt (no trampoline)
  std::vector<std::vector<std::pair<uint16_t, uint16_t>>> key_;  // by function: FunctionInfo::key
  std::vector<ProbeRole> role_of_probe_;
  std::vector<uint64_t> hit_cost_of_probe_;  // empty: hit costs are not counted
  std::vector<bool> offcpu_of_probe_;    // ProbeFunctions::offcpu_of_probe
  bool gap_seen_ = false;                // a Lost of every thread came
  uint64_t gap_until_ = 0;               // the latest end of its gaps
  std::vector<Thread> threads_;
  std::vector<uint32_t> free_threads_;
  FlatIndex thread_of_tid_;
  uint32_t last_tid_ = 0;                // one-entry cache: most events come in runs per thread
  uint32_t last_thread_ = UINT32_MAX;
  PairingCounts counts_;
};

}  // namespace uprof
