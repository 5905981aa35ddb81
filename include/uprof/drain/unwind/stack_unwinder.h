// record -g: a hit's copied registers and stack (user_stack.h) -> its callers as
// (object, file offset) frames, unwound in user space during the drain, as perf's
// --call-graph dwarf does after the fact: libdw's unwinder (dwfl) with thread callbacks
// that read the copy, the call frame information of each file (.eh_frame, else
// .debug_frame in its debug file), and the process's mappings from /proc/PID/maps,
// read at the process's first stack and again when a frame's address is outside them.
//
//   work's entry in why_slow: pc = work, sp -> [ret into spinner] ...
//     -> frames {why_slow+0x12a3 (spinner), why_slow+0x10f5 (main), libc+0x271ca, libc+0x27285, why_slow+0x1161}
//     and Object events 1 = why_slow, 2 = libc.so.6 before the first frames naming them
//
// A frame's offset is the return address itself (the instruction after the call); a
// symbolizer looks up offset - 1. Code no file backs (JIT, the vdso) is object 0 with
// the address as its offset, and the unwinding stops there.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "uprof/drain/unwind/user_stack.h"
#include "uprof/model/capture_plan.h"
#include "uprof/model/recording.h"

namespace uprof {

struct UnwindCounts {
  uint64_t stacks = 0;     // stacks unwound
  uint64_t empty = 0;      // of them, with no frame at all (the process's mappings could not be read)
  uint64_t truncated = 0;  // stopped before an outermost frame: the copy ended, or no unwind information
};

class StackUnwinder {
 public:
  explicit StackUnwinder(CallGraphMethod method = CallGraphMethod::Dwarf);
  ~StackUnwinder();
  StackUnwinder(const StackUnwinder&) = delete;
  StackUnwinder& operator=(const StackUnwinder&) = delete;

  // Sets e.stack from `stack` of thread e.pid/e.tid. `from_return`: the registers are a
  // return probe's, whose pc is already the return address in the caller (frame 0);
  // otherwise the pc is in the probed function, whose own frame is left out. Each file
  // its frames name for the first time is appended to `objects` as an Object event
  // (e's pid, tid and time), to go before e.
  void unwind(const UserStack& stack, bool from_return, Event& e, std::vector<Event>& objects);
  // A process that exited or exec'd: its mappings are read again if it comes back.
  void forget(uint32_t pid);

  const UnwindCounts& counts() const { return counts_; }

 private:
  struct Process;
  struct Objects;
  Process* process(uint32_t pid, bool reread);

  CallGraphMethod method_;
  std::vector<std::unique_ptr<Process>> processes_;  // a few: a linear search
  std::unique_ptr<Objects> objects_;
  UnwindCounts counts_;
};

}  // namespace uprof
