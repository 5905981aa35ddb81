#include "uprof/calibrate/bench_targets.h"

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
  // "start-end perms offset dev inode   path", addresses and offset in hex.
  auto parse_hex = [](std::string_view s, uint64_t& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    return ec == std::errc() && p == s.data() + s.size();
  };
  while (!maps.empty()) {
    std::size_t nl = maps.find('\n');
    std::string_view line = maps.substr(0, nl);
    maps = nl == std::string_view::npos ? std::string_view{} : maps.substr(nl + 1);
    std::string_view field[6];
    std::size_t n = 0, i = 0;
    for (; n < 5; n++) {  // the first five fields; the path is the rest
      while (i < line.size() && line[i] == ' ') i++;
      std::size_t j = line.find(' ', i);
      if (j == std::string_view::npos) break;
      field[n] = line.substr(i, j - i);
      i = j;
    }
    while (i < line.size() && line[i] == ' ') i++;
    if (n < 5 || i >= line.size() || line[i] != '/') continue;  // anonymous, [vdso], ...
    field[5] = line.substr(i);
    std::size_t dash = field[0].find('-');
    uint64_t start = 0, end = 0, off = 0;
    if (dash == std::string_view::npos || !parse_hex(field[0].substr(0, dash), start) ||
        !parse_hex(field[0].substr(dash + 1), end) || !parse_hex(field[2], off))
      continue;
    if (addr >= start && addr < end) return CodeLocation{std::string(field[5]), addr - start + off};
  }
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
