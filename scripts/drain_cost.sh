#!/usr/bin/env bash
# drain_cost.sh: what uprof's drain costs per event, and so how many events per second
# one core of it can take: `uprof record -a -e 'HOT:add_nop5 %di %si $retval'` for D
# seconds while bench/targets/hot.c calls add_nop5 flat out (a probe on a 5-byte nop is
# the cheapest hit Linux has: no trap, so the program makes hits as fast as it can),
# and the same recording with nothing calling it. With -a the workload is not uprof's
# child, so uprof's own CPU time (/usr/bin/time) is the drain's, plus start-up and
# detach, which the idle run measures:
#   ns per event = (CPU busy - CPU idle) / events recorded;  events/s per core = 1e9 / that
# Several uprof binaries (-u, repeatable) run interleaved, for a before/after.
#
#   scripts/drain_cost.sh [-r REPS] [-d SEC] [-u UPROF]... [-- EXTRA RECORD OPTIONS]
#
# Needs root, x86-64, cc, /usr/bin/time. Figures on a shared machine: compare the
# binaries of one run, not runs of different days.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=3
DUR=3
UPROFS=()
while [ $# -gt 0 ]; do
  case "$1" in
    -r) REPS=$2; shift 2 ;;
    -d) DUR=$2; shift 2 ;;
    -u) UPROFS+=("$2"); shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "drain_cost: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#UPROFS[@]} -gt 0 ] || UPROFS=(build/uprof)
[ "$(id -u)" = 0 ] || { echo "drain_cost: needs root (uprobes)" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "drain_cost: x86-64 only (hot.c)" >&2; exit 1; }
work=$(mktemp -d /tmp/uprof-drain-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -g -fcf-protection=none -o "$work/hot" bench/targets/hot.c
exec python3 - "$work" "$REPS" "$DUR" "$@" -- "${UPROFS[@]}" <<'EOF'
import os, re, statistics, subprocess, sys, time
work, reps, dur = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rest = sys.argv[4:]
sep = rest.index("--")
extra, uprofs = rest[:sep], rest[sep + 1:]
hot = os.path.join(work, "hot")

def record(uprof, busy):
    out, tv = os.path.join(work, "d.data"), os.path.join(work, "time.txt")
    load = subprocess.Popen([hot, "nop5", "2000000000"], stdout=subprocess.DEVNULL) if busy else None
    if load: time.sleep(0.2)
    try:
        r = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", tv, uprof, "record", "-a", "--no-calibrate",
                            "-o", out, "--duration", str(dur), *extra, "-e", hot + ":add_nop5 %di %si $retval"],
                           capture_output=True, text=True, timeout=dur + 300)
    finally:
        if load:
            load.kill()
            load.wait()
    u, s, rss = open(tv).read().split()[-3:]
    m = re.search(r"([\d,]+) events recorded, ([\d,]+) lost", r.stderr)
    if not m: sys.exit(f"drain_cost: {uprof}: no summary line: {r.stderr.strip()[-300:]}")
    return float(u) + float(s), int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")), int(rss) // 1024

rows = {u: [] for u in uprofs}
for rep in range(reps):
    for u in uprofs:
        idle = record(u, False)
        busy = record(u, True)
        ns = (busy[0] - idle[0]) * 1e9 / busy[1] if busy[1] else float("nan")
        rows[u].append((ns, busy[1], busy[2], busy[0], idle[0], busy[3]))
        print(f"  rep {rep + 1} {u}: {busy[1]:,} recorded, {busy[2]:,} lost, CPU {busy[0]:.2f} s "
              f"(idle run {idle[0]:.2f} s), {ns:.0f} ns/event, RSS {busy[3]} MB", file=sys.stderr)
print(f"drain cost: -a -e 'add_nop5 %di %si $retval' {' '.join(extra)}, {dur:g} s, hot flat out, {reps} runs, "
      f"load {os.getloadavg()[0]:.2f}")
print("| uprof | events recorded/s | lost/s | drain ns/event (median) | events/s per core | peak RSS MB |")
print("|---|---|---|---|---|---|")
for u in uprofs:
    r = rows[u]
    ns = statistics.median(x[0] for x in r)
    print(f"| {u} | {statistics.median(x[1] for x in r) / dur:,.0f} | {statistics.median(x[2] for x in r) / dur:,.0f} | "
          f"{ns:.0f} | {1e9 / ns:,.0f} | {max(x[5] for x in r)} |")
EOF
