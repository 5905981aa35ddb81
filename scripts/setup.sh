#!/usr/bin/env bash
# Installs what uprof needs to build and test, from Debian's packages only.
# Idempotent and quiet: when everything is present it prints nothing and runs no apt-get.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  ccache                                   # rebuilds of several checkouts (CI clone, worktrees) share objects
  libelf-dev libdw-dev elfutils            # resolver and DWARF; eu-readelf for cross-checks in tests
  libboost-program-options-dev             # command line
  libgtest-dev libbenchmark-dev            # tests and benchmarks
  binutils                                 # nm/readelf/objcopy: independent checks, stripped fixtures
  python3-jsonschema                       # tests validate report JSON against docs/report.schema.json
  chromium                                 # tests render the HTML report headless: its DOM, a screenshot, no network
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross   # arm64 fixtures
  libbpf-dev bpftool                       # the BPF engine: libbpf, and the skeleton of its BPF object
  systemtap-sdt-dev                        # <sys/sdt.h>: the USDT fixture's probes
  libcapstone-dev                          # instruction decoding: probe placement, instruction boundaries
  libdebuginfod-dev                        # <elfutils/debuginfod.h>: uprof dlopens libdebuginfod.so.1 for $DEBUGINFOD_URLS
  libiberty-dev                            # libiberty.a: Rust's symbol names, legacy and v0 (resolve/elf/rust_name)
  debuginfod                               # the server tests/cli/debuginfod_test.cpp starts
  clang libclang-rt-14-dev                 # the BPF object (clang -target bpf); scripts/fuzz.sh: libFuzzer, ASan and UBSan runtimes for clang
  golang-go                                # Go fixtures: a Go program's calls measured at their exits, paired by goroutine
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
# uprof's default backend creates probes through tracefs; a fresh VM may not have it mounted.
if [ ! -e /sys/kernel/tracing/uprobe_events ] && [ "$(id -u)" -eq 0 ] && [ -d /sys/kernel/tracing ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || echo "setup: could not mount tracefs on /sys/kernel/tracing" >&2
fi

[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
