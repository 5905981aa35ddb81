#!/usr/bin/env bash
# drain_flood.sh: what `uprof record` costs when probe hits come faster than it can
# write them: `uprof record -a -e libc:malloc` beside a program whose threads call
# malloc flat out (bench/targets/malloc_flood.c), stopped by --duration and by SIGINT.
# Per run: the whole command's wall time, how long it took to exit after the stop (the
# deadline is taken as DUR after the data file appeared, which is when the probes are
# on), its peak RSS and CPU time (/usr/bin/time -v), and its accounting from the
# summary line: recorded + lost must equal the kernel's count. A run that has not
# ended LIMIT seconds (default 120) after it began is killed (SIGKILL).
#
#   scripts/drain_flood.sh [-r REPS] [-t THREADS] [-d SEC] [-u UPROF] [-- EXTRA RECORD OPTIONS]
#
#   -r REPS     runs of each stop (default 3)
#   -t THREADS  malloc threads (default 2)
#   -d SEC      recording length, --duration and time before SIGINT (default 2)
#   -u UPROF    the uprof to measure (default build/uprof)
#   -- ...      passed to `uprof record` (e.g. --buffer-size 8M, --engine perf, -m 256)
#
# Needs root (uprobes), cc, /usr/bin/time. The program is libc's malloc: every process on
# the machine that calls it takes the probe's trap while uprof records (-a).
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=3
THREADS=2
DUR=2
UPROF=build/uprof
LIMIT=${LIMIT:-120}  # seconds before a run that does not stop is killed (SIGKILL)
while [ $# -gt 0 ]; do
  case "$1" in
    -r) REPS=$2; shift 2 ;;
    -t) THREADS=$2; shift 2 ;;
    -d) DUR=$2; shift 2 ;;
    -u) UPROF=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "drain_flood: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
EXTRA=("$@")
[ "$(id -u)" = 0 ] || { echo "drain_flood: needs root (uprobes)" >&2; exit 1; }
[ -x "$UPROF" ] || { echo "drain_flood: no uprof at $UPROF (scripts/build.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "drain_flood: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

work=$(mktemp -d /tmp/uprof-flood.XXXXXX)
flood_pid=""
cleanup() {
  [ -n "$flood_pid" ] && kill "$flood_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cc -O2 -pthread -o "$work/malloc_flood" bench/targets/malloc_flood.c
LIBC=$(ldd "$work/malloc_flood" | awk '/libc\.so/ {print $3}')

# One recording; $1 = duration or sigint. Prints a row.
run() {
  local how=$1 out=$work/flood.data log=$work/time.log err=$work/err.log
  "$work/malloc_flood" "$THREADS" $((DUR * 4 + 30)) >/dev/null &
  flood_pid=$!
  sleep 0.3
  local args=(record -a -o "$out" -e "$LIBC:malloc" --no-calibrate "${EXTRA[@]}")
  [ "$how" = duration ] && args+=(--duration "$DUR")
  local t0 t_stop t_end up=""
  rm -f "$out"
  t0=$(date +%s.%N)
  /usr/bin/time -v -o "$log" "$UPROF" "${args[@]}" 2>"$err" >/dev/null &
  local tp=$!
  # time's child is uprof; a run that does not stop is killed after LIMIT seconds.
  while [ -z "${up:-}" ] && kill -0 "$tp" 2>/dev/null; do
    up=$(pgrep -P "$tp" || true)
    sleep 0.02
  done
  # (The watchdog leaves as soon as uprof is gone: no stale kill of a reused pid.)
  ( for _ in $(seq $((LIMIT * 10))); do sleep 0.1; kill -0 "$up" 2>/dev/null || exit 0; done
    kill -KILL "$up" 2>/dev/null ) &
  local watchdog=$!
  # Recording from when the data file exists (after the probes went on; --duration
  # counts from about then too).
  while [ ! -s "$out" ] && kill -0 "$up" 2>/dev/null; do sleep 0.02; done
  local t_rec
  t_rec=$(date +%s.%N)
  if [ "$how" = duration ]; then
    t_stop=$(echo "$t_rec + $DUR" | bc)
  else
    sleep "$DUR"
    t_stop=$(date +%s.%N)
    kill -INT "$up" 2>/dev/null || true  # as `kill -INT` from another terminal
  fi
  wait "$tp" || true
  t_end=$(date +%s.%N)
  wait "$watchdog" 2>/dev/null || true
  kill "$flood_pid" 2>/dev/null || true
  wait "$flood_pid" 2>/dev/null || true
  flood_pid=""
  python3 - "$how" "$t0" "$t_stop" "$t_end" "$log" "$err" "$UPROF" "$out" <<'EOF'
import re, subprocess, sys
how, t0, t_stop, t_end, log, err, uprof, out = sys.argv[1:]
t0, t_stop, t_end = float(t0), float(t_stop), float(t_end)
tv = open(log).read()
rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", tv).group(1))
user = float(re.search(r"User time \(seconds\): ([\d.]+)", tv).group(1))
sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", tv).group(1))
e = open(err).read()
m = re.search(r"([\d,]+) events recorded, ([\d,]+) lost \(kernel counted ([\d,]+)\)", e)
if not m:
    print(f"| {how} | {t_end - t0:.2f} | - | {rss_kb / 1024:.0f} | {user + sys_:.2f} | no summary line: {e.strip()[-200:]} |")
    sys.exit(0)
rec, lost, kern = (int(x.replace(",", "")) for x in m.groups())
rep = subprocess.run([uprof, "report", "-i", out, "--hist", "none"], capture_output=True, text=True)
ok = "yes" if rec + lost == kern else f"NO ({rec + lost - kern:+,})"
print(f"| {how} | {t_end - t0:.2f} | {t_end - t_stop:.2f} | {rss_kb / 1024:.0f} | {user + sys_:.2f} | "
      f"{rec:,} | {lost:,} | {kern:,} | {ok} | {'reads' if rep.returncode == 0 else 'FAILS: ' + rep.stderr.strip()[:80]} |")
EOF
}

echo "drain_flood: $UPROF record -a -e libc:malloc ${EXTRA[*]}, $THREADS malloc threads, ${DUR} s, load $(cut -d' ' -f1 /proc/loadavg)"
echo "| stop | wall s | exit after stop s | max RSS MB | CPU s | recorded | lost | kernel | rec+lost=kernel | report |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for _ in $(seq "$REPS"); do
  run duration
  run sigint
done
