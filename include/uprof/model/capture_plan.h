// The capture plan: what to read at each probe, as data that no capture engine owns.
// `record` makes it from the resolved probes and DWARF (record/recording_plan.h);
// each engine turns it into its own attach and decode (engine/capture_engine.h).
//
//   -e 'add a b'  ->  probe 0: /work/mytest @ 0x1139 entry, read di si       -> slots a, b
//                     probe 1: /work/mytest @ 0x1139 return, read ax         -> slot $retval
//   -e 'f s'      ->  probe 0: ... entry, read di sp + 1024 stack bytes      -> slot s (deref [di+8])
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprof/arch/arch.h"
#include "uprof/model/recording.h"

namespace uprof {

// What the kernel must copy on each hit, beyond thread, pid and time. The register
// mask is in the perf register numbering of the probed file's architecture
// (x86-64 DI|SI = (1<<5)|(1<<4); arm64 x0..x7 = 0xff).
struct ProbeReads {
  uint64_t regs_mask = 0;    // 0 = no registers
  uint32_t stack_bytes = 0;  // user stack bytes to copy from the stack pointer; 0 = none
  bool operator==(const ProbeReads&) const = default;
};

// record -g: what a probe's hits do for the call stack (the drain unwinds it:
// drain/unwind/stack_unwinder.h).
//   -g                   Always on entry probes (and on the returns of functions without one)
//   -g --stack-min 1ms   EntryTime on entries, IfLong on their returns and exits
enum class StackCapture : uint8_t {
  None = 0,
  Always = 1,     // the registers and the top of the user stack at every hit
  EntryTime = 2,  // the entry's time only, per thread and call depth
  IfLong = 3,     // a return or exit: the stack when the call took at least stack_min_ns
};

// How stacks are unwound: from the call frame information (.eh_frame, .debug_frame) or
// by following frame pointers; both from the same copy of the registers and stack.
enum class CallGraphMethod : uint8_t { Dwarf = 0, FramePointer = 1 };

// The most user stack bytes one stack copies (perf's limit for --call-graph dwarf,SIZE).
inline constexpr uint32_t kMaxCallStackBytes = 65528;

// record -g / --call-graph / --stack-min, for the whole recording.
struct CallGraphPlan {
  bool on = false;
  CallGraphMethod method = CallGraphMethod::Dwarf;
  uint32_t stack_bytes = 8192;  // user stack bytes copied per stack (perf's default)
  uint64_t stack_min_ns = 0;    // 0: every hit of a stack-carrying probe has its stack
  bool operator==(const CallGraphPlan&) const = default;
};
// record --off-cpu: what a probe's hit does with its thread's off-CPU totals
// (ProbeInfo::offcpu): an entry copies them and opens a call on the thread, a return or
// an exit copies them and closes one (the BPF engine follows the scheduler only for
// threads inside a call).
enum class OffCpuRole : uint8_t { None = 0, Enter = 1, Leave = 2 };

struct ProbeCapture {
  uint32_t probe = 0;          // index in the recording's probe table (ProbeInfo::index)
  std::string path{};          // the file to probe
  uint64_t file_offset = 0;    // the probed instruction's file offset
  bool is_return = false;
  ProbeReads reads{};
  // How an event's value slots come out of what was read: one slot per ValueSpec,
  // in order (the probe table's values for this probe).
  std::vector<ValueSpec> values{};
  // The last slot of `values` is the stack pointer, for Event::frame (ProbeInfo::frame);
  // `tail_call`: an exit by a tail-call jump, whose return values are not known yet.
  bool frame = false;
  bool tail_call = false;
  // The slot before the stack pointer's (the last without `frame`) is Go's g register,
  // for Event::goroutine (ProbeInfo::goroutine).
  bool goroutine = false;
  OffCpuRole offcpu = OffCpuRole::None;
  // A USDT probe's semaphore: its file offset, which the kernel increments in each
  // process mapping the file while the probe is attached (the uprobe PMU's
  // ref_ctr_offset, tracefs' "(0xSEM)"); 0 when it has none.
  uint64_t ref_ctr_offset = 0;
  // For messages about the probe: its function ("add", "lines.c:23", "python:gc__start").
  std::string label{};
  // record -g: what its hits do for the call stack (CapturePlan::call_graph says how).
  StackCapture stack = StackCapture::None;
  // The probe's kind: an entry's stack starts at the function it is in (frame 0 of the
  // unwinding is dropped: Event::stack starts at its caller); a return probe's starts at
  // the return address itself.
  ProbeKind kind = ProbeKind::Entry;
  // record -g: an entry of a function whose return is probed: once the hit is done, the
  // kernel puts its return trampoline where the return address was, and the stacks of
  // the calls it makes find the trampoline there (drain/unwind/stack_unwinder.h).
  bool return_probed = false;
};

// What an engine does with an event of `probe` once its slots are filled: the stack
// pointer slot moves to Event::frame, the g slot to Event::goroutine, and a tail-call
// exit's values are marked missing.
inline void finish_sample(const ProbeCapture& probe, Event& e) {
  auto take_last = [&e](uint64_t& into) {
    e.nvalues--;
    into = (e.missing >> e.nvalues) & 1 ? 0 : e.values[e.nvalues];
    e.missing &= ~(1u << e.nvalues);
    e.values[e.nvalues] = 0;
  };
  if (probe.frame && e.nvalues > 0) take_last(e.frame);
  if (probe.goroutine && e.nvalues > 0) take_last(e.goroutine);
  if (probe.tail_call) e.missing |= e.nvalues >= 32 ? ~0u : (1u << e.nvalues) - 1;
}

// Whether a value is read from user memory at the probe, not out of the registers and
// the copied stack: strings, pointers followed (`hops`), and raw memory reads
// ("+8(%di)") and what a parameter points to ("p->x"). The BPF engine reads them with
// bpf_probe_read_user; the perf engine asks tracefs for them as fetch arguments
// (engine/perf/perf_fetch_args.h). A DWARF value behind an address (a -O0 home below rbp)
// is on the stack, and read from its copy.
// $comm (ValueSource::Comm) is a string the engines read at the probe too.
inline bool fetched_from_memory(const ValueSpec& v) {
  return v.is_string() || !v.hops.empty() || (v.deref && (!v.typed() || v.pointee));
}

struct CapturePlan {
  Arch arch = Arch::X86_64;
  std::vector<ProbeCapture> probes{};  // one per probe table entry, in table order
  CallGraphPlan call_graph{};          // record -g
};

}  // namespace uprof
