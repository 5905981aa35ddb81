#!/usr/bin/env bash
# compare_record.sh: what `uprof record` adds per probe hit, side by side with
# `perf probe` + `perf record`, on the same workload in the same run; and how exact
# each is (lost, duplicated, wrong events) and how big its data file is.
#
#   scripts/compare_record.sh [-r REPS] [-n N] [-s N_STEP] [-c "step push nop5"]
#                             [--no-pmu] [--keep] [-o DIR] [-t "TOOLS"]
#
#   -r REPS     repetitions (default 5)
#   -n N        calls per run for the push and nop5 classes (default 1000000)
#   -s N_STEP   calls per run for the single-stepped class (default 100000)
#   -c CLASSES  which function classes (default "step push nop5"; "cet" adds endbr64 + push,
#               where uprof probes the push after endbr64 and every other tool the endbr64)
#   --no-pmu    skip `uprof record --engine perf --backend pmu`
#   --no-bpf    skip bpftrace and BCC funclatency (in-kernel aggregation, no data file)
#   --keep      keep every data file (they are ~13 B/event for uprof, ~96 for perf)
#   -o DIR      where data files and results.tsv go (default BUILD_DIR/compare-record)
#   -t TOOLS    run only these tools (names as in results.tsv: uprof uprof-events uprof-perf
#               uprof-pmu uprof-bare perf perf-bare perf-stat bpftrace-count bpftrace
#               bpftrace-printf funclatency uprof-base uprof-perf-base); the unprobed run
#               ("none") always runs. uprof-bare and perf-bare are uprof (bpf engine, links)
#               and perf record without UPROF_ARGS / PERF_ARGS, run only when named here:
#               with UPROF_ARGS=-g, what -g adds per hit in the same interleaved run
#
# Environment: BUILD_DIR (default build-perf), UPROF (a prebuilt uprof: skips the cmake
# build; check_uprof_data still needs BUILD_DIR/libuprof_core.a), UPROF_BASE (another
# prebuilt uprof, e.g. main's, run beside it as uprof-base and uprof-perf-base: a change's
# cost per hit, before and after, in one run), UPROF_ARGS (extra
# `uprof record` options, e.g. "-m 1024"), PERF_ARGS (extra `perf record` options),
# PERF_ENTRY_TERM (a term on perf's entry event only, e.g. "/call-graph=dwarf/": perf then
# copies a stack at the entry only, as uprof -g does, not at the return too),
# RUN_TIMEOUT (seconds per run, default 300), HOT_CFLAGS (default
# "-O2 -g -fcf-protection=none"; "-O2 -g -fcf-protection=full" starts add_step with endbr64).
#
# The workload is bench/targets/hot.c: `hot MODE N` calls one of three functions N times;
# they return a + b and differ only in their first instruction (step: lea, single-stepped
# by the kernel; push: push %rbp, emulated; nop5: 0f 1f 44 00 00, optimized by Linux 6.x).
# Each run probes entry and return (2N hits): uprof with 'FUNC %di %si $retval', perf with
# 'FUNC a=%di b=%si' and 'FUNC%return r=%ax'.
#
# Timing: hot measures its own loop, both wall time (CLOCK_MONOTONIC) and the CPU time the
# process spent in it (CLOCK_PROCESS_CPUTIME_ID). Tool start-up, attach, the final drain
# and the data file's last writes are outside the loop, so nothing has to be subtracted
# for them; they are shown separately as "fixed s" (whole command's elapsed - loop wall).
#   ns per hit = (t_probed - t_unprobed) / 2N, the unprobed run being the same class's in
#   the same repetition (runs are interleaved: rep -> class -> tool).
# CPU time is the headline: a uprobe's trap, handler, single-step and sample are charged to
# the probed thread, and time spent waiting for a CPU on a busy machine is not. Wall time
# is shown too; on a loaded machine it is noisier.
#
# Exactness is checked per run from the data itself: the entry values must be the call
# numbers 0..N-1 in order with b = a ^ 0x55 and each return value a + b, so
#   missing = 2N - unique samples, dups = samples identical to another one (same probe or
#   event, thread, timestamp and values), gaps = breaks in the call sequence, bad = wrong
#   values; lost = what the tool itself says it lost (uprof: its summary line and the
#   file's LOST events; perf: `perf report --stats` LOST_SAMPLES).
#   bytes/event = data file size / unique samples.
#
# perf probes are added once (group probe_hot, after hot is built: a uprobe is bound to
# the file's inode) and deleted on every exit path. Needs root, x86-64, perf, cmake, cc.
#
# BPF peers (installed from Debian when missing: apt-get install bpftrace bpfcc-tools):
#   bpftrace   uprobe + uretprobe on FUNC, @lat = hist(nsecs - @start[tid]), started with -c
#              so it sees only the workload; its count of paired calls is checked against N
#   bpftrace printf: the same probes, but one line per call (tid, a, b, retval, latency) into a
#              file (-o), as close as bpftrace comes to uprof's per-call data: checked like
#              uprof's file (every call once, retval = a + b; "Lost N events" on stderr)
#   funclatency (BCC funclatency-bpfcc) FUNC, started before the workload and stopped with
#              SIGINT after it; its histogram's total is checked against N
# Two floors, which keep nothing per call, show what the trap itself costs on this kernel:
#   perf stat  the same two tracefs probes, counted (no sample, no program): the trap alone
#   bpftrace count()  uprobe + uretprobe, each adding 1 to a per-CPU count: the trap and the
#              cheapest BPF program; both counts are checked against N
# bpftrace hist() and funclatency aggregate in the kernel: no data file, no per-event values
# (bytes/event "-"), and a "report" that is printed as they exit. Their attach (LLVM compile) is outside the loop.
# "report s" = time of `uprof report` / `perf report --stdio` on the first repetition's file.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

