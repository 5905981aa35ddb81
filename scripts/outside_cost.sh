#!/usr/bin/env bash
# outside_cost.sh: what a process uprof does NOT record pays per call of a probed library
# function while uprof records, on each attach path, side by side in one run.
#
#   scripts/outside_cost.sh [-r REPS] [-s SECONDS] [-f FUNC]
#
#   -r REPS     repetitions, interleaved path by path (default 5)
#   -s SECONDS  how long the outside process calls FUNC in each run (default 1)
#   -f FUNC     libc:malloc (default) or libc:qsort
#
# Each run starts `uprof record --no-args -e FUNC -- sleep 30` with one attach path, waits
# 2 s for its probes, then times a loop in a separate process (built here) that calls
# FUNC (malloc+free of 32 bytes, or qsort of 4 ints) for SECONDS and prints ns per call;
# then uprof is stopped with SIGINT. Paths: none (no uprof), bpf links (with uprobe
# sessions where the kernel has them: the entry trap runs the program, which declines
# the return), bpf links -p (the recording attached to another process with -p: the
# links' pid filter keeps the breakpoints out of this one), bpf events (one uprobe-PMU event per probe, for every process: entry and
# return trap), perf (per-task perf events: no breakpoint in other processes).
# Environment: UPROF (default build/uprof). Needs root and cc.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=5 SECS=1 FUNC=libc:malloc
while getopts "r:s:f:" o; do
  case $o in
    r) REPS=$OPTARG ;;
    s) SECS=$OPTARG ;;
    f) FUNC=$OPTARG ;;
    *) echo "usage: $0 [-r REPS] [-s SECONDS] [-f libc:malloc|libc:qsort]" >&2; exit 2 ;;
  esac
done
UPROF=${UPROF:-build/uprof}
[ -x "$UPROF" ] || { echo "outside_cost: $UPROF missing (scripts/build.sh)" >&2; exit 1; }
OUT=$(mktemp -d /tmp/uprof-outside.XXXXXX)
trap 'pkill -INT -f "$OUT/rec" 2>/dev/null || true; rm -rf "$OUT"' EXIT
cat > "$OUT/loop.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
  double secs = atof(argv[1]), t0 = now(), t;
  int qs = strcmp(argv[2], "libc:qsort") == 0;
  long n = 0;
  do {
    for (int i = 0; i < 1000; i++) {
      if (qs) { int v[4] = {3, 1, 4, 2}; qsort(v, 4, sizeof v[0], cmp); }
      else { void *volatile p = malloc(32); free(p); }
    }
    n += 1000;
  } while ((t = now()) - t0 < secs);
  printf("%.1f\n", (t - t0) * 1e9 / n);
  return 0;
}
C
cc -O2 -o "$OUT/loop" "$OUT/loop.c"
PATHS="none bpf-links bpf-links-p bpf-events perf"
declare -A res
for rep in $(seq "$REPS"); do
  for p in $PATHS; do
    rec=""
    case $p in
      none) ;;
      bpf-links) rec="--engine bpf --attach links" ;;
      bpf-links-p) rec="--engine bpf --attach links" ;;
      bpf-events) rec="--engine bpf --attach events" ;;
      perf) rec="--engine perf" ;;
    esac
    if [ -n "$rec" ]; then
      # shellcheck disable=SC2086
      if [ "$p" = bpf-links-p ]; then
        sleep 30 & spid=$!
        "$UPROF" record --no-calibrate --no-args $rec -o "$OUT/rec-$p.data" -e "$FUNC" -p "$spid" \
          2>"$OUT/rec-$p.log" &
      else
        "$UPROF" record --no-calibrate --no-args $rec -o "$OUT/rec-$p.data" -e "$FUNC" -- sleep 30 \
          2>"$OUT/rec-$p.log" &
      fi
      upid=$!
      sleep 2
    fi
    ns=$("$OUT/loop" "$SECS" "$FUNC")
    if [ -n "$rec" ]; then kill -INT "$upid"; wait "$upid" || true; fi
    if [ "$p" = bpf-links-p ]; then kill "$spid"; wait "$spid" 2>/dev/null || true; fi
    res[$p]="${res[$p]:-} $ns"
    echo "rep $rep $p: $ns ns per call" >&2
  done
done
echo "# $FUNC called by a process outside the recording: ns per call, median of $REPS (all runs)"
for p in $PATHS; do
  # shellcheck disable=SC2086
  med=$(printf '%s\n' ${res[$p]} | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
  printf '%-11s %8s ns  (%s)\n' "$p" "$med" "$(echo ${res[$p]})"
done
grep -h "^uprof:.*engine" "$OUT"/rec-*.log | sed 's/^/  /' || true
