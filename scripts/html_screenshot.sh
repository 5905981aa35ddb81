#!/usr/bin/env bash
# html_screenshot.sh: the screenshot of `uprof report --format html` in the README
# (docs/html-report.png), made from a fresh recording.
#
#   scripts/html_screenshot.sh [OUT.png]
#
# Records the workload fixture twice over in one run, `./workload sleep 1 40` (slow_add:
# 1 ms sleeps, every fourth 10 ms) then `./workload threads 3 3000` (add in 3 threads),
# with both functions probed:
#   uprof record -o demo.data -e ./workload:slow_add -e ./workload:add -- \
#     sh -c './workload sleep 1 40 && ./workload threads 3 3000'
#   uprof report demo.data --format html --by-thread --sort mean -o demo.html
# then takes the screenshot as tests/cli/html_report_test.cpp does (headless Chromium,
# 1100 px wide) and stores it in 256 colours (scripts/png_palette.py) to keep it small.
# Needs root (uprobes), chromium and python3; uses build/ (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-$ROOT/docs/html-report.png}
DIR=$ROOT/build/html-demo
UPROF=$ROOT/build/uprof
[ -x "$UPROF" ] || { echo "html_screenshot: no $UPROF (scripts/build.sh)" >&2; exit 1; }
command -v chromium >/dev/null || { echo "html_screenshot: chromium is not installed (scripts/setup.sh)" >&2; exit 1; }
rm -rf "$DIR"
mkdir -p "$DIR"
cp "$ROOT/build/tests/fixtures/x86_64/workload" "$DIR/workload"
cd "$DIR"
"$UPROF" record -o demo.data -e ./workload:slow_add -e ./workload:add -- \
  sh -c './workload sleep 1 40 && ./workload threads 3 3000' >record.log 2>&1
"$UPROF" report demo.data --format html --by-thread --sort mean -o demo.html
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --disable-default-apps --no-first-run --hide-scrollbars \
  --user-data-dir="$DIR/profile" --window-size=1100,1860 --screenshot="$DIR/full.png" "file://$DIR/demo.html" \
  >/dev/null 2>&1
python3 "$ROOT/scripts/png_palette.py" "$DIR/full.png" "$OUT"
echo "html_screenshot: $OUT ($(stat -c %s "$OUT") bytes), from $DIR/demo.html"
