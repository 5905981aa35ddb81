/* A malloc-heavy program for scripts/drain_flood.sh: T threads call malloc and free
 * as fast as they can for S seconds, then print how many calls of malloc they made
 * between them ("malloc calls N").
 *   malloc_flood [T [S]]     (defaults 2 threads, 4 seconds) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_long total;

static void* flood(void* arg) {
  (void)arg;
  long n = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    void* volatile p = malloc(32 + (size_t)(n & 63));
    free(p);
    n++;
  }
  atomic_fetch_add(&total, n);
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  double seconds = argc > 2 ? atof(argv[2]) : 4.0;
  if (threads < 1 || threads > 64) threads = 2;
  pthread_t t[64];
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, flood, NULL);
  struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&ts, NULL);
  atomic_store(&stop, 1);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  printf("malloc calls %ld\n", atomic_load(&total));
  return 0;
}
