// Three functions inside uprof itself that differ only in their first instruction,
// one per class of what the kernel does under a uprobe (insn_class.h), for
// `uprof bench` to probe in a child running `uprof bench --run-target`:
//
//   x86-64   uprof_bench_step   lea (%rdi,%rsi),%rax      single-stepped
//            uprof_bench_push   push %rbp                 emulated
//            uprof_bench_nop5   0f 1f 44 00 00            optimized (Linux 6.18+)
//   arm64    uprof_bench_step   add x0, x0, x1            single-stepped
//            uprof_bench_push   b .+4                     emulated ("simulated")
//            (no optimized class)
//
// Each returns a + b, so a recording of them can be checked.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "uprof/resolve/insn/insn_class.h"
#include "uprof/util/result.h"

namespace uprof {

struct BenchTarget {
  InsnClass cls;
  std::string_view symbol;      // the ELF symbol in uprof's own binary
  std::string_view short_name;  // "step", "push", "nop5": the --run-target argument
  long (*fn)(long, long);
};

// The targets this build has (x86-64: three, arm64: two).
std::span<const BenchTarget> bench_targets();
const BenchTarget* find_bench_target(std::string_view short_name);

// Where code of this process lies in its file: what a probe spec names (BIN:0xOFF)
// without reading a symbol, so that `uprof bench` works on a stripped uprof.
struct CodeLocation {
  std::string path;
  uint64_t file_offset = 0;
};
// From the text of /proc/PID/maps: the file mapping that holds `addr` (pure).
std::optional<CodeLocation> locate_code(std::string_view maps, uint64_t addr);
// The same for this process (reads /proc/self/maps).
Result<CodeLocation> locate_own_code(const void* addr);

struct LoopTiming {
  uint64_t calls = 0;
  uint64_t wall_ns = 0;   // CLOCK_MONOTONIC over the loop
  uint64_t cpu_ns = 0;    // CLOCK_THREAD_CPUTIME_ID over the loop: what the probes charge to the thread
  long sum = 0;
};

// One untimed warm-up call (the first hit of a probe in a process sets up the
// kernel's per-task state and, for a nop5, the trampoline: milliseconds), then `n`
// timed calls with i and i ^ 0x55.
LoopTiming run_target_loop(const BenchTarget& t, uint64_t n);

}  // namespace uprof
