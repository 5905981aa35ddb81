// record -g with return probes: the return addresses the kernel's return trampoline
// stands for, per thread, so that a stack unwound inside a return-probed call goes on
// past it (drain/unwind/stack_unwinder.h).
//
// At a return-probed function's entry the kernel replaces its return address with the
// trampoline (in the [uprobes] mapping, which has no unwind information), after the
// probe's handlers ran: the entry's own hit still sees the real one. Where it is then:
//   x86-64: on the stack, at [sp] of the entry (the call pushed it): the slot is known.
//   arm64:  in the link register x30; the function's prologue saves it somewhere in its
//           own frame (`stp x29, x30, [sp, #-64]!` puts it at entry sp - 56): below the
//           entry's sp, above every deeper frame's.
// So each entry is noted by a key, the slot (x86-64) or the entry's sp (arm64, the
// function's CFA), with its time and the real address; a trampoline read at address A
// by a later hit of the thread is the latest entry (by time, not after the hit) at the
// slot A (x86-64), or at the nearest key at or above A (arm64: the innermost probed call
// whose frame holds A; a deeper call's key is below A).
//
//   why_slow, work return-probed, a hit in libc's clock_nanosleep under it (arm64):
//     work's entry: sp 0xffffd0a0, x30 0xaaaa0904 (in sleeper)  -> note(tid, 0xffffd0a0, t0, 0xaaaa0904)
//     the hit reads the trampoline at 0xffffd068 (work's saved x30) -> find(...) = 0xaaaa0904
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

namespace uprof {

class ReturnTrampolines {
 public:
  // exact: a key is the slot itself (x86-64); else the nearest key at or above it (arm64).
  explicit ReturnTrampolines(bool exact) : exact_(exact) {}

  void note(uint32_t tid, uint64_t key, uint64_t time, uint64_t return_address);
  // The return address a trampoline read at `addr` by thread `tid`'s hit at `time`
  // stands for; none when no entry before it fits.
  std::optional<uint64_t> find(uint32_t tid, uint64_t addr, uint64_t time) const;
  void thread_exited(uint32_t tid) { threads_.erase(tid); }

 private:
  struct Entry {
    uint64_t time = 0, return_address = 0;
  };
  // The latest few entries (by time) at each key: a thread's hits may be unwound a
  // little out of time order (the perf engine's per-CPU rings).
  static constexpr std::size_t kPerKey = 8;
  bool exact_;
  std::unordered_map<uint32_t, std::map<uint64_t, std::vector<Entry>>> threads_;
};

}  // namespace uprof