REPS=5
N=1000000
N_STEP=100000
CLASSES="step push nop5"
PMU=1
BPF=1
KEEP=0
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    -r) REPS=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    -s) N_STEP=$2; shift 2 ;;
    -c) CLASSES=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    --no-pmu) PMU=0; shift ;;
    --no-bpf) BPF=0; shift ;;
    --keep) KEEP=1; shift ;;
    -t) ONLY_TOOLS=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare_record: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-build-perf}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
HOT_CFLAGS=${HOT_CFLAGS:--O2 -g -fcf-protection=none}
UPROF_ARGS=${UPROF_ARGS:-}
PERF_ARGS=${PERF_ARGS:-}
PERF_ENTRY_TERM=${PERF_ENTRY_TERM:-}
ONLY_TOOLS=${ONLY_TOOLS:-}
OUT=${OUT:-$BUILD_DIR/compare-record}
TB=$BUILD_DIR/bench-targets
case $TB in /*) HOT=$TB/hot ;; *) HOT=$ROOT/$TB/hot ;; esac  # BUILD_DIR may be absolute
GROUP=probe_hot

die() { echo "compare_record: $*" >&2; exit 1; }
say() { echo "== $*" >&2; }

[ "$(id -u)" = 0 ] || die "needs root (uprobes)"
[ "$(uname -m)" = x86_64 ] || die "x86-64 only (hot.c's first-instruction classes are x86 uprobe behaviour)"
for t in perf cmake cc c++ objdump timeout python3; do
  command -v "$t" >/dev/null || die "'$t' is not installed"
done
if [ "$BPF" = 1 ]; then
  missing=""
  command -v bpftrace >/dev/null || missing="$missing bpftrace"
  command -v funclatency-bpfcc >/dev/null || missing="$missing bpfcc-tools"
  if [ -n "$missing" ]; then
    say "installing$missing (Debian packages)"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -q $missing >/dev/null 2>&1 ||
      echo "compare_record: could not install$missing; the BPF peers that are missing are skipped" >&2
  fi
fi
for c in $CLASSES; do
  case "$c" in step|push|nop5|cet) ;; *) die "unknown class '$c' (step, push, nop5, cet)" ;; esac
done

# ---- cleanup: never leave perf probes behind -------------------------------------------
probes_added=0
cleanup() {
  local rc=$?
  if [ "$probes_added" = 1 ] || grep -q "^[pr]:$GROUP/" /sys/kernel/tracing/uprobe_events 2>/dev/null; then
    timeout 60 perf probe -q -d "$GROUP:*" >/dev/null 2>&1 || true
  fi
  if grep -q "^[pr]:$GROUP/" /sys/kernel/tracing/uprobe_events 2>/dev/null; then
    echo "compare_record: WARNING: $GROUP probes are still installed (perf probe -d '$GROUP:*')" >&2
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- build -------------------------------------------------------------------------------
mkdir -p "$TB" "$OUT"
if [ -n "${UPROF:-}" ]; then
  [ -x "$UPROF" ] || die "UPROF=$UPROF is not executable"
  say "using prebuilt $UPROF"
else
  say "building uprof in $BUILD_DIR"
  built=0
  for attempt in 1 2 3; do
    if timeout 1800 cmake -S . -B "$BUILD_DIR" -DUPROF_BENCH=OFF >/dev/null &&
       timeout 1800 cmake --build "$BUILD_DIR" -j"$(nproc)" --target uprof > "$OUT/build.log" 2>&1; then
      built=1; break
    fi
    # Others edit the tree at the same time: a half-edited file breaks the build for a while.
    echo "compare_record: build failed (attempt $attempt, see $OUT/build.log); retrying in 60 s" >&2
    sleep 60
  done
  [ "$built" = 1 ] || die "uprof does not build (see $OUT/build.log)"
  UPROF=$ROOT/$BUILD_DIR/uprof
fi
[ -f "$BUILD_DIR/libuprof_core.a" ] || die "$BUILD_DIR/libuprof_core.a is missing (check_uprof_data links it)"
say "building hot and the checkers in $TB"
# shellcheck disable=SC2086
cc $HOT_CFLAGS -Wall -Wextra -o "$HOT" bench/targets/hot.c
cc -O2 -Wall -Wextra -o "$TB/check_perf_script" bench/targets/check_perf_script.c
c++ -std=c++20 -O2 -Wall -Wextra -Iinclude -o "$TB/check_uprof_data" bench/targets/check_uprof_data.cpp \
  "$BUILD_DIR/libuprof_core.a"

# ---- what each function starts with -----------------------------------------------------
first_insn() {  # prints "bytes<TAB>instruction" of FUNC's first instruction
  objdump -d --no-addresses "$HOT" 2>/dev/null |
    awk -v f="<$1>:" '$1 == f {getline; sub(/^[ \t]+/, ""); print; exit}'
}
say "first instructions (objdump -d $TB/hot)"
for c in $CLASSES; do
  insn=$(first_insn "add_$c")
  [ -n "$insn" ] || die "add_$c not found in $HOT"
  bytes=$(printf '%s' "$insn" | awk -F'\t' '{print $1}' | sed 's/ *$//')
  mnem=$(printf '%s' "$insn" | awk -F'\t' '{print $2}' | awk '{print $1}')
  printf '   add_%-5s %-16s %s\n' "$c" "$bytes" "$(printf '%s' "$insn" | awk -F'\t' '{print $2}')" >&2
  case "$c" in
    step) case "$mnem" in lea|mov|sub|endbr64) ;; *) die "add_step starts with '$mnem', not a single-stepped lea/mov/sub/endbr64" ;; esac ;;
    push) [ "$bytes" = 55 ] || die "add_push starts with '$bytes', not 55 (push %rbp)" ;;
    nop5) [ "$bytes" = "0f 1f 44 00 00" ] || die "add_nop5 starts with '$bytes', not 0f 1f 44 00 00" ;;
    cet) [ "$bytes" = "f3 0f 1e fa" ] || die "add_cet starts with '$bytes', not f3 0f 1e fa (endbr64)" ;;
  esac
done

# ---- perf probes -------------------------------------------------------------------------
if grep -q "^[pr]:$GROUP/" /sys/kernel/tracing/uprobe_events 2>/dev/null; then
  say "removing stale $GROUP probes"
  timeout 60 perf probe -q -d "$GROUP:*" >/dev/null 2>&1 || true
fi
probes_added=1
for c in $CLASSES; do
  timeout 120 perf probe -q -x "$HOT" "add_$c" a=%di b=%si >/dev/null ||
    die "perf probe -x $HOT add_$c a=%di b=%si failed"
  timeout 120 perf probe -q -x "$HOT" "add_$c%return" r=%ax >/dev/null ||
    die "perf probe -x $HOT add_$c%return r=%ax failed"
done
say "probe offsets: perf (uprobe_events) vs uprof (uprof probe)"
for c in $CLASSES; do
  poff=$(awk -v e="p:$GROUP/add_$c" '$1 == e {n = split($2, a, ":"); print a[n]}' /sys/kernel/tracing/uprobe_events)
  uoff=$(timeout 60 "$UPROF" probe "$HOT" "add_$c" | awk 'NR == 2 {print $4}')
  printf '   add_%-5s perf %s  uprof %s\n' "$c" "$poff" "$uoff" >&2
  # cet: uprof's placement probes the push after endbr64 (4 bytes on); the others the symbol.
  want=0; [ "$c" = cet ] && want=4
  if [ -z "$poff" ] || [ -z "$uoff" ] || [ $((uoff - poff)) != $want ]; then
    die "uprof probes add_$c at $uoff, perf at $poff (expected uprof = perf + $want)"
  fi
done

# ---- runs --------------------------------------------------------------------------------
TOOLS="none uprof uprof-events uprof-perf"
if [ -n "${UPROF_BASE:-}" ]; then
  [ -x "$UPROF_BASE" ] || die "UPROF_BASE=$UPROF_BASE is not executable"
  TOOLS="$TOOLS uprof-base uprof-perf-base"
fi
[ "$PMU" = 1 ] && TOOLS="$TOOLS uprof-pmu"
TOOLS="$TOOLS perf perf-stat"
if [ "$BPF" = 1 ]; then
  command -v bpftrace >/dev/null && TOOLS="$TOOLS bpftrace-count bpftrace bpftrace-printf"
  # BCC compiles its program against the running kernel's headers at start: check once.
  if command -v funclatency-bpfcc >/dev/null; then
    if bcc_err=$(timeout 120 funclatency-bpfcc -d 1 "$HOT:add_step" 2>&1 >/dev/null); then
      TOOLS="$TOOLS funclatency"
    else
      say "BCC funclatency does not work on this kernel, skipped: $(printf '%s\n' "$bcc_err" | tail -1)"
    fi
  fi
fi
if [ -n "$ONLY_TOOLS" ]; then
  picked="none"
  for t in $ONLY_TOOLS; do
    case " $TOOLS uprof-bare perf-bare " in
      *" $t "*) [ "$t" = none ] || picked="$picked $t" ;;
      *) die "-t: '$t' is not a tool this run can run (available: $TOOLS uprof-bare perf-bare)" ;;
    esac
  done
  TOOLS=$picked
fi
RES=$OUT/results.tsv
printf 'rep\tclass\ttool\tn\tloop_ns\tloop_cpu_ns\telapsed_ns\tcmd_cpu_ms\tsamples\tdups\tlost\tmissing\tgaps\tbad\tbytes\tstatus\treport_ms\tnote\n' > "$RES"

kv() { printf '%s\n' "$2" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k {print $2}'; }
now_ns() { date +%s%N; }
# CPU time (user + system, ms) of every child this shell has waited for: the tool, and the
# workload it waited for. `times` runs in this shell, not in a $(...) subshell (a forked
# subshell starts with no children's time), so it writes to a file.
TIMES=$OUT/.times
children_cpu_ms() {  # sets CPU_MS; call it directly, never in $(...)
  times > "$TIMES"
  CPU_MS=$(awk 'NR == 2 {
         split($1, u, "m"); split($2, s, "m"); sub(/s$/, "", u[2]); sub(/s$/, "", s[2]);
         printf "%d\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 + 0.5 }' "$TIMES")
}

run_one() {  # rep class tool [n]
  local rep=$1 c=$2 tool=$3 n=$N
  [ "$c" = step ] && n=$N_STEP
  [ -n "${4:-}" ] && n=$4
  local base=$OUT/r$rep-$c-$tool data out err t0 t1 status=ok note=""
  out=$base.out; err=$base.err
  local samples="" dups="" lost="" missing="" gaps="" bad="" bytes="" c0 c1
  rm -f "$base".*.data "$base".*.data.old
  children_cpu_ms; c0=$CPU_MS
  t0=$(now_ns)
  case "$tool" in
    none)
      timeout -k 10 "$RUN_TIMEOUT" "$HOT" "$c" "$n" >"$out" 2>"$err" || status=fail ;;
    uprof|uprof-events|uprof-perf|uprof-pmu|uprof-base|uprof-perf-base|uprof-bare)
      data=$base.uprof.data
      local engine="--engine bpf --attach links" bin=$UPROF uargs=$UPROF_ARGS
      [ "$tool" = uprof-bare ] && uargs=""
      [ "$tool" = uprof-events ] && engine="--engine bpf --attach events"
      case "$tool" in *-base) bin=$UPROF_BASE engine="--engine bpf" ;; esac
      [ "${tool%-base}" = uprof-perf ] && engine="--engine perf --backend tracefs"
      [ "$tool" = uprof-pmu ] && engine="--engine perf --backend pmu"
      # --no-calibrate: the first run on a fresh boot would otherwise measure probe costs
      # first, which no other tool does (its CPU time would count in cmd_cpu_ms).
      # shellcheck disable=SC2086
      timeout -k 10 "$RUN_TIMEOUT" "$bin" record --no-calibrate $engine $uargs \
        -e "add_$c %di %si \$retval" -o "$data" -- "$HOT" "$c" "$n" >"$out" 2>"$err" || status=fail ;;
    perf|perf-bare)
      data=$base.perf.data
      local pargs=$PERF_ARGS pterm=$PERF_ENTRY_TERM
      [ "$tool" = perf-bare ] && pargs="" pterm=""
      # shellcheck disable=SC2086
      timeout -k 10 "$RUN_TIMEOUT" perf record $pargs -o "$data" -e "$GROUP:add_$c$pterm" -e "$GROUP:add_${c}__return" \
        -- "$HOT" "$c" "$n" >"$out" 2>"$err" || status=fail ;;
    perf-stat)
      timeout -k 10 "$RUN_TIMEOUT" perf stat -x, -o "$base.stat" -e "$GROUP:add_$c" -e "$GROUP:add_${c}__return" \
        -- "$HOT" "$c" "$n" >"$out" 2>"$err" || status=fail ;;
    bpftrace-count)
      timeout -k 10 "$RUN_TIMEOUT" bpftrace -c "$HOT $c $n" -e "
        uprobe:$HOT:add_$c { @entries = count(); }
        uretprobe:$HOT:add_$c { @returns = count(); }" \
        >"$out" 2>"$err" || status=fail ;;
    bpftrace)
      # The workload's stdout goes to bpftrace's; hot's lines are picked out of it.
      timeout -k 10 "$RUN_TIMEOUT" bpftrace -c "$HOT $c $n" -e "
        uprobe:$HOT:add_$c { @start[tid] = nsecs; }
        uretprobe:$HOT:add_$c /@start[tid]/ { @lat = hist(nsecs - @start[tid]); delete(@start[tid]); @calls = count(); }" \
        >"$out" 2>"$err" || status=fail ;;
    bpftrace-printf)
      data=$base.bpftrace.txt
      timeout -k 10 "$RUN_TIMEOUT" bpftrace -o "$data" -c "$HOT $c $n" -e "
        uprobe:$HOT:add_$c { @start[tid] = nsecs; @a[tid] = arg0; @b[tid] = arg1; }
        uretprobe:$HOT:add_$c /@start[tid]/ {
          printf(\"%d %d %d %d %d\\n\", tid, @a[tid], @b[tid], retval, nsecs - @start[tid]);
          delete(@start[tid]); delete(@a[tid]); delete(@b[tid]); }" \
        >"$out" 2>"$err" || status=fail ;;
    funclatency)
      # System-wide on the file's function: started first, stopped with SIGINT after hot.
      PYTHONUNBUFFERED=1 timeout -k 10 "$RUN_TIMEOUT" funclatency-bpfcc "$HOT:add_$c" >"$base.bcc" 2>"$err" &
      local bcc=$! waited=0
      while ! grep -q '^Tracing' "$base.bcc" 2>/dev/null && kill -0 $bcc 2>/dev/null && [ $waited -lt 600 ]; do
        sleep 0.1; waited=$((waited + 1))
      done
      "$HOT" "$c" "$n" >"$out" 2>>"$err" || status=fail
      kill -INT $bcc 2>/dev/null || true
      wait $bcc || true ;;
  esac
  t1=$(now_ns)
  children_cpu_ms; c1=$CPU_MS
  local loop_ns loop_cpu_ns calls
  loop_ns=$(awk '$1 == "loop_ns" {print $2}' "$out")
  loop_cpu_ns=$(awk '$1 == "loop_ns" {print $4}' "$out")
  calls=$(awk '$1 == "calls" {print $2}' "$out")
  [ "$calls" = "$n" ] || status=fail
  local report_ms=""
  case "$tool" in
    uprof|uprof-events|uprof-perf|uprof-pmu|uprof-base|uprof-perf-base|uprof-bare)
      if [ -f "$data" ]; then
        local chk
        chk=$(timeout 600 "$TB/check_uprof_data" "$data" "$n" 2>>"$err") || status=fail
        samples=$(kv samples "$chk"); dups=$(kv dups "$chk"); missing=$(kv missing "$chk")
        gaps=$(kv gaps "$chk"); bad=$(kv bad "$chk"); bytes=$(kv bytes "$chk")
        lost=$(sed -n 's/^uprof: .* events recorded, \([0-9,]*\) lost.*/\1/p' "$err" | tr -d ,)
        if [ "$rep" = 1 ]; then
          local r0; r0=$(now_ns)
          timeout 600 "$UPROF" report -i "$data" >/dev/null 2>&1 || true
          report_ms=$(( ($(now_ns) - r0) / 1000000 ))
        fi
        [ "$lost" = "$(kv lost "$chk")" ] || note="summary lost $lost != file LOST $(kv lost "$chk")"
        grep -q 'WARNING' "$err" && note="$note $(grep WARNING "$err" | head -1)"
        note="$note kernel=$(kv kernel "$chk")"
      else
        status=fail
      fi ;;
    perf|perf-bare)
      if [ -f "$data" ]; then
        local chk
        chk=$(timeout 900 perf script -i "$data" --ns -F tid,time,event,trace 2>>"$err" |
              "$TB/check_perf_script" "$n") || status=fail
        samples=$(kv samples "$chk"); dups=$(kv dups "$chk"); missing=$(kv missing "$chk")
        gaps=$(kv gaps "$chk"); bad=$(kv bad "$chk")
        [ "$(kv unordered "$chk")" = 0 ] || note="unordered=$(kv unordered "$chk")"
        lost=$(timeout 600 perf report -i "$data" --stats 2>/dev/null |
               awk '/ stats:$/ {ev = 1} ev && $1 == "LOST_SAMPLES" {s += $3} END {print s + 0}')
        bytes=$(stat -c %s "$data")
        note="$note $(grep -o 'Woken up [0-9]* times' "$err" | head -1)"
        if [ "$rep" = 1 ]; then
          local r0; r0=$(now_ns)
          timeout 900 perf report -i "$data" --stdio >/dev/null 2>&1 || true
          report_ms=$(( ($(now_ns) - r0) / 1000000 ))
        fi
      else
        status=fail
      fi ;;
    perf-stat)
      # "count,,event,..." lines: the entry and return probes' counts.
      samples=$(awk -F, -v g="$GROUP:add_$c" '$3 == g || $3 == g "__return" {s += $1} END {print s + 0}' "$base.stat" 2>/dev/null)
      missing=$(( 2 * n - ${samples:-0} )); dups=0; lost=0; gaps=""; bad=""; bytes=""
      rm -f "$base.stat"
      [ "${samples:-0}" -gt 0 ] || status=fail ;;
    bpftrace-count)
      local ke kr
      ke=$(awk '/^@entries:/ {print $2}' "$out"); kr=$(awk '/^@returns:/ {print $2}' "$out")
      samples=$(( ${ke:-0} + ${kr:-0} )); missing=$(( 2 * n - samples )); dups=0; lost=0; gaps=""; bad=""; bytes=""
      [ -n "$ke" ] && [ -n "$kr" ] || status=fail ;;
    bpftrace)
      # @calls: N + 0 (hot's loop) when every call was paired; missing = 2N - 2 x calls.
      local k; k=$(awk '/^@calls:/ {print $2}' "$out")
      samples=$(( 2 * ${k:-0} )); missing=$(( 2 * n - samples )); dups=0; lost=0; gaps=""; bad=""; bytes=""
      [ -n "$k" ] || status=fail ;;
    bpftrace-printf)
      # One line per call: "tid a b retval ns". Every a in 0..n-1 once, retval = a + b.
      if [ -f "$data" ]; then
        local chk
        chk=$(awk -v n="$n" 'NF == 5 && $1 ~ /^[0-9]+$/ {
                 k++; if (seen[$2]++) d++; if ($4 != $2 + $3) w++; if ($2 < 0 || $2 >= n) w++ }
               END {printf "calls=%d dups=%d bad=%d\n", k, d + 0, w + 0}' "$data")
        local k; k=$(kv calls "$chk")
        dups=$((2 * $(kv dups "$chk"))); samples=$((2 * k)); bad=$(kv bad "$chk"); gaps=""
        missing=$((2 * n - (samples - dups)))
        lost=$(sed -n 's/.*Lost \([0-9]*\) events.*/\1/p' "$err" | awk '{s += $1} END {print s + 0}')
        bytes=$(stat -c %s "$data")
      else
        status=fail
      fi ;;
    funclatency)
      # The histogram's counts (lines "  lo -> hi : count |***|"), summed.
      local k; k=$(awk -F: '/->/ {split($2, a, "|"); s += a[1]} END {print s + 0}' "$base.bcc")
      samples=$(( 2 * k )); missing=$(( 2 * n - samples )); dups=0; lost=0; gaps=""; bad=""; bytes=""
      [ "$k" -gt 0 ] || status=fail
      rm -f "$base.bcc" ;;
  esac
  # (perf record renames an existing output to .old: never leave one behind)
  [ -n "${data:-}" ] && rm -f "$data.old"
  [ "$KEEP" = 1 ] || rm -f "${data:-/nonexistent}"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$c" "$tool" "$n" \
    "${loop_ns:-}" "${loop_cpu_ns:-}" "$((t1 - t0))" "$((c1 - c0))" "$samples" "$dups" "$lost" "$missing" "$gaps" "$bad" \
    "$bytes" "$status" "$report_ms" "$(printf '%s' "$note" | xargs)" >> "$RES"
  printf '   rep %s %-5s %-9s loop %6.2f s (cpu %6.2f s)  %s%s\n' "$rep" "$c" "$tool" \
    "$(awk -v x="${loop_ns:-0}" 'BEGIN {print x / 1e9}')" "$(awk -v x="${loop_cpu_ns:-0}" 'BEGIN {print x / 1e9}')" \
    "$status" "${samples:+  samples=$samples lost=$lost missing=$missing dups=$dups bad=$bad}" >&2
  [ "$status" = ok ] || { echo "     see $err" >&2; tail -3 "$err" | sed 's/^/     | /' >&2; }
}

