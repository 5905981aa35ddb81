#!/usr/bin/env bash
# What record --off-cpu costs, on a workload that switches often: bench/targets/pingpong.c,
# whose main thread calls bounce() N times, each blocking once on a pipe that an echo thread
# answers (the main thread leaves the CPU inside every call; the echo thread leaves it once a
# round outside any call). Interleaved, REPS times each:
#
#   alone              the workload without uprof
#   -e bounce          uprof, entry and return probes on bounce (2 hits a round)
#   --off-cpu bounce   the same with --off-cpu: the hits copy the thread's totals, and the
#                      scheduler programs follow the main thread's switches inside the calls
#   -e idle            uprof probing a function never called: no hits
#   --off-cpu idle     the same with --off-cpu: the scheduler programs run at every switch
#                      on the machine, and find no thread inside a probed call
#   perf record        (when perf is installed) perf probe's entry and return probes on bounce,
#                      recorded by perf record, and the same with -e sched:sched_switch: every
#                      switch of the workload's threads written as a sample, the nearest perf
#                      comes to --off-cpu where its own --off-cpu is missing (perf built
#                      without BUILD_BPF_SKEL, as Debian 12's perf 6.1 is: it says "option
#                      `off-cpu' is being ignored"); with it, perf record --off-cpu too
#
# The workload prints its loop's wall time and the CPU time of its process (both threads);
# medians per round are shown, and the differences that are --off-cpu's own. The
# scheduler programs run at each switch on the switching CPU, charged to whichever task
# was running (a switch from the idle task is charged to no process): wall time shows
# what the workload is slowed by, CPU time part of it.
#
#   scripts/offcpu_cost.sh [BUILD_DIR] [ROUNDS] [REPS]      (root; defaults build 200000 5)
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-200000}
REPS=${3:-5}
UPROF=$BUILD/uprof
[ -x "$UPROF" ] || { echo "offcpu_cost: build $BUILD first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "offcpu_cost: needs root (uprobes, BPF)" >&2; exit 2; }
work=$(mktemp -d /tmp/uprof-offcpu-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -g -pthread -o "$work/pingpong" "$(dirname "$0")/../bench/targets/pingpong.c"
exec python3 - "$UPROF" "$work" "$ROUNDS" "$REPS" <<'PY'
import os, re, shutil, statistics, subprocess, sys
uprof, work, rounds, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
prog = os.path.join(work, "pingpong")
cases = {
    "alone": [],
    "-e bounce": ["-e", "bounce"],
    "--off-cpu -e bounce": ["--off-cpu", "-e", "bounce"],
    "-e idle": ["-e", "idle"],
    "--off-cpu -e idle": ["--off-cpu", "-e", "idle"],
}
def perf_has_off_cpu():
    r = subprocess.run(["perf", "record", "--off-cpu", "-o", "/dev/null", "--", "true"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return r.returncode == 0 and "ignored" not in r.stderr
perf_probes = False
if shutil.which("perf"):
    # A group of its own: perf probe refuses an event name another group already has.
    subprocess.run(["perf", "probe", "-q", "-d", "uprof_offcpucost:*"], stderr=subprocess.DEVNULL)
    perf_probes = (subprocess.run(["perf", "probe", "-q", "-x", prog, "uprof_offcpucost:bounce=bounce"]).returncode == 0
                   and subprocess.run(["perf", "probe", "-q", "-x", prog,
                                       "uprof_offcpucost:bounce=bounce%return"]).returncode == 0)
if perf_probes:
    pdata = os.path.join(work, "p.data")
    pbase = ["perf", "record", "-q", "-o", pdata, "-e", "uprof_offcpucost:bounce", "-e", "uprof_offcpucost:bounce__return"]
    cases["perf record -e bounce"] = pbase
    cases["perf record -e bounce -e sched:sched_switch"] = pbase + ["-e", "sched:sched_switch"]
    if perf_has_off_cpu():
        cases["perf record -e bounce --off-cpu"] = pbase + ["--off-cpu"]
wall = {c: [] for c in cases}
cpu = {c: [] for c in cases}
try:
  for rep in range(reps):
    for name, args in cases.items():
        cmd = [prog, str(rounds)]
        if name.startswith("perf record"):
            cmd = args + ["--"] + cmd
        elif args:
            cmd = [uprof, "record", "--engine", "bpf", "--no-calibrate", "-m", "4096", "-o",
                   os.path.join(work, "c.data")] + args + ["--"] + cmd
        r = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        m = re.search(r"loop_ns (\d+) loop_cpu_ns (\d+) rounds (\d+)", r.stdout)
        if not m or int(m.group(3)) != rounds:
            sys.exit(f"offcpu_cost: {name}: unexpected output {r.stdout!r} {r.stderr[-500:]!r}")
        wall[name].append(int(m.group(1)) / rounds)
        cpu[name].append(int(m.group(2)) / rounds)
finally:
    if perf_probes:
        subprocess.run(["perf", "probe", "-q", "-d", "uprof_offcpucost:*"], stderr=subprocess.DEVNULL)
med = lambda d, c: statistics.median(d[c])
print(f"record --off-cpu cost: pingpong {rounds:,} rounds (one probed call and one switch away and back "
      f"inside it, per round), {reps} interleaved runs each, load {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
print("| case | wall ns/round (median) | CPU ns/round (median) |")
print("|---|---|---|")
for c in cases:
    print(f"| {c} | {med(wall, c):,.0f} | {med(cpu, c):,.0f} |")
print()
print(f"--off-cpu inside calls (per call: 2 hits copying the totals, 1 switch out and in followed): "
      f"wall {med(wall, '--off-cpu -e bounce') - med(wall, '-e bounce'):+,.0f} ns, "
      f"CPU {med(cpu, '--off-cpu -e bounce') - med(cpu, '-e bounce'):+,.0f} ns")
print(f"--off-cpu outside calls (per round: ~4 switches, each a task-storage lookup that finds nothing): "
      f"wall {med(wall, '--off-cpu -e idle') - med(wall, '-e idle'):+,.0f} ns, "
      f"CPU {med(cpu, '--off-cpu -e idle') - med(cpu, '-e idle'):+,.0f} ns")
if perf_probes:
    a, b = "perf record -e bounce", "perf record -e bounce -e sched:sched_switch"
    print(f"perf record -e sched:sched_switch beside the probes (per round: the workload's ~4 switches written): "
          f"wall {med(wall, b) - med(wall, a):+,.0f} ns, CPU {med(cpu, b) - med(cpu, a):+,.0f} ns")
else:
    print("perf record: left out (perf or perf probe is missing)")
PY
