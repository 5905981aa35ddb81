// check_perf_script: exactness of a perf.data recorded on `hot MODE N` by
// scripts/compare_record.sh, read from `perf script --ns -F tid,time,event,trace` on stdin:
//
//   29252  3195.710033123:         probe_hot:add_nop5: (5603b26d8380) a=0x0 b=0x55
//   29252  3195.710355004: probe_hot:add_nop5__return: (5603b26d8380 <- 5603b26d8186) r=0x55
//
//   perf script ... | check_perf_script N
//
// Prints the same key=value line as check_uprof_data (lost and kernel are not known
// here: the script takes perf's own lost count from `perf report --stats`):
//   samples entries returns dups missing gaps bad unordered
// gaps: places where the call sequence breaks (an entry or a return is missing);
// bad: values that are wrong (b != a ^ 0x55, or a return value != a + b of its entry).
// dups: lines identical to an earlier line with the same timestamp (perf script prints
// in time order, so only lines of the current timestamp need remembering);
// unordered: lines whose timestamp is earlier than the line before.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SAME 64
#define MAX_LINE 512

static long long value_of(const char* line, const char* key, int* found) {
  const char* p = strstr(line, key);
  *found = p != NULL;
  if (!p) return 0;
  return strtoll(p + strlen(key), NULL, 0);
}

// Whether r is the return value a + (a ^ 0x55) of some call a later than `after`.
static int later_call_returns(long long after, long long r) {
  for (long long a = r / 2 - 0x60; a <= r / 2 + 0x60; a++)
    if (a > after && a + (a ^ 0x55) == r) return 1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: perf script --ns -F tid,time,event,trace | check_perf_script N\n");
    return 2;
  }
  long long n = atoll(argv[1]);
  int verbose = getenv("CHECK_VERBOSE") != NULL;  // print the lines counted as bad
  static char same[MAX_SAME][MAX_LINE];
  int nsame = 0;
  char cur_time[64] = "";
  double last_time = -1;
  long long samples = 0, entries = 0, returns = 0, dups = 0, bad = 0, gaps = 0, unordered = 0;
  long long next_a = 0, ea = 0, eb = 0;
  int have_entry = 0;
  char line[MAX_LINE];
  while (fgets(line, sizeof line, stdin)) {
    char tid[32], time[64], event[128];
    if (sscanf(line, "%31s %63s %127s", tid, time, event) != 3) continue;
    if (strncmp(event, "probe_hot:", 10) != 0) continue;
    samples++;
    double t = atof(time);
    if (t < last_time) unordered++;
    last_time = t;
    if (strcmp(time, cur_time) != 0) {
      snprintf(cur_time, sizeof cur_time, "%s", time);
      nsame = 0;
    }
    int dup = 0;
    for (int i = 0; i < nsame && !dup; i++) dup = strcmp(same[i], line) == 0;
    if (dup) {
      dups++;
      continue;
    }
    if (nsame < MAX_SAME) snprintf(same[nsame++], MAX_LINE, "%s", line);
    // One thread (the workload's main thread): pair in order.
    size_t len = strlen(event);
    int is_return = len > 9 && strstr(event, "__return") != NULL;
    int fa, fb, fr;
    if (!is_return) {
      entries++;
      long long a = value_of(line, " a=", &fa), b = value_of(line, " b=", &fb);
      if (!fa || !fb || b != (a ^ 0x55)) {
        bad++;
        if (verbose) fprintf(stderr, "bad entry: %s", line);
      }
      if (a != next_a || have_entry) gaps++;  // a call's entry or the previous return is missing
      next_a = a + 1;
      ea = a;
      eb = b;
      have_entry = 1;
    } else {
      returns++;
      long long r = value_of(line, " r=", &fr);
      if (!have_entry) gaps++;  // its entry is missing
      else if (fr && (r & 0xffffffffLL) != ((ea + eb) & 0xffffffffLL) && later_call_returns(ea, r))
        gaps++;  // this entry's return and the next entries were lost: r is a later call's
      else if (!fr || (r & 0xffffffffLL) != ((ea + eb) & 0xffffffffLL)) {
        bad++;
        if (verbose) fprintf(stderr, "bad return (entry a=%lld b=%lld): %s", ea, eb, line);
      }
      have_entry = 0;
    }
  }
  printf("samples=%lld entries=%lld returns=%lld dups=%lld missing=%lld gaps=%lld bad=%lld unordered=%lld\n",
         samples, entries, returns, dups, 2 * n - (samples - dups), gaps, bad, unordered);
  return 0;
}