say "machine: $(uname -r), $(nproc) CPUs, $(perf --version), load $(cut -d' ' -f1-3 /proc/loadavg)"
say "uprof: $("$UPROF" --version 2>&1 | head -1); tree $(git describe --always --dirty 2>/dev/null || echo '?')"
[ -n "${UPROF_BASE:-}" ] && say "UPROF_BASE: $UPROF_BASE ($("$UPROF_BASE" --version 2>&1 | head -1))"
say "runs: $REPS reps x classes ($CLASSES) x tools ($TOOLS); N=$N (step: $N_STEP); results in $RES"
load_start=$(cut -d' ' -f1 /proc/loadavg)
# Each tool's own fixed CPU cost (start-up, attach, exit), to take out of its CPU per event:
# three runs with 1000 calls.
first_class=${CLASSES%% *}
for k in 1 2 3; do
  for tool in $TOOLS; do
    run_one "calib$k" "$first_class" "$tool" 1000
  done
done
for rep in $(seq 1 "$REPS"); do
  for c in $CLASSES; do
    for tool in $TOOLS; do
      run_one "$rep" "$c" "$tool"
    done
  done
done
load_end=$(cut -d' ' -f1 /proc/loadavg)

# ---- summary -----------------------------------------------------------------------------
python3 - "$RES" "$load_start" "$load_end" "$UPROF_ARGS" "$PERF_ARGS${PERF_ENTRY_TERM:+ (entry event $PERF_ENTRY_TERM)}" <<'EOF'
import csv, statistics, sys
path, load0, load1, uargs, pargs = sys.argv[1:6]
allrows = list(csv.DictReader(open(path), delimiter="\t"))
calib = [r for r in allrows if r["rep"].startswith("calib") and r["status"] == "ok"]
rows = [r for r in allrows if not r["rep"].startswith("calib")]
ok = [r for r in rows if r["status"] == "ok"]
# A tool's fixed CPU (ms): its CPU beyond the workload's loop in a 1000-call run.
def own_cpu_ms(r): return int(r["cmd_cpu_ms"]) - int(r["loop_cpu_ns"]) / 1e6
fixed_cpu = {t: statistics.median([own_cpu_ms(r) for r in calib if r["tool"] == t])
             for t in {r["tool"] for r in calib}}
