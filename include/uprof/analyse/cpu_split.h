// record --off-cpu: where the calls' time went, summed over a report row, a caller or a
// stack. A call's off-CPU time by kind is its return's totals minus its entry's
// (Call::offcpu, analyse/pairing.h); its on-CPU time is the rest of its duration:
//
//   work() from sleeper: 1.06 ms, off-CPU {sleep 1.01 ms, runnable 0.02 ms}
//     -> on 0.03 ms, off 1.03 ms (runnable 0.02 ms, blocked 1.01 ms)
//
// The duration is the one the report counts (less the probes' cost with --compensate),
// so that on + off adds up to the row's total. Where the kernel's off-CPU intervals add
// up to more than that duration (a compensated call, or the scheduler's clock against
// the probes'), the kinds are scaled down to it: never an on-CPU time below zero.
#pragma once

#include <cstdint>

#include "uprof/model/recording.h"

namespace uprof {

struct CpuSplit {
  uint64_t calls = 0;        // calls that carried off-CPU times (record --off-cpu)
  uint64_t on_cpu_ns = 0;
  OffCpuTimes off{};         // by OffCpuKind

  void add(uint64_t duration, const OffCpuTimes& offcpu);
  void merge(const CpuSplit& other);
  uint64_t off_cpu_ns() const;
  uint64_t runnable_ns() const { return off[static_cast<std::size_t>(OffCpuKind::Runnable)]; }
  // Off the CPU and not waiting for one: blocked in a lock, I/O, a sleep, ...
  uint64_t blocked_ns() const { return off_cpu_ns() - runnable_ns(); }
  bool recorded() const { return calls > 0; }
  // on-CPU share of on + off, 0..1 (0 when nothing was recorded).
  double on_cpu_fraction() const;
};

}  // namespace uprof
