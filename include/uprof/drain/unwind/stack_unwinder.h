// record -g: a hit's copied registers and stack (user_stack.h) -> its callers as
// (object, file offset) frames, unwound in user space during the drain, as perf's
// --call-graph dwarf does after the fact: libdw's unwinder (dwfl) with thread callbacks
// that read the copy, the call frame information of each file (.eh_frame, else
// .debug_frame in its debug file), and the process's mappings from /proc/PID/maps,
// read at the process's first stack and again when a frame's address is outside them.
//
//   work's entry in why_slow: pc = work, sp -> [ret into spinner] ...
//     -> frames {1:0x12a3 (spinner), 1:0x10f5 (main), 2:0x271ca, 2:0x27285, 1:0x1161}
//     and, written just before the first event whose frames name them (announce), the
//     Object events 1 = why_slow and 2 = libc.so.6 with their build-ids
//
// A frame's offset is the return address itself (the instruction after the call); a
// symbolizer looks up offset - 1. Code no file backs (JIT, the vdso) is object 0 with
// the address as its offset, and the unwinding stops there.
//
// Return probes move return addresses: at a probed call's entry the kernel replaces the
// return address on the stack with its trampoline (in the [uprobes] mapping, which has
// no unwind information), so the stack of any call made inside it reads the trampoline
// there. The entry hit itself still has the real one (the kernel hijacks it after the
// probe's handlers ran): at [sp] on x86-64, in the link register on arm64. Each such
// entry's address is kept per thread, with its time and where it will be looked for
// (return_trampolines.h: the slot on x86-64, the call's frame on arm64, whose prologue
// saves x30 where only its call frame information says), and a trampoline a later hit
// of the thread reads there stands for it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "uprof/drain/unwind/user_stack.h"
#include "uprof/model/capture_plan.h"
#include "uprof/model/recording.h"
#include "uprof/util/result.h"

namespace uprof {

struct UnwindCounts {
  uint64_t stacks = 0;     // stacks unwound
  uint64_t empty = 0;      // of them, with no frame at all (the process's mappings could not be read)
  uint64_t truncated = 0;  // stopped before an outermost frame: the copy ended, or no unwind information
  uint64_t trampolines = 0;  // return trampolines replaced by the return address they stand for
};

class StackUnwinder {
 public:
  explicit StackUnwinder(CallGraphMethod method = CallGraphMethod::Dwarf);
  ~StackUnwinder();
  StackUnwinder(const StackUnwinder&) = delete;
  StackUnwinder& operator=(const StackUnwinder&) = delete;

  // Sets e.stack from `stack` of thread e.pid/e.tid, copied by a hit of `probe`. A
  // return probe's pc is already the return address in the caller (frame 0); another
  // probe's pc is in the probed function, whose own frame is left out.
  void unwind(const UserStack& stack, const ProbeCapture& probe, Event& e);
  // Before `e` goes to the data file: an Object event (e's pid, tid and time) for each
  // file its frames name that no event written before named, through `write`. Called in
  // file order, so that an Object always comes before the first frame naming it, even
  // when the events were unwound in another order than they are written.
  Status announce(const Event& e, const std::function<Status(const Event&)>& write);
  // A process that exited or exec'd: its mappings are read again if it comes back.
  void forget(uint32_t pid);
  // The perf engine's side band (PERF_RECORD_MMAP2) announced a mapping of `pid`, as a
  // /proc/PID/maps line: the mappings a process that exited before its first stack was
  // unwound had (its /proc/PID/maps reads empty then). Used only where /proc has none.
  void add_mapping(uint32_t pid, const std::string& maps_line);
  // Whether `pid`'s mappings are known now (from /proc/PID/maps or add_mapping): a stack
  // unwound without them has no frame.
  bool has_mappings(uint32_t pid);
  void thread_exited(uint32_t tid);

  const UnwindCounts& counts() const { return counts_; }

 private:
  struct Process;
  struct Objects;
  struct Trampolines;
  Process* process(uint32_t pid, bool reread);

  CallGraphMethod method_;
  std::vector<std::unique_ptr<Process>> processes_;  // a few: a linear search
  std::unique_ptr<Objects> objects_;
  std::unique_ptr<Trampolines> trampolines_;
  std::map<uint32_t, std::string> announced_maps_;  // add_mapping's lines, by pid
  UnwindCounts counts_;
};

}  // namespace uprof
