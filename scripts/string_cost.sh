#!/usr/bin/env bash
# What reading a string costs per probe hit, on each engine: the strings fixture
# (tests/fixtures/strings.c) recorded with lookup's entry probe reading a register
# (`lookup n=%si`) and reading the key string by DWARF (`lookup key`), interleaved,
# REPS times each; CPU time of the whole command (uprof, the workload, and the kernel's
# work at each hit, which is charged to the workload). Prints medians and the
# difference per hit.
#
#   scripts/string_cost.sh [BUILD_DIR] [CALLS] [REPS]      (root; defaults build 200000 5)
set -euo pipefail
BUILD=${1:-build}
CALLS=${2:-200000}
REPS=${3:-5}
UPROF=$BUILD/uprof
FX=$BUILD/tests/fixtures/x86_64/strings_O2
[ -x "$UPROF" ] && [ -x "$FX" ] || { echo "string_cost: build $BUILD first (uprof and its test fixtures)" >&2; exit 2; }
exec python3 - "$UPROF" "$FX" "$CALLS" "$REPS" <<'EOF'
import os, resource, statistics, subprocess, sys, tempfile
uprof, fx, calls, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
# lookup is called once per iteration plus once more; entry-only, so one hit a call.
hits = calls + 1
cases = [(engine, name, spec) for engine in ("bpf", "perf")
         for name, spec in (("register", "lookup n=%si"), ("string", "lookup key"))]
out = tempfile.mkdtemp(prefix="uprof-strcost-")
cpu = {c[:2]: [] for c in cases}
def cpu_now():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for rep in range(reps):
    for engine, name, spec in cases:
        before = cpu_now()
        subprocess.run([uprof, "record", "--engine", engine, "--entry-only", "--no-calibrate", "-m", "4096",
                        "-o", os.path.join(out, "s.data"), "-e", spec, "--", fx, str(calls)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cpu[(engine, name)].append(cpu_now() - before)
print(f"string capture cost: {calls:,} calls of lookup, entry probe only, {reps} interleaved runs each, "
      f"load {os.getloadavg()[0]:.2f}")
print("| engine | value read | CPU s (median) | ns per hit (median, whole command) | string - register, ns per hit |")
print("|---|---|---|---|---|")
for engine in ("bpf", "perf"):
    reg = statistics.median(cpu[(engine, "register")])
    s = statistics.median(cpu[(engine, "string")])
    for name, v in (("register", reg), ("string", s)):
        extra = f"{(s - reg) / hits * 1e9:,.0f}" if name == "string" else ""
        print(f"| {engine} | {name} | {v:.3f} | {v / hits * 1e9:,.0f} | {extra} |")
EOF