base = {(r["rep"], r["class"]): r for r in ok if r["tool"] == "none"}
classes = list(dict.fromkeys(r["class"] for r in rows))
tools = [t for t in dict.fromkeys(r["tool"] for r in rows) if t != "none"]
label = {"uprof": "uprof record (bpf engine, multi-uprobe links)" + (f" {uargs}" if uargs else ""),
         "uprof-events": "uprof record (bpf engine, uprobe-PMU events)" + (f" {uargs}" if uargs else ""),
         "uprof-perf": "uprof record --engine perf" + (f" {uargs}" if uargs else ""),
         "uprof-pmu": "uprof record --engine perf --backend pmu" + (f" {uargs}" if uargs else ""),
         "uprof-base": "UPROF_BASE record (bpf engine)" + (f" {uargs}" if uargs else ""),
         "uprof-perf-base": "UPROF_BASE record --engine perf" + (f" {uargs}" if uargs else ""),
         "uprof-bare": "uprof record (bpf engine, links), without UPROF_ARGS",
         "perf": "perf record" + (f" {pargs}" if pargs else ""),
         "perf-bare": "perf record, without PERF_ARGS",
         "perf-stat": "floor: perf stat (the trap, counted)", "bpftrace-count": "floor: bpftrace count()",
         "bpftrace": "bpftrace uprobe+uretprobe hist()", "bpftrace-printf": "bpftrace printf per call",
         "funclatency": "BCC funclatency"}

