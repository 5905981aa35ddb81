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
# workload and the kernel's work at each hit, charged to the workload), and the workload's
# own CPU time around spinner's calls of work() (the fixture's spinner cpu_ns: work(1, 0) is a
# clock read, so this is the entry and return hits with their BPF programs and stack copies,
# without the tool's start-up and drain; sleeper's calls are left out of it: nanosleep(0)
# costs ~30 us of CPU and varies by more than a hit costs). Prints medians
# and what -g adds per call (per stack copied), and what each run recorded and lost (a lost
# record's stack was still copied, but its unwinding is not paid: a run that loses is cheaper
# than it should be). perf record --call-graph dwarf writes every 8 KiB stack into perf.data
# (N=100000: 1.6 GB a run, in /tmp); uprof unwinds in its drain and writes the frames.
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
import os, re, resource, shutil, statistics, subprocess, sys, tempfile
uprof, fx, n, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
calls = 2 * n
out = tempfile.mkdtemp(prefix="uprof-stackcost-")
# A private copy: perf probe's uprobe and uprof's are on this inode only.
prog = os.path.join(out, "why_slow")
shutil.copy(fx, prog)
base = [uprof, "record", "--no-calibrate", "--no-args", "-m", "4096", "-o", os.path.join(out, "s.data"), "-e", "work"]
cases = {
    "alone": [],
    "bpf": base + ["--engine", "bpf"],
    "bpf -g": base + ["--engine", "bpf", "-g"],
    "bpf -g --stack-min 1s": base + ["--engine", "bpf", "-g", "--stack-min", "1s"],
    "perf": base + ["--engine", "perf"],
    "perf -g": base + ["--engine", "perf", "-g"],
    "perf -g --stack-min 1s": base + ["--engine", "perf", "-g", "--stack-min", "1s"],
}
have_perf = shutil.which("perf") is not None
if have_perf:
    # A group and event name of its own: perf probe refuses an event named "work" when any
    # group already has one (another session's probe), and this one is deleted at the end.
    subprocess.run(["perf", "probe", "-q", "-d", "uprof_stackcost:*"], stderr=subprocess.DEVNULL)
    have_perf = subprocess.run(["perf", "probe", "-q", "-x", prog, "uprof_stackcost:sc_work=work"]).returncode == 0
    if not have_perf:
        print("stack_cost: perf probe failed: perf record is left out", file=sys.stderr)
if have_perf:
    pbase = ["perf", "record", "-m", "4096", "-o", os.path.join(out, "perf.data"), "-e", "uprof_stackcost:sc_work"]
    cases["perf record (entry)"] = pbase
    cases["perf record --call-graph dwarf (entry)"] = pbase + ["--call-graph", "dwarf"]
cpu = {c: [] for c in cases}
got = {c: [] for c in cases}  # (recorded, lost) per run
inner = {c: [] for c in cases}  # the workload's CPU around spinner's calls, s
def counts(label, err):
    # uprof: "uprof: 1,234 events recorded, 5 lost (kernel counted ...)"; perf: "(1234 samples)"
    # and "Processed N events and lost M chunks!" (chunks, not samples: lost = expected - recorded).
    m = re.search(r"uprof: ([\d,]+) events recorded, ([\d,]+) lost", err)
    if m:
        return int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))
    m = re.search(r"\((\d+) samples\)", err)
    if m:
        return int(m.group(1)), calls - int(m.group(1))
    return None, None
def cpu_now():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
try:
    for rep in range(reps):
        for label, cmd in cases.items():
            before = cpu_now()
            r = subprocess.run(cmd + (["--"] if cmd else []) + [prog, str(n), "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            cpu[label].append(cpu_now() - before)
            if r.returncode != 0:
                sys.exit(f"stack_cost: {label}: exit {r.returncode}: {r.stderr[-600:]}")
            got[label].append(counts(label, r.stderr))
            tally = re.findall(r"^(?:spinner|sleeper) calls (\d+) cpu_ns (\d+)", r.stdout, re.M)
            if len(tally) != 2 or sum(int(c) for c, _ in tally) != calls:
                sys.exit(f"stack_cost: {label}: the workload printed {r.stdout!r}")
            inner[label].append(int(tally[0][1]) / 1e9)  # spinner's line comes first
            for f in ("s.data", "perf.data", "perf.data.old"):
                try: os.unlink(os.path.join(out, f))
                except FileNotFoundError: pass
finally:
    if have_perf:
        subprocess.run(["perf", "probe", "-q", "-d", "uprof_stackcost:*"], stderr=subprocess.DEVNULL)
print(f"record -g cost: why_slow {n} 0 ({calls:,} calls of work), {reps} interleaved runs each, "
      f"load {os.getloadavg()[0]:.2f}")
print("| command | CPU s (median) | ns per call (whole command) | added by the stacks, ns per call | "
      "spinner's CPU per call, ns | added by the stacks there | recorded (median) | lost (max) |")
print("|---|---|---|---|---|---|---|---|")
for label in cases:
    v = statistics.median(cpu[label])
    ref = "perf record (entry)" if label.startswith("perf record") else label.split(" ")[0]
    if label == "alone": ref = label
    extra = f"{(v - statistics.median(cpu[ref])) / calls * 1e9:,.0f}" if label != ref else ""
    w = statistics.median(inner[label])
    wextra = f"{(w - statistics.median(inner[ref])) / n * 1e9:,.0f}" if label != ref else ""
    rec = [g[0] for g in got[label] if g[0] is not None]
    lost = [g[1] for g in got[label] if g[1] is not None]
    rec_s = f"{statistics.median(rec):,.0f}" if rec else "?"
    lost_s = f"{max(lost):,}" if lost else "?"
    print(f"| {label} | {v:.3f} | {v / calls * 1e9:,.0f} | {extra} | {w / n * 1e9:,.0f} | {wextra} | "
          f"{rec_s} | {lost_s} |")
print(f"(uprof counts entry and return events: {2 * calls:,} expected; perf (entry): {calls:,})")
shutil.rmtree(out, ignore_errors=True)
PY
