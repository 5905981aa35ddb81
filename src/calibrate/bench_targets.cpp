#include "uprof/calibrate/bench_targets.h"
#include "uprof/util/proc_maps.h"

#include <time.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "uprof/util/clock.h"

extern "C" {
long uprof_bench_step(long a, long b);
long uprof_bench_push(long a, long b);
long uprof_bench_nop5(long a, long b);
}

// Written in assembly so that their first bytes do not depend on the compiler.
// Aligned to 16 bytes: the nop5 never crosses a page (that would stop the kernel
// from optimizing it).
#if defined(__x86_64__)
asm(R"(
    .pushsection .text
    .p2align 4
    .globl uprof_bench_step
    .type uprof_bench_step, @function
uprof_bench_step:
    lea (%rdi,%rsi), %rax
    ret
    .size uprof_bench_step, .-uprof_bench_step

    .p2align 4
    .globl uprof_bench_push
    .type uprof_bench_push, @function
uprof_bench_push:
    push %rbp
    mov %rsp, %rbp
    lea (%rdi,%rsi), %rax
    pop %rbp
    ret
    .size uprof_bench_push, .-uprof_bench_push

    .p2align 4
    .globl uprof_bench_nop5
    .type uprof_bench_nop5, @function
uprof_bench_nop5:
    .byte 0x0f, 0x1f, 0x44, 0x00, 0x00
    lea (%rdi,%rsi), %rax
    ret
    .size uprof_bench_nop5, .-uprof_bench_nop5
    .popsection
)");
#elif defined(__aarch64__)
asm(R"(
    .pushsection .text
    .p2align 4
    .globl uprof_bench_step
    .type uprof_bench_step, %function
uprof_bench_step:
    add x0, x0, x1
    ret
    .size uprof_bench_step, .-uprof_bench_step

    .p2align 4
    .globl uprof_bench_push
    .type uprof_bench_push, %function
uprof_bench_push:
    b 1f
1:  add x0, x0, x1
    ret
    .size uprof_bench_push, .-uprof_bench_push
    .popsection
)");
#endif

namespace uprof {
namespace {

}  // namespace

std::span<const BenchTarget> bench_targets() {
#if defined(__x86_64__)
  static const BenchTarget kTargets[] = {
      {InsnClass::SingleStepped, "uprof_bench_step", "step", uprof_bench_step},
      {InsnClass::Emulated, "uprof_bench_push", "push", uprof_bench_push},
      {InsnClass::Optimized, "uprof_bench_nop5", "nop5", uprof_bench_nop5},
  };
  return kTargets;
#elif defined(__aarch64__)
  static const BenchTarget kTargets[] = {
      {InsnClass::SingleStepped, "uprof_bench_step", "step", uprof_bench_step},
      {InsnClass::Emulated, "uprof_bench_push", "push", uprof_bench_push},
  };
  return kTargets;
#else
  return {};
#endif
}

const BenchTarget* find_bench_target(std::string_view short_name) {
  for (const auto& t : bench_targets())
    if (t.short_name == short_name) return &t;
  return nullptr;
}

LoopTiming run_target_loop(const BenchTarget& t, uint64_t n) {
  long (*fn)(long, long) = t.fn;
  // One indirect call per iteration, whatever the optimizer knows about fn.
  asm volatile("" : "+r"(fn));
  LoopTiming r;
  r.calls = n;
  r.sum = fn(-1, -1 ^ 0x55);
  uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = clock_ns(CLOCK_MONOTONIC);
  for (uint64_t i = 0; i < n; i++) r.sum += fn(static_cast<long>(i), static_cast<long>(i ^ 0x55));
  uint64_t t1 = clock_ns(CLOCK_MONOTONIC), c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  r.wall_ns = t1 - t0;
  r.cpu_ns = c1 - c0;
  return r;
}

std::optional<CodeLocation> locate_code(std::string_view maps, uint64_t addr) {
  for (const MapsEntry& m : parse_maps(maps))
    if (m.path.size() > 0 && m.path[0] == '/' && addr >= m.start && addr < m.end)
      return CodeLocation{m.path, addr - m.start + m.offset};
  return std::nullopt;
}

Result<CodeLocation> locate_own_code(const void* addr) {
  std::ifstream in("/proc/self/maps");
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in && ss.str().empty()) return err("bench: cannot read /proc/self/maps");
  auto loc = locate_code(ss.str(), reinterpret_cast<uint64_t>(addr));
  if (!loc) return err("bench: no file mapping in /proc/self/maps holds the code at ", addr);
  return *loc;
}

}  // namespace uprof