def per_hit(r, key):
    b = base.get((r["rep"], r["class"]))
    if not b or not r[key] or not b[key]: return None
    return (int(r[key]) - int(b[key])) / (2 * int(r["n"]))

stats = {}
for c in classes:
    for t in tools:
        rs = [r for r in ok if r["class"] == c and r["tool"] == t]
        allr = [r for r in rows if r["class"] == c and r["tool"] == t]
        if not allr: continue
        cpu = [x for x in (per_hit(r, "loop_cpu_ns") for r in rs) if x is not None]
        wall = [x for x in (per_hit(r, "loop_ns") for r in rs) if x is not None]
        fixed = [(int(r["elapsed_ns"]) - int(r["loop_ns"])) / 1e9 for r in rs if r["loop_ns"]]
        # The tool's CPU per recorded event: its CPU beyond the workload's loop and its fixed cost.
        tool_ns = [(own_cpu_ms(r) - fixed_cpu.get(t, 0)) * 1e6 / int(r["samples"])
                   for r in rs if r["samples"] and int(r["samples"]) > 0]
        def tot(k): return sum(int(r[k] or 0) for r in rs)
        uniq = tot("samples") - tot("dups")
        stats[c, t] = dict(
            n=rs[0]["n"] if rs else allr[0]["n"], runs=len(rs), failed=len(allr) - len(rs),
            cpu=cpu, wall=wall, fixed=fixed, tool_ns=tool_ns, samples=tot("samples"), lost=tot("lost"), missing=tot("missing"),
            dups=tot("dups"), gaps=tot("gaps"), bad=tot("bad"),
            report=[int(r["report_ms"]) / 1e3 for r in rs if r.get("report_ms")],
            bpe=(tot("bytes") / uniq) if uniq else None,
            dup_runs=sum(1 for r in rs if int(r["dups"] or 0) > 0),
            lost_runs=sum(1 for r in rs if int(r["missing"] or 0) > 0))

