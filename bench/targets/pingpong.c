// pingpong: a workload that switches often, for scripts/offcpu_cost.sh (record --off-cpu).
//
//   pingpong N      the main thread calls bounce() N times; each writes a byte into a pipe
//                   and blocks reading the answer, which an echo thread writes back
//
// Each bounce() blocks once (the main thread leaves the CPU inside the call and comes back
// when the echo thread answers), and the echo thread blocks once per round outside any
// probed call: the cost of --off-cpu's scheduler programs inside calls and outside them.
// idle() is never called: probing it gives a recording with --off-cpu whose threads are
// never inside a probed call.
//
// Output (stdout): "loop_ns T loop_cpu_ns C rounds N": the loop's CLOCK_MONOTONIC time and
// the CPU time of the process (both threads) in it.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];

static unsigned long long now(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) long bounce(int out, int in) {
  char c = 'p';
  if (write(out, &c, 1) != 1) return -1;
  return read(in, &c, 1);
}

__attribute__((noinline)) long idle(int x) { return x + 1; }

static void* echo(void* arg) {
  (void)arg;
  char c;
  while (read(ping[0], &c, 1) == 1)
    if (write(pong[1], &c, 1) != 1) break;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: pingpong N\n");
    return 2;
  }
  const long n = atol(argv[1]);
  if (pipe(ping) || pipe(pong)) return 1;
  pthread_t t;
  if (pthread_create(&t, NULL, echo, NULL)) return 1;
  const unsigned long long w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
  long done = 0;
  for (long i = 0; i < n; i++) done += bounce(ping[1], pong[0]) == 1;
  const unsigned long long w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
  close(ping[1]);
  pthread_join(t, NULL);
  printf("loop_ns %llu loop_cpu_ns %llu rounds %ld\n", w1 - w0, c1 - c0, done);
  return done == n ? 0 : 1;
}
