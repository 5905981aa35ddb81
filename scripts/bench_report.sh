#!/usr/bin/env bash
# bench_report.sh: how long `uprof report` takes on a 10,000,000-event file, next to
# `perf report --stdio` on the perf.data file of the same workload, and how much memory
# each needs; and that uprof report's memory does not grow with the number of events.
#
#   scripts/bench_report.sh [-r REPS] [-n CALLS] [-s SMALL_CALLS] [--keep]
#
#   -r REPS         timed repetitions of every command (default 3, or $R)
#   -n CALLS        calls in the big recording (default 5000000: 10M events, entry + return)
#   -s SMALL_CALLS  calls in the small recording (default 500000: 1M events), for the
#                   memory-versus-events comparison
#   --keep          keep the data files (same as KEEP=1); they are ~13 B/event for uprof
#                   and ~96 B/event for perf, i.e. ~1 GB for perf's 10M-event file
#
# Environment: BUILD_DIR (default build-rbench; the data files go to BUILD_DIR/bench-report),
# UPROF (a prebuilt uprof: skips the build; WORKLOAD then names the fixture, default
# BUILD_DIR/tests/fixtures/x86_64/workload), UPROF_MMAP (uprof record -m, default 4096 pages
# per CPU, so that nothing is lost), RECORD_TIMEOUT (s per recording, default 1200),
# REPORT_TIMEOUT (s per timed command, default 1800), KEEP=1, R=REPS.
#
# What it does:
#  1. Records `workload calls CALLS` (add(i, 10*i) CALLS times) with
#       uprof record -e 'add %di %si $retval' -m $UPROF_MMAP
#     and with
#       perf probe -x BIN add a=%di b=%si; perf probe -x BIN add%return r=%ax
#       perf record -e probe_workload:add -e probe_workload:add__return -m 1024
#     and the same with SMALL_CALLS. The probes are deleted on every exit path. Each
#     file's event count is checked against 2 x calls; anything lost is reported.
#  2. Times, interleaved (rep -> command), with /usr/bin/time -f '%e %M %U %S' (wall s,
#     peak RSS KiB, user s, sys s), output to /dev/null:
#       uprof report FILE;  uprof report FILE --format json
#       perf report --stdio -i perf.data;  perf script -i perf.data (for information)
#     on the big files, and the same report commands on the small files.
#  3. Prints Markdown tables: median (min-max) wall seconds, CPU seconds, peak RSS, file
#     size, events, bytes per event, ratio to perf report; uprof's peak RSS at
#     SMALL_CALLS vs CALLS; and whether uprof report takes at most 0.25x perf report's time.
#
# The data files are read from the page cache (an untimed pass over each file first
# counts its events and warms the cache). Needs root, x86-64, perf, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

REPS=${R:-3}
CALLS=5000000
SMALL=500000
KEEP=${KEEP:-0}
while [ $# -gt 0 ]; do
  case "$1" in
    -r) REPS=$2; shift 2 ;;
    -n) CALLS=$2; shift 2 ;;
    -s) SMALL=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_report: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-build-rbench}
UPROF_MMAP=${UPROF_MMAP:-4096}
RECORD_TIMEOUT=${RECORD_TIMEOUT:-1200}
REPORT_TIMEOUT=${REPORT_TIMEOUT:-1800}
OUT=$ROOT/$BUILD_DIR/bench-report
GROUP=probe_workload

die() { echo "bench_report: $*" >&2; exit 1; }
say() { echo "== $*" >&2; }

[ "$(id -u)" = 0 ] || die "needs root (uprobes)"
[ "$(uname -m)" = x86_64 ] || die "x86-64 only (the probes read %di, %si and %ax)"
for t in perf cmake timeout python3; do
  command -v "$t" >/dev/null || die "'$t' is not installed"
done
if [ ! -x /usr/bin/time ]; then
  say "installing Debian's 'time' package (/usr/bin/time)"
  timeout 600 apt-get install -y -qq time >/dev/null 2>&1 ||
    { timeout 600 apt-get update -qq >/dev/null 2>&1 && timeout 600 apt-get install -y -qq time >/dev/null 2>&1; } ||
    die "could not install the 'time' package"
fi

