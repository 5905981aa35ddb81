#!/usr/bin/env bash
# flame_screenshot.sh: the picture of the HTML report's caller flame graph in the README's
# "Why is it slow" (docs/why-slow-flame.png), from a fresh recording of the why_slow
# fixture (work() called by a spinning and a sleeping caller):
#   uprof record -g --off-cpu -e work -- ./why_slow 20 2000
#   uprof report --format html -o why.html
# The page's "Callers" part (its heading, legend and flame graph) is cut out with the
# page's own style sheet into a page of its own, shot with headless Chromium as
# html_screenshot.sh does, and stored in 256 colours (scripts/png_palette.py).
#
#   scripts/flame_screenshot.sh [OUT.png]
#
# Needs root (uprobes, BPF), chromium and python3; uses build/ (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-$ROOT/docs/why-slow-flame.png}
DIR=$ROOT/build/flame-demo
UPROF=$ROOT/build/uprof
[ -x "$UPROF" ] || { echo "flame_screenshot: no $UPROF (scripts/build.sh)" >&2; exit 1; }
command -v chromium >/dev/null || { echo "flame_screenshot: chromium is not installed (scripts/setup.sh)" >&2; exit 1; }
rm -rf "$DIR"
mkdir -p "$DIR"
cp "$ROOT/build/tests/fixtures/x86_64/why_slow" "$DIR/why_slow"
cd "$DIR"
"$UPROF" record -o why.data -g --off-cpu -e work -- ./why_slow 20 2000 >record.log 2>&1
"$UPROF" report why.data --format html -o why.html
python3 - why.html flame.html <<'PY'
import re, sys
page = open(sys.argv[1]).read()
style = re.search(r"<style>.*?</style>", page, re.S)
start = page.find("<h3>Callers</h3>")
flame = page.find('<svg class="flame"', start)
if not style or start < 0 or flame < 0:
    sys.exit("flame_screenshot: the page has no Callers flame graph (was it recorded with -g?)")
end = page.find("</div>", page.find("</svg>", flame)) + len("</div>")
open(sys.argv[2], "w").write('<!DOCTYPE html><html><head><meta charset="utf-8">' + style.group(0) +
                             '</head><body style="margin:12px">' + page[start:end] + "</body></html>")
PY
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --disable-default-apps --no-first-run --hide-scrollbars \
  --user-data-dir="$DIR/profile" --window-size=1060,300 --screenshot="$DIR/full.png" "file://$DIR/flame.html" \
  >/dev/null 2>&1
python3 "$ROOT/scripts/png_palette.py" "$DIR/full.png" "$OUT"
echo "flame_screenshot: $OUT ($(stat -c %s "$OUT") bytes), from $DIR/why.html"