def med(v): return statistics.median(v) if v else None
def fmt_range(v):
    if not v: return "-"
    return f"{med(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})"
def ratio_uprof(c, t, key):
    u = stats.get((c, "uprof"))
    s = stats.get((c, t))
    if not u or not s or not s[key] or not u[key] or med(u[key]) <= 0: return "-"
    return f"{med(s[key]) / med(u[key]):.2f}"
def ratio(c, t, key):
    p = stats.get((c, "perf"))
    s = stats.get((c, t))
    if t == "perf" or not p or not s or not s[key] or not p[key] or med(p[key]) <= 0: return "-"
    return f"{med(s[key]) / med(p[key]):.2f}"

print()
print(f"Probe cost per hit (entry + return probes: 2 hits per call; ns per call = 2 x these), "
      f"median (min-max) over repetitions. Machine load average {load0} at start, {load1} at end.")
print()
print("| class (first insn) | N calls | tool | ns/hit added, CPU time | ns/hit added, wall time | "
      "x perf (CPU) | x uprof (CPU) | x perf (wall) | tool's own CPU, ns/event | fixed s (start-up + finish) | report s |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
insn = {"step": "step (lea, single-stepped)", "push": "push (push %rbp, emulated)", "nop5": "nop5 (nopl, optimized)",
        "cet": "cet (endbr64 + push %rbp: uprof at the push, the others at endbr64)"}
for c in classes:
    bcpu = [int(r["loop_cpu_ns"]) / int(r["n"]) for r in ok if r["class"] == c and r["tool"] == "none"]
    for t in tools:
        s = stats.get((c, t))
        if not s: continue
        fx = f"{med(s['fixed']):.2f}" if s["fixed"] else "-"
        rp = f"{med(s['report']):.2f}" if s["report"] else "-"
        print(f"| {insn.get(c, c)} | {int(s['n']):,} | {label[t]} | {fmt_range(s['cpu'])} | {fmt_range(s['wall'])} | "
              f"{ratio(c, t, 'cpu')} | {ratio_uprof(c, t, 'cpu')} | {ratio(c, t, 'wall')} | {fmt_range(s['tool_ns'])} | {fx} | {rp} |")
    if bcpu:
        print(f"| {insn.get(c, c)} | | (unprobed call: {med(bcpu):.1f} ns CPU) | | | | | | | | |")
print()
print("tool's own CPU = (CPU of the whole command - the workload loop's CPU - the tool's fixed CPU) / samples;")
print("fixed CPU (median of three 1000-call runs): " +
      ", ".join(f"{label[t]} {fixed_cpu[t]:.0f} ms" for t in tools if t in fixed_cpu) + ".")
print()
print("Exactness and size, summed over all repetitions (expected: 2N samples per run).")
print()
print("| class | tool | runs ok | samples | lost (tool's count) | missing (2N - unique) | duplicates (runs with any) "
      "| sequence gaps | wrong values | bytes/event |")
print("|---|---|---|---|---|---|---|---|---|---|")
for c in classes:
    for t in tools:
        s = stats.get((c, t))
        if not s: continue
        bpe = f"{s['bpe']:.1f}" if s["bpe"] else "-"
        runs = f"{s['runs']}" + (f" ({s['failed']} failed)" if s["failed"] else "")
        print(f"| {c} | {label[t]} | {runs} | {s['samples']:,} | {s['lost']:,} | {s['missing']:,} ({s['lost_runs']} runs) "
              f"| {s['dups']:,} ({s['dup_runs']}) | {s['gaps']:,} | {s['bad']:,} | {bpe} |")
failed = [r for r in rows if r["status"] != "ok"]
if failed:
    print()
    print(f"{len(failed)} run(s) failed: " + ", ".join(f"rep {r['rep']} {r['class']} {r['tool']}" for r in failed))
EOF
say "raw results: $RES"