# ---- cleanup: never leave perf probes behind; data files go unless KEEP=1 -------------------
probes_added=0
cleanup() {
  local rc=$?
  if [ "$probes_added" = 1 ]; then
    timeout 60 perf probe -q -d "$GROUP:*" >/dev/null 2>&1 || true
    if grep -q "^[pr]:$GROUP/" /sys/kernel/tracing/uprobe_events 2>/dev/null; then
      echo "bench_report: WARNING: $GROUP probes are still installed (perf probe -d '$GROUP:*')" >&2
    fi
  fi
  if [ "$KEEP" != 1 ] && [ -d "$OUT" ]; then
    rm -f "$OUT"/*.data "$OUT"/*.data.old
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- build ----------------------------------------------------------------------------------
mkdir -p "$OUT"
rm -f "$OUT"/*.data "$OUT"/*.data.old
if [ -n "${UPROF:-}" ]; then
  [ -x "$UPROF" ] || die "UPROF=$UPROF is not executable"
  WORKLOAD_SRC=${WORKLOAD:-$ROOT/$BUILD_DIR/tests/fixtures/x86_64/workload}
  say "using prebuilt $UPROF"
else
  say "building uprof and the fixtures in $BUILD_DIR"
  built=0
  for attempt in 1 2 3; do
    if timeout 1800 cmake -S . -B "$BUILD_DIR" -DUPROF_TESTS=ON -DUPROF_BENCH=OFF >/dev/null &&
       timeout 1800 cmake --build "$BUILD_DIR" -j"$(nproc)" --target uprof uprof_fixtures >"$OUT/build.log" 2>&1; then
      built=1; break
    fi
    # Others edit the tree at the same time: a half-edited file breaks the build for a while.
    echo "bench_report: build failed (attempt $attempt, see $OUT/build.log); retrying in 60 s" >&2
    sleep 60
  done
  [ "$built" = 1 ] || die "uprof does not build (see $OUT/build.log)"
  UPROF=$ROOT/$BUILD_DIR/uprof
  WORKLOAD_SRC=$ROOT/$BUILD_DIR/tests/fixtures/x86_64/workload
fi
[ -x "$WORKLOAD_SRC" ] || die "no workload fixture at $WORKLOAD_SRC"
# A private copy: a rebuild of the fixture cannot change the probed file (uprobes are bound
# to an inode), and perf names the probe group after it (probe_workload).
W=$OUT/workload
cp "$WORKLOAD_SRC" "$W"

# ---- recordings -----------------------------------------------------------------------------
record_uprof() {  # calls file
  local n=$1 f=$OUT/$2 log=$OUT/$2.record.log
  say "uprof record: workload calls $n ($((2 * n)) events), -m $UPROF_MMAP"
  timeout -k 10 "$RECORD_TIMEOUT" "$UPROF" record -e 'add %di %si $retval' -m "$UPROF_MMAP" -o "$f" \
    -- "$W" calls "$n" >"$log.out" 2>"$log" || { tail -5 "$log" >&2; die "uprof record failed (see $log)"; }
  grep -qx "calls $n" "$log.out" || die "workload did not print 'calls $n' under uprof record"
  grep '^uprof: .* events recorded' "$log" | sed 's/^/   /' >&2 || true
}
record_perf() {  # calls file
  local n=$1 f=$OUT/$2 log=$OUT/$2.record.log
  say "perf record: workload calls $n ($((2 * n)) events), -m 1024"
  timeout -k 10 "$RECORD_TIMEOUT" perf record -e "$GROUP:add" -e "$GROUP:add__return" -m 1024 -o "$f" \
    -- "$W" calls "$n" >"$log.out" 2>"$log" || { tail -5 "$log" >&2; die "perf record failed (see $log)"; }
  grep -qx "calls $n" "$log.out" || die "workload did not print 'calls $n' under perf record"
  grep -E 'Captured and wrote|lost|LOST' "$log" | sed 's/^/   /' >&2 || true
}

say "machine: $(uname -r), $(nproc) CPUs, $(perf --version), load $(cut -d' ' -f1-3 /proc/loadavg)"
say "uprof $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?') ($UPROF)"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
record_uprof "$CALLS" big.uprof.data
record_uprof "$SMALL" small.uprof.data

if grep -q "^[pr]:$GROUP/" /sys/kernel/tracing/uprobe_events 2>/dev/null; then
  # Ours (a killed earlier run) probe the copy in $OUT; anyone else's are left alone.
  if grep "^[pr]:$GROUP/" /sys/kernel/tracing/uprobe_events | grep -qv " $W:"; then
    grep "^[pr]:$GROUP/" /sys/kernel/tracing/uprobe_events >&2
    die "$GROUP probes on another file are installed (someone else's run?); remove them with perf probe -d '$GROUP:*' if stale"
  fi
  say "removing stale $GROUP probes of an earlier run"
  timeout 60 perf probe -q -d "$GROUP:*" >/dev/null 2>&1 || true
fi
probes_added=1
timeout 120 perf probe -q -x "$W" add a=%di b=%si >/dev/null || die "perf probe -x $W add a=%di b=%si failed"
timeout 120 perf probe -q -x "$W" 'add%return' r=%ax >/dev/null || die "perf probe -x $W add%return r=%ax failed"
record_perf "$CALLS" big.perf.data
record_perf "$SMALL" small.perf.data
timeout 60 perf probe -q -d "$GROUP:*" >/dev/null 2>&1 || true
probes_added=0

# ---- what each file holds (untimed; also brings the files into the page cache) ----------------
INFO=$OUT/files.tsv
printf 'file\tbytes\tevents\tlost\texpected\n' >"$INFO"
for size in big small; do
  n=$CALLS; [ "$size" = small ] && n=$SMALL
  f=$OUT/$size.uprof.data
  read -r ev lost < <(timeout -k 10 "$REPORT_TIMEOUT" "$UPROF" report "$f" --format json --hist none 2>/dev/null |
    python3 -c 'import json, sys; r = json.load(sys.stdin)["recording"]; print(r["samples"], r["lost"])') ||
    die "uprof report $f --format json failed"
  printf '%s\t%s\t%s\t%s\t%s\n' "$size.uprof.data" "$(stat -c %s "$f")" "$ev" "$lost" "$((2 * n))" >>"$INFO"
  f=$OUT/$size.perf.data
  # SAMPLE events, and what perf says it lost: LOST records (their sample counts are in
  # perf report's "Total Lost Samples") and LOST_SAMPLES records.
  stats=$(timeout -k 10 "$REPORT_TIMEOUT" perf report --stats -i "$f" 2>/dev/null) || die "perf report --stats -i $f failed"
  ev=$(printf '%s\n' "$stats" | awk '/^Aggregated stats:/ {a = 1} a && $1 == "SAMPLE" && $2 == "events:" {print $3; exit}')
  lost=$(printf '%s\n' "$stats" | awk '/^Aggregated stats:/ {a = 1} /stats:$/ && !/^Aggregated/ {a = 0}
         a && ($1 == "LOST" || $1 == "LOST_SAMPLES") && $2 == "events:" {s += $3} END {print s + 0}')
  printf '%s\t%s\t%s\t%s\t%s\n' "$size.perf.data" "$(stat -c %s "$f")" "${ev:-0}" "$lost" "$((2 * n))" >>"$INFO"
done
while IFS=$'\t' read -r f bytes ev lost exp; do
  [ "$f" = file ] && continue
  if [ "$ev" != "$exp" ] || [ "$lost" != 0 ]; then
    echo "bench_report: NOTE: $f holds $ev events of $exp expected ($lost lost)" >&2
  fi
done <"$INFO"

# ---- timed runs -------------------------------------------------------------------------------
RES=$OUT/results.tsv
printf 'rep\tcommand\tsize\twall_s\trss_kib\tuser_s\tsys_s\tstatus\n' >"$RES"
run_timed() {  # rep label size cmd...
  local rep=$1 label=$2 size=$3; shift 3
  local tf=$OUT/.time err=$OUT/.err status=ok
  rm -f "$tf"
  timeout -k 10 "$REPORT_TIMEOUT" /usr/bin/time -f '%e %M %U %S' -o "$tf" "$@" >/dev/null 2>"$err" || status=fail
  local wall rss user sys
  read -r wall rss user sys < <(tail -1 "$tf" 2>/dev/null || echo "- - - -") || true
  case "$wall" in [0-9]*) ;; *) status=fail wall="" rss="" user="" sys="" ;; esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$label" "$size" "$wall" "$rss" "$user" "$sys" "$status" >>"$RES"
  printf '   rep %s %-26s %-5s %8s s %9s KiB  %s\n' "$rep" "$label" "$size" "${wall:--}" "${rss:--}" "$status" >&2
  [ "$status" = ok ] || { echo "     $*" >&2; tail -3 "$err" | sed 's/^/     | /' >&2; }
}
say "timing: $REPS repetitions, interleaved; results in $RES"
for rep in $(seq 1 "$REPS"); do
  for size in big small; do
    run_timed "$rep" "uprof report" "$size" "$UPROF" report "$OUT/$size.uprof.data"
    run_timed "$rep" "uprof report --format json" "$size" "$UPROF" report "$OUT/$size.uprof.data" --format json
    run_timed "$rep" "perf report --stdio" "$size" perf report --stdio -i "$OUT/$size.perf.data"
    [ "$size" = big ] && run_timed "$rep" "perf script" "$size" perf script -i "$OUT/$size.perf.data"
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- summary ----------------------------------------------------------------------------------
python3 - "$RES" "$INFO" "$load_start" "$load_end" "$CALLS" "$SMALL" "$UPROF_MMAP" <<'EOF'
import csv, statistics, sys
res, info, load0, load1, calls, small, mmap = sys.argv[1:8]
rows = list(csv.DictReader(open(res), delimiter="\t"))
files = {r["file"]: r for r in csv.DictReader(open(info), delimiter="\t")}
def med(v): return statistics.median(v) if v else None
def runs(cmd, size, key):
    return [float(r[key]) for r in rows if r["command"] == cmd and r["size"] == size and r["status"] == "ok"]
def cpu(cmd, size):
    return [float(r["user_s"]) + float(r["sys_s"]) for r in rows
            if r["command"] == cmd and r["size"] == size and r["status"] == "ok"]
def mib(kib): return f"{kib / 1024:,.1f}"
cmds = ["uprof report", "uprof report --format json", "perf report --stdio", "perf script"]
def file_of(cmd, size): return f"{size}.{'uprof' if cmd.startswith('uprof') else 'perf'}.data"

print()
print(f"Report time on the same workload (`workload calls N`: entry + return of add, two values on entry, "
      f"the return value), {len({r['rep'] for r in rows})} interleaved repetitions, output to /dev/null, "
      f"files in the page cache. Load average {load0} at start, {load1} at end.")
print()
print("| command | events in file | file size | bytes/event | wall s, median (min-max) | CPU s (user+sys), median "
      "| peak RSS MiB, median (max) | x perf report, wall | x perf report, CPU |")
print("|---|---|---|---|---|---|---|---|---|")
summary = {}
for size in ["big", "small"]:
    pw = med(runs("perf report --stdio", size, "wall_s"))
    pc = med(cpu("perf report --stdio", size))
    for cmd in cmds:
        w = runs(cmd, size, "wall_s")
        if not w and not any(r["command"] == cmd and r["size"] == size for r in rows): continue
        f = files[file_of(cmd, size)]
        ev, nbytes = int(f["events"]), int(f["bytes"])
        rss = runs(cmd, size, "rss_kib")
        c = cpu(cmd, size)
        nfail = sum(1 for r in rows if r["command"] == cmd and r["size"] == size and r["status"] != "ok")
        wall = f"{med(w):.2f} ({min(w):.2f}-{max(w):.2f})" if w else "-"
        if nfail: wall += f", {nfail} failed"
        rw = f"{med(w) / pw:.3f}" if w and pw and cmd != "perf report --stdio" else "-"
        rc = f"{med(c) / pc:.3f}" if c and pc and cmd != "perf report --stdio" else "-"
        lost = f" ({int(f['lost']):,} lost)" if int(f["lost"]) else ""
        print(f"| `{cmd}` | {ev:,}{lost} | {nbytes / 1e6:,.1f} MB | {nbytes / ev if ev else 0:.1f} | {wall} | "
              f"{med(c):.2f} | {mib(med(rss)) if rss else '-'} ({mib(max(rss)) if rss else '-'}) | {rw} | {rc} |"
              if c else f"| `{cmd}` | {ev:,}{lost} | {nbytes / 1e6:,.1f} MB | - | {wall} | - | - | - | - |")
        summary[cmd, size] = dict(wall=med(w), rss=max(rss) if rss else None, ev=ev)
print()
print(f"uprof record used -m {mmap} (pages per CPU), perf record -m 1024. Expected events: "
      f"{2 * int(calls):,} (big), {2 * int(small):,} (small).")
for name, f in files.items():
    if int(f["events"]) != int(f["expected"]) or int(f["lost"]):
        print(f"NOTE: {name} holds {int(f['events']):,} of {int(f['expected']):,} events, {int(f['lost']):,} lost.")
print()
print("Memory against events (peak RSS, max over repetitions):")
print()
print("| command | small file: events | peak RSS MiB | big file: events | peak RSS MiB | big / small |")
print("|---|---|---|---|---|---|")
for cmd in cmds[:3]:
    s, b = summary.get((cmd, "small")), summary.get((cmd, "big"))
    if not s or not b or not s["rss"] or not b["rss"]: continue
    print(f"| `{cmd}` | {s['ev']:,} | {mib(s['rss'])} | {b['ev']:,} | {mib(b['rss'])} | {b['rss'] / s['rss']:.2f} |")
print()
for cmd in cmds[:2]:
    u, p = summary.get((cmd, "big")), summary.get(("perf report --stdio", "big"))
    if not u or not p or not u["wall"] or not p["wall"]:
        print(f"`{cmd}`: no complete measurement"); continue
    r = u["wall"] / p["wall"]
    print(f"`{cmd}` on {u['ev']:,} events: {u['wall']:.2f} s vs `perf report --stdio` {p['wall']:.2f} s "
          f"(median wall) = {r:.3f}x: {'meets' if r <= 0.25 else 'does NOT meet'} the 0.25x target; "
          f"uprof peak RSS {mib(u['rss'])} MiB.")
EOF
say "raw results: $RES, $INFO"
[ "$KEEP" = 1 ] && say "data files kept in $OUT" || true
