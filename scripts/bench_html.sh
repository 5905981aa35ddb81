#!/usr/bin/env bash
# bench_html.sh: how long `uprof report --format html` takes on a 10,000,000-event
# recording, against the text report (and JSON) of the same file, and how big the page is.
#
#   scripts/bench_html.sh [-r REPS] [-n CALLS] [DATA]
#
#   -r REPS   timed runs of every command, interleaved (default 5)
#   -n CALLS  calls in the recording (default 5000000: 10M events, an entry and a return each)
#   DATA      an existing data file to time instead of recording one
#
# Records `workload calls CALLS` (add(i, 10*i) CALLS times) with
#   uprof record -e 'add %di %si $retval' -m 4096
# (the workload of scripts/bench_report.sh) into BUILD_DIR/bench-html/big.data, kept for
# the next run (delete it to record again). Then, REPS times, in turn:
#   uprof report DATA                 > /dev/null
#   uprof report DATA --format json   > /dev/null
#   uprof report DATA --format html   > /dev/null
# under /usr/bin/time, the file in the page cache, and prints the median (min-max) wall
# seconds, CPU seconds and peak RSS of each, the ratio to the text report, and the size
# of the page. Needs root (uprobes) to record; BUILD_DIR defaults to build.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=5
CALLS=5000000
while [ $# -gt 0 ]; do
  case "$1" in
    -r) REPS=$2; shift 2 ;;
    -n) CALLS=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench_html: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) DATA=$1; shift ;;
  esac
done
BUILD_DIR=${BUILD_DIR:-build}
UPROF=$PWD/$BUILD_DIR/uprof
OUT=$PWD/$BUILD_DIR/bench-html
mkdir -p "$OUT"
[ -x "$UPROF" ] || { echo "bench_html: no $UPROF (scripts/build.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench_html: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

if [ -z "${DATA:-}" ]; then
  DATA=$OUT/big.data
  if [ ! -s "$DATA" ]; then
    W=$OUT/workload
    cp "$BUILD_DIR/tests/fixtures/x86_64/workload" "$W"
    echo "== recording workload calls $CALLS ($((2 * CALLS)) events)" >&2
    "$UPROF" record -e 'add %di %si $retval' -m 4096 -o "$DATA" -- "$W" calls "$CALLS" >/dev/null
  fi
fi
cat "$DATA" >/dev/null   # into the page cache
"$UPROF" report "$DATA" --format html -o "$OUT/page.html" 2>/dev/null
events=$("$UPROF" report "$DATA" --format json --hist none | python3 -c 'import json,sys; r=json.load(sys.stdin)["recording"]; print(r["samples"])')
echo "== $DATA: $events events, $(stat -c %s "$DATA") bytes; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

RES=$OUT/results.tsv
: >"$RES"
for rep in $(seq 1 "$REPS"); do
  for fmt in text json html; do
    /usr/bin/time -f "%e %U %S %M" -o "$OUT/.t" "$UPROF" report "$DATA" --format "$fmt" >/dev/null 2>/dev/null
    printf '%s\t%s\n' "$fmt" "$(cat "$OUT/.t")" >>"$RES"
    printf '   rep %s %-5s %s\n' "$rep" "$fmt" "$(cat "$OUT/.t")" >&2
  done
done
python3 - "$RES" "$events" "$(stat -c %s "$OUT/page.html")" "$REPS" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import statistics, sys
res, events, page, reps, load = sys.argv[1:6]
rows = [l.split("\t") for l in open(res).read().splitlines()]
runs = {}
for fmt, t in rows:
    wall, user, sys_, rss = t.split()
    runs.setdefault(fmt, []).append((float(wall), float(user) + float(sys_), int(rss)))
text = statistics.median(w for w, _, _ in runs["text"])
print(f"\n`uprof report` on {int(events):,} events, {reps} interleaved runs each, output to /dev/null "
      f"(load at the end {load}):\n")
print("| format | wall s, median (min-max) | CPU s, median | peak RSS MiB | x text, wall |")
print("|---|---|---|---|---|")
for fmt in ["text", "json", "html"]:
    w = [r[0] for r in runs[fmt]]
    c = statistics.median(r[1] for r in runs[fmt])
    m = max(r[2] for r in runs[fmt]) / 1024
    print(f"| `--format {fmt}` | {statistics.median(w):.2f} ({min(w):.2f}-{max(w):.2f}) | {c:.2f} | {m:.1f} | "
          f"{statistics.median(w) / text:.3f} |")
print(f"\nThe HTML page: {int(page) / 1024:.0f} KiB.")
PY
