#!/usr/bin/env bash
# What reading a string or a member costs per probe hit, on each engine: the strings
# fixture (tests/fixtures/strings.c) recorded with an entry probe reading a register
# (`lookup n=%si`), the key string by DWARF (`lookup key`) and a member behind a
# pointer (`visit it->weight`), interleaved, REPS times each; CPU time of the whole
# command (uprof, the workload, and the kernel's work at each hit, which is charged to
# the workload). Prints medians and the difference per hit. The BPF engine runs twice:
# as it records (a probe that reads memory behind an address takes the sleepable
# program, which may fault a page in) and with UPROF_BPF_PRETEND=no-sleepable (the
# non-sleepable program, which reads only pages already mapped).
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
# lookup and visit are called once per iteration (lookup once more); entry-only, so one
# hit a call.
hits = calls
engines = {"bpf": ("bpf", {}), "bpf non-sleepable": ("bpf", {"UPROF_BPF_PRETEND": "no-sleepable"}),
           "perf": ("perf", {})}
values = (("register", "lookup n=%si"), ("string", "lookup key"), ("member", "visit it->weight"))
cases = [(label, name, spec) for label in engines for name, spec in values]
out = tempfile.mkdtemp(prefix="uprof-strcost-")
cpu = {c[:2]: [] for c in cases}
def cpu_now():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for rep in range(reps):
    for label, name, spec in cases:
        engine, env = engines[label]
        before = cpu_now()
        subprocess.run([uprof, "record", "--engine", engine, "--entry-only", "--no-calibrate", "-m", "4096",
                        "-o", os.path.join(out, "s.data"), "-e", spec, "--", fx, str(calls)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **env})
        cpu[(label, name)].append(cpu_now() - before)
print(f"string and member capture cost: {calls:,} calls, entry probe only, {reps} interleaved runs each, "
      f"load {os.getloadavg()[0]:.2f}")
print("| engine | value read | CPU s (median) | ns per hit (median, whole command) | - register, ns per hit |")
print("|---|---|---|---|---|")
for label in engines:
    reg = statistics.median(cpu[(label, "register")])
    for name, _ in values:
        v = statistics.median(cpu[(label, name)])
        extra = f"{(v - reg) / hits * 1e9:,.0f}" if name != "register" else ""
        print(f"| {label} | {name} | {v:.3f} | {v / hits * 1e9:,.0f} | {extra} |")
EOF
