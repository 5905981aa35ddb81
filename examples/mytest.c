/* The bundled example: add(a, b) called in a loop, as in the tracefs uprobe
 * walk-through this project started from. `mytest [N]` calls add(i, 10*i) for
 * i = 0..N-1 (default 10) and prints the sum so the calls cannot be removed. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int add(int a, int b) { return a + b; }

int main(int argc, char** argv) {
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
  long sum = 0;
  for (long i = 0; i < n; i++) sum += add((int)i, (int)(10 * i));
  printf("mytest: %ld calls, sum %ld\n", n, sum);
  return 0;
}
