#!/usr/bin/env bash
# What record -g costs per call, on each engine, with and without --stack-min: the
# why_slow fixture (tests/fixtures/why_slow.c, -O2 without frame pointers) run as
# `why_slow N 0` (2N calls of work(), each a few hundred ns) under `uprof record -e work`
# (an entry and a return probe: 4N hits) without -g, with -g (a stack copied at each
# entry: 2N stacks, unwound in uprof's drain), and with -g --stack-min 1s (no call is
# that long: the entry's time is noted and the return compares, no stack is kept; the
# perf engine still copies every return's stack and drops it in the drain); and, beside
# them, perf record --call-graph dwarf on the same tracefs probe (perf probe -x).
# Interleaved, REPS times each; CPU time of the whole command (the tool, its drain, the
# workload and the kernel's work at each hit, charged to the workload). Prints medians
# and what -g adds per call (per stack copied).
#
#   scripts/stack_cost.sh [BUILD_DIR] [N] [REPS]      (root; defaults build 100000 5)
set -euo pipefail
BUILD=${1:-build}
N=${2:-100000}
REPS=${3:-5}
UPROF=$BUILD/uprof
FX=$BUILD/tests/fixtures/x86_64/why_slow
[ -x "$UPROF" ] && [ -x "$FX" ] || { echo "stack_cost: build $BUILD first (uprof and its test fixtures)" >&2; exit 2; }
exec python3 - "$UPROF" "$FX" "$N" "$REPS" <<'PY'
import os, resource, shutil, statistics, subprocess, sys, tempfile
uprof, fx, n, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
calls = 2 * n
out = tempfile.mkdtemp(prefix="uprof-stackcost-")
# A private copy: perf probe's uprobe and uprof's are on this inode only.
prog = os.path.join(out, "why_slow")
shutil.copy(fx, prog)
base = [uprof, "record", "--no-calibrate", "--no-args", "-m", "4096", "-o", os.path.join(out, "s.data"), "-e", "work"]
cases = {
    "bpf": base + ["--engine", "bpf"],
    "bpf -g": base + ["--engine", "bpf", "-g"],
    "bpf -g --stack-min 1s": base + ["--engine", "bpf", "-g", "--stack-min", "1s"],
    "perf": base + ["--engine", "perf"],
    "perf -g": base + ["--engine", "perf", "-g"],
    "perf -g --stack-min 1s": base + ["--engine", "perf", "-g", "--stack-min", "1s"],
}
have_perf = shutil.which("perf") is not None
if have_perf:
    subprocess.run(["perf", "probe", "-q", "-d", "probe_why_slow:*"], stderr=subprocess.DEVNULL)
    have_perf = subprocess.run(["perf", "probe", "-q", "-x", prog, "work"], stderr=subprocess.DEVNULL).returncode == 0
if have_perf:
    pbase = ["perf", "record", "-q", "-m", "4096", "-o", os.path.join(out, "perf.data"), "-e", "probe_why_slow:work"]
    cases["perf record (entry)"] = pbase
    cases["perf record --call-graph dwarf (entry)"] = pbase + ["--call-graph", "dwarf"]
cpu = {c: [] for c in cases}
def cpu_now():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
try:
    for rep in range(reps):
        for label, cmd in cases.items():
            before = cpu_now()
            subprocess.run(cmd + ["--", prog, str(n), "0"], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            cpu[label].append(cpu_now() - before)
finally:
    if have_perf:
        subprocess.run(["perf", "probe", "-q", "-d", "probe_why_slow:*"], stderr=subprocess.DEVNULL)
print(f"record -g cost: why_slow {n} 0 ({calls:,} calls of work), {reps} interleaved runs each, "
      f"load {os.getloadavg()[0]:.2f}")
print("| command | CPU s (median) | ns per call (whole command) | added by the stacks, ns per call |")
print("|---|---|---|---|")
for label in cases:
    v = statistics.median(cpu[label])
    ref = "perf record (entry)" if label.startswith("perf record") else label.split(" ")[0]
    extra = f"{(v - statistics.median(cpu[ref])) / calls * 1e9:,.0f}" if label != ref else ""
    print(f"| {label} | {v:.3f} | {v / calls * 1e9:,.0f} | {extra} |")
PY
