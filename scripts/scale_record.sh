#!/usr/bin/env bash
# scale_record.sh: a whole `uprof record` of many probes, end to end, on each of the BPF
# engine's attach paths side by side: wall time, peak RSS, events recorded and lost,
# and whether the program's output is what it prints alone.
#
#   scripts/scale_record.sh [-r REPS] [-p "links events"] [CASE...]
#
#   CASE    cxx-stl    -e 'libstdc++:*' (7,203 functions) on a small C++ program (built here)
#           c-libc     -e 'libc:*' (3,705 functions) on /bin/ls of a small directory
#           libz       -e 'libz.so.1:*' (88 functions) on python3 compressing 2,000 strings
#           default: cxx-stl c-libc libz
#   -p      the attach paths (default "links events"; events on cxx-stl or c-libc takes
#           minutes to tens of minutes: ~5 ms to open and ~100 ms to close each event)
#   -r      repetitions, interleaved path by path (default 1)
# Environment: UPROF (default build/uprof). Needs root, g++, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=1 PATHS="links events"
while getopts "r:p:" o; do
  case $o in
    r) REPS=$OPTARG ;;
    p) PATHS=$OPTARG ;;
    *) echo "usage: $0 [-r REPS] [-p PATHS] [CASE...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
CASES=${*:-cxx-stl c-libc libz}
UPROF=${UPROF:-build/uprof}
[ -x "$UPROF" ] || { echo "scale_record: $UPROF missing (scripts/build.sh)" >&2; exit 1; }
OUT=$(mktemp -d /tmp/uprof-scale.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
cat > "$OUT/stl.cpp" <<'CPP'
#include <iostream>
#include <map>
#include <string>
int main() {
  std::map<std::string, int> m;
  for (int i = 0; i < 100; i++) m[std::to_string(i)] = i;
  std::cout << "entries " << m.size() << "\n";
}
CPP
g++ -O2 -o "$OUT/stl" "$OUT/stl.cpp"
mkdir -p "$OUT/dir" && touch "$OUT/dir/a" "$OUT/dir/b"
printf 'import zlib\nn = sum(len(zlib.compress(b"x" * i)) for i in range(2000))\nprint("compressed", n)\n' > "$OUT/z.py"
case_spec() {
  case $1 in
    cxx-stl) echo 'libstdc++:*' ;;
    c-libc) echo 'libc:*' ;;
    libz) echo 'libz.so.1:*' ;;
  esac
}
case_cmd() {
  case $1 in
    cxx-stl) echo "$OUT/stl" ;;
    c-libc) echo "/bin/ls $OUT/dir" ;;
    libz) echo "python3 $OUT/z.py" ;;
  esac
}
printf '%-8s %-7s %8s %8s %12s %10s %s\n' case path wall_s rss_MB recorded lost output
for rep in $(seq "$REPS"); do
  for c in $CASES; do
    spec=$(case_spec "$c")
    [ -n "$spec" ] || { echo "scale_record: unknown case $c" >&2; exit 2; }
    # shellcheck disable=SC2046
    set -- $(case_cmd "$c")
    alone=$("$@" 2>&1 || true)
    for p in $PATHS; do
      log=$OUT/$c-$p.log
      /usr/bin/time -f "%e %M" -o "$OUT/time" "$UPROF" record --no-calibrate --no-args --attach "$p" \
        -o "$OUT/$c-$p.data" -e "$spec" -- "$@" >"$OUT/out" 2>"$log" || true
      read -r wall rss < "$OUT/time"
      recorded=$(sed -n 's/^uprof: \([0-9,]*\) events recorded, \([0-9,]*\) lost.*/\1/p' "$log")
      lost=$(sed -n 's/^uprof: \([0-9,]*\) events recorded, \([0-9,]*\) lost.*/\2/p' "$log")
      same=differs; [ "$(cat "$OUT/out")" = "$alone" ] && same=same
      printf '%-8s %-7s %8s %8d %12s %10s %s\n' "$c" "$p" "$wall" $((rss / 1024)) "${recorded:-?}" "${lost:-?}" "$same"
    done
  done
done
