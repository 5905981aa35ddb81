// hot: a probe-cost workload for scripts/compare_record.sh.
//
//   hot MODE N     MODE is step, push, nop5 or cet; calls that function N times in a tight loop
//
// The three functions do the same thing (return a + b) and differ only in their first
// instruction, which decides what a uprobe on them costs on x86-64 Linux:
//
//   add_step  lea (%rdi,%rsi),%eax   the kernel single-steps it out of line (slowest)
//             (plain C; build with -O2 -fcf-protection=none, or -fcf-protection=full
//              to start it with endbr64, which is single-stepped as well)
//   add_push  push %rbp              the kernel emulates it (no single-step)
//   add_nop5  0f 1f 44 00 00 (nopl)  Linux 6.x optimizes a probe on a 5-byte nop into
//                                    a call to a trampoline (no trap at all)
//   add_cet   endbr64; push %rbp     as every function of a CET build (-fcf-protection,
//                                    the default on Ubuntu and Fedora) starts: endbr64 is
//                                    single-stepped at the symbol, the push after it is
//                                    emulated; uprof's placement probes the push
//
// add_push and add_nop5 are naked so that their first bytes do not depend on the
// compiler's mood; the script checks all three with objdump before it measures.
//
// Argument i goes to a (%rdi) and i ^ 0x55 to b (%rsi), so a recording can be checked
// exactly: entry k has a == k, and its return value is a + b.
//
// Output (stdout): "loop_ns T loop_cpu_ns C sum S" then, last, "calls N". T is the loop's
// CLOCK_MONOTONIC (wall) time, C the CPU time (user + system, CLOCK_PROCESS_CPUTIME_ID)
// this process spent in the loop: a uprobe's trap, handler, single-step and sample are
// all charged to the probed thread, while time spent waiting for a CPU on a busy
// machine is not, so C is the steadier measure of what the probes add.
#if !defined(__x86_64__)
#error "hot.c is x86-64 only (the first-instruction classes are x86 uprobe behaviour)"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noinline, noipa)) int add_step(int a, int b) { return a + b; }

__attribute__((naked, noinline)) int add_push(int a, int b) {
  (void)a;
  (void)b;
  __asm__(
      "push %rbp\n\t"
      "mov %rsp, %rbp\n\t"
      "lea (%rdi,%rsi), %eax\n\t"
      "pop %rbp\n\t"
      "ret\n\t");
}

__attribute__((naked, noinline)) int add_cet(int a, int b) {
  (void)a;
  (void)b;
  __asm__(
      "endbr64\n\t"
      "push %rbp\n\t"
      "mov %rsp, %rbp\n\t"
      "lea (%rdi,%rsi), %eax\n\t"
      "pop %rbp\n\t"
      "ret\n\t");
}

__attribute__((naked, noinline)) int add_nop5(int a, int b) {
  (void)a;
  (void)b;
  __asm__(
      ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"  // nopl 0x0(%rax,%rax,1)
      "lea (%rdi,%rsi), %eax\n\t"
      "ret\n\t");
}

static long long now_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: hot step|push|nop5|cet N\n");
    return 2;
  }
  int (*fn)(int, int);
  if (strcmp(argv[1], "step") == 0) fn = add_step;
  else if (strcmp(argv[1], "push") == 0) fn = add_push;
  else if (strcmp(argv[1], "nop5") == 0) fn = add_nop5;
  else if (strcmp(argv[1], "cet") == 0) fn = add_cet;
  else {
    fprintf(stderr, "hot: unknown mode '%s' (step, push, nop5 or cet)\n", argv[1]);
    return 2;
  }
  char* end = NULL;
  long n = strtol(argv[2], &end, 10);
  if (!end || *end || n < 0 || n > 2000000000L) {
    fprintf(stderr, "hot: N must be a number from 0 to 2000000000\n");
    return 2;
  }
  // Hide which function it is, so the compiler keeps one indirect call per iteration.
  __asm__ volatile("" : "+r"(fn));

  long long sum = 0;
  long long c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  long long t0 = now_ns(CLOCK_MONOTONIC);
  for (long i = 0; i < n; i++) sum += fn((int)i, (int)(i ^ 0x55));
  long long t1 = now_ns(CLOCK_MONOTONIC);
  long long c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);

  printf("loop_ns %lld loop_cpu_ns %lld sum %lld\n", t1 - t0, c1 - c0, sum);
  printf("calls %ld\n", n);
  return 0;
}
