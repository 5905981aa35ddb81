#!/usr/bin/env bash
# shellcheck disable=SC2016  # $retval and $ORIGIN are meant literally
# uprof on arm64, live: cross-builds a static aarch64 uprof and aarch64 fixtures, boots
# Debian's arm64 kernel under qemu-system-aarch64 with an initramfs whose /init
# (scripts/arm64/init.c) runs `uprof record` on each case below and prints every data
# file in base64 on the console, then checks those files on the host
# (scripts/arm64/check_data.cpp, which reads them with uprof's DataFileReader).
#
#   scripts/arm64_live_test.sh BUILD_DIR        (e.g. build; work goes to BUILD_DIR/arm64)
#
# Idempotent: installs missing tools with apt-get (silent when present); keeps the arm64
# packages, the sysroot and the cross build under BUILD_DIR/arm64 and reuses them. The
# kernel package name is resolved afresh on every run (old ones leave the archive).
# Ends with one line, "arm64 live: PASS" or "arm64 live: FAIL: reason"; exits 1 on failure.
# Needs root (apt-get, mknod for the initramfs's /dev/console) and network on a cold run.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BUILD=$(realpath -m "$1")
W=$BUILD/arm64
LOGS=$W/logs
T0=$(date +%s)
# Every step has its own time limit, and none may run past the whole run's budget
# (ctest's TIMEOUT for this test should be a little more).
BUDGET=${ARM64_LIVE_BUDGET:-840}

fail() {
  echo "arm64 live: FAIL: $*"
  exit 1
}
note() { echo "arm64: $* [$(($(date +%s) - T0)) s]"; }
# limit SECONDS: LIMIT=SECONDS, or what is left of the budget when that is less.
limit() {
  local left=$((T0 + BUDGET - $(date +%s)))
  [ "$left" -gt 0 ] || fail "out of time: the budget of $BUDGET s is spent"
  LIMIT=$(($1 < left ? $1 : left))
}
# run_logged NAME SECONDS CMD...: output into $LOGS/NAME.log; its tail on failure.
run_logged() {
  local name=$1
  limit "$2"
  shift 2
  if ! timeout "$LIMIT" "$@" >"$LOGS/$name.log" 2>&1; then
    tail -n 25 "$LOGS/$name.log" | sed "s/^/  $name: /"
    return 1
  fi
}

# fresh OUT INPUT...: OUT exists and is newer than every INPUT.
fresh() {
  local out=$1 f
  shift
  [ -e "$out" ] || return 1
  for f in "$@"; do [ "$out" -nt "$f" ] || return 1; done
}

mkdir -p "$LOGS"

# --- 1. Host tools ---------------------------------------------------------------------
tools=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm cpio)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  note "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! run_logged apt-install 600 $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    run_logged apt-update 300 $sudo apt-get update -q || fail "apt-get update failed (see $LOGS/apt-update.log)"
    run_logged apt-install 600 $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" ||
      fail "apt-get install ${missing[*]} failed (see $LOGS/apt-install.log)"
  fi
fi

# --- 2. Debian's arm64 kernel and -dev packages, through a private apt state ----------
# No `dpkg --add-architecture`: the host's package database is not touched.
A=$W/apt
mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/sources.list.d" "$W/debs"
[ -e "$A/status" ] || : >"$A/status"
# shellcheck disable=SC1091
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
cat >"$A/sources.list" <<EOF
deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/debian $codename main
deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/debian $codename-updates main
deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/debian-security $codename-security main
EOF
apt64=(-o APT::Architecture=arm64 -o APT::Architectures=arm64 -o Dir::State::Lists="$A/lists"
  -o Dir::State::status="$A/status" -o Dir::Cache="$A/cache" -o Dir::Etc::SourceList="$A/sources.list"
  -o Dir::Etc::SourceParts="$A/sources.list.d" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
if ! run_logged apt64-update 180 apt-get "${apt64[@]}" update -q; then
  ls "$A/lists"/*Packages* >/dev/null 2>&1 || fail "apt-get update for arm64 failed (see $LOGS/apt64-update.log)"
  note "apt-get update for arm64 failed; using the package lists from an earlier run"
fi
limit 60
kpkg=$(timeout "$LIMIT" apt-cache "${apt64[@]}" depends linux-image-arm64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
[ -n "$kpkg" ] || fail "cannot resolve linux-image-arm64 to a versioned kernel package"
# libdw.a needs zlib, lzma and bzip2 (Debian's elfutils 0.188 is built without zstd);
# boost's headers and CMake config come with libboost1.74-dev.
# libbpf-dev: the BPF engine (libbpf.a; its BPF object is built by the host clang).
# libcapstone-dev: libcapstone.a, the instruction decoder.
devpkgs=(libelf-dev libdw-dev zlib1g-dev liblzma-dev libbz2-dev libboost1.74-dev libboost-program-options1.74-dev libbpf-dev libcapstone-dev)
want=()
for p in "$kpkg" "${devpkgs[@]}"; do
  compgen -G "$W/debs/${p}_*_arm64.deb" >/dev/null || want+=("$p")
done
if [ ${#want[@]} -gt 0 ]; then
  note "downloading ${want[*]}"
  (cd "$W/debs" && run_logged apt64-download 600 apt-get "${apt64[@]}" download -q "${want[@]}") ||
    fail "downloading arm64 packages failed (see $LOGS/apt64-download.log)"
fi
# Kernels the archive no longer names are of no further use.
for d in "$W/debs"/linux-image-*_arm64.deb; do
  case $(basename "$d") in "${kpkg}"_*) ;; *) rm -f "$d" ;; esac
done

# Kernel: only boot/vmlinuz-* (the modules are 350 MB uprof does not need: UPROBES,
# UPROBE_EVENTS, PERF_EVENTS and the PL011 console are built in), once per package file.
kdeb=$(compgen -G "$W/debs/${kpkg}_*_arm64.deb" | head -n 1)
if [ "$(cat "$W/kernel.stamp" 2>/dev/null)" != "$(basename "$kdeb")" ]; then
  rm -rf "$W/kernel" && mkdir -p "$W/kernel"
  dpkg-deb --fsys-tarfile "$kdeb" | tar -x -C "$W/kernel" --wildcards './boot/vmlinuz-*' ||
    fail "cannot unpack the kernel from $kdeb"
  basename "$kdeb" >"$W/kernel.stamp"
fi
vmlinuz=$(compgen -G "$W/kernel/boot/vmlinuz-*" | head -n 1)
[ -n "$vmlinuz" ] || fail "no vmlinuz in $kdeb"

# Sysroot: the -dev packages unpacked; again only when the package files change.
SYSROOT=$W/sysroot
devdebs=()
for p in "${devpkgs[@]}"; do devdebs+=("$(compgen -G "$W/debs/${p}_*_arm64.deb" | head -n 1)"); done
stamp=$(for d in "${devdebs[@]}"; do basename "$d"; done)
if [ "$(cat "$W/sysroot.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$SYSROOT" "$W/uprof-build" && mkdir -p "$SYSROOT"
  for d in "${devdebs[@]}"; do dpkg-deb -x "$d" "$SYSROOT" || fail "cannot unpack $d"; done
  echo "$stamp" >"$W/sysroot.stamp"
fi
note "kernel $kpkg, sysroot of ${#devpkgs[@]} -dev packages"

# --- 3. uprof for aarch64, static ------------------------------------------------------
export PKG_CONFIG_LIBDIR=$SYSROOT/usr/lib/aarch64-linux-gnu/pkgconfig:$SYSROOT/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$SYSROOT
XB=$W/uprof-build
# -O2 as in the project's default build, without -g (a quicker build).
fresh "$XB/CMakeCache.txt" "$SRC/cmake/aarch64-linux-gnu.cmake" || rm -rf "$XB"
if [ ! -f "$XB/CMakeCache.txt" ]; then
  run_logged cross-configure 180 cmake -S "$SRC" -B "$XB" -DCMAKE_TOOLCHAIN_FILE="$SRC/cmake/aarch64-linux-gnu.cmake" \
    -DUPROF_AARCH64_SYSROOT="$SYSROOT" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DUPROF_TESTS=OFF -DUPROF_BENCH=OFF ||
    { rm -rf "$XB"; fail "cross configure failed (see $LOGS/cross-configure.log)"; }
fi
run_logged cross-build 780 cmake --build "$XB" --target uprof -j"$(nproc)" ||
  fail "cross build of uprof failed (see $LOGS/cross-build.log)"
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
! aarch64-linux-gnu-readelf -lW "$XB/uprof" | grep -q 'program interpreter' || fail "$XB/uprof is not static"
note "uprof cross-built ($(du -k "$XB/uprof" | cut -f1) kB)"

# --- 4. The host-side checker ---------------------------------------------------------
# Built from the same tree as the cross uprof (the data file's reader and what it
# needs: store/, util/, arch/), not from BUILD_DIR's objects: those may be from another
# state of the tree, and another build may be running in BUILD_DIR.
check_srcs=("$SRC"/scripts/arm64/*.cpp "$SRC"/src/store/*.cpp "$SRC"/src/model/*.cpp "$SRC"/src/util/*.cpp "$SRC"/src/arch/*.cpp)
mapfile -t check_headers < <(find "$SRC/include/uprof" "$SRC/scripts/arm64" -name '*.h')
if ! fresh "$W/check_data" "${check_srcs[@]}" "${check_headers[@]}"; then
  run_logged check-build 300 g++ -std=c++20 -O1 -Wall -Wextra -I"$SRC/include" -o "$W/check_data" "${check_srcs[@]}" -lelf -lz ||
    fail "building check_data failed (see $LOGS/check-build.log)"
fi
note "checker built"

# --- 5. Fixtures, /init, initramfs ----------------------------------------------------
# Built into $W/fx (kept, rebuilt when a source is newer), then copied into the tree.
FX=$SRC/tests/fixtures
B=$W/fx
mkdir -p "$B"
: >"$LOGS/fixtures.log"
# xcc OUT SOURCE [FLAGS...]: aarch64-linux-gnu-gcc -o $B/OUT SOURCE FLAGS, unless fresh.
xcc() {
  local out=$B/$1 src=$2
  shift 2
  fresh "$out" "$src" "$0" && return 0
  echo "aarch64-linux-gnu-gcc -o $out $src $*" >>"$LOGS/fixtures.log"
  limit 120
  timeout "$LIMIT" aarch64-linux-gnu-gcc -o "$out" "$src" "$@" >>"$LOGS/fixtures.log" 2>&1 ||
    fail "building an aarch64 fixture failed: aarch64-linux-gnu-gcc -o $out $src $* (see $LOGS/fixtures.log)"
}
xcc init "$SRC/scripts/arm64/init.c" -O2 -static -Wall -Wextra
# The static workloads warn that dlopen needs the shared libc at run time: their dlopen
# mode is not used.
xcc workload_static "$FX/workload.c" -g -O2 -static -pthread
xcc workload_static_O0 "$FX/workload.c" -g -O0 -static -pthread
xcc workload_O0 "$FX/workload.c" -g -O0 -pthread -ldl
xcc workload_O2 "$FX/workload.c" -g -O2 -pthread -ldl
# Every function starts with `bti c` (a hint: a no-op on the cortex-a57 qemu emulates).
xcc workload_bti "$FX/workload.c" -g -O2 -mbranch-protection=standard -pthread -ldl
# Probe placement: no_loop is `bti c; cbz x0`, probed at the cbz (simulated) unless --exact-site.
xcc placement_bti "$FX/placement.c" -g -O2 -mbranch-protection=standard
# Typed arguments from DWARF: x0-x7 then [sp], 16-byte structs in x0:x1, a 40-byte one by reference.
xcc args_O0 "$FX/args/args.c" -g -O0
xcc args_O2 "$FX/args/args.c" -g -O2
# Strings: a const char * parameter read as its string by the BPF engine's text program.
xcc strings_O2 "$FX/strings.c" -g -O2
# C++ measured at its exits (ret, simulated here): outer calls inner, which may throw.
limit 120
fresh "$B/throw" "$FX/throw.cpp" "$0" || timeout "$LIMIT" aarch64-linux-gnu-g++ -o "$B/throw" "$FX/throw.cpp" -g -O2 \
  -fno-reorder-blocks-and-partition >>"$LOGS/fixtures.log" 2>&1 || fail "building the aarch64 throw fixture failed (see $LOGS/fixtures.log)"
# USDT probes (sys/sdt.h as the test build copied it): a start/done pair with semaphores.
xcc usdt_O0 "$FX/usdt.c" "$FX/usdt_nosem.c" -g -O0 -I"$BUILD/tests/fixtures/sdt-include"
xcc usdt_O2 "$FX/usdt.c" "$FX/usdt_nosem.c" -g -O2 -I"$BUILD/tests/fixtures/sdt-include"
xcc mytest "$SRC/examples/mytest.c" -g -O2
# Why a call was slow (issue 33): work() from a spinning and a sleeping caller, -O2 without
# frame pointers as Debian builds (record -g, --stack-min, --off-cpu); and with them
# (--call-graph fp). The flags of tests/fixtures/CMakeLists.txt.
xcc why_slow "$FX/why_slow.c" -g -O2 -fomit-frame-pointer
xcc why_slow_fp "$FX/why_slow.c" -g -O2 -fno-omit-frame-pointer
xcc libfx.so.1 "$FX/libfx.c" -g -O2 -fPIC -shared -Wl,-soname,libfx.so.1
fresh "$B/uselib" "$B/libfx.so.1" || rm -f "$B/uselib"
xcc uselib "$FX/uselib.c" -g -O2 -Wl,-rpath,'$ORIGIN' "$B/libfx.so.1"

R=$W/root
rm -rf "$R" && mkdir -p "$R"/{bin,fx,lib,dev,proc,sys,tmp}
cp "$B/init" "$R/init"
for f in "$B"/*; do [ "$f" = "$B/init" ] || cp "$f" "$R/fx/"; done
cp -L /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 /usr/aarch64-linux-gnu/lib/libc.so.6 "$R/lib/"
for l in libstdc++.so.6 libgcc_s.so.1 libm.so.6; do cp -L "/usr/aarch64-linux-gnu/lib/$l" "$R/lib/"; done
aarch64-linux-gnu-strip -o "$R/bin/uprof" "$XB/uprof"
# Without these nodes (not root) /init mounts devtmpfs and opens the console itself.
mknod "$R/dev/console" c 5 1 2>/dev/null || true
mknod "$R/dev/null" c 1 3 2>/dev/null || true

# The cases: NAME | calls of the probed function | check_data options | uprof record args...
# (@FX@ in the check options is the host's copy of the guest's /fx, @ROOT@ of its /).
# why_slow: -g on both engines (bpf: the default here, uprobe-PMU events, as 6.1 has no
# multi-uprobe links; perf: --backend pmu), each call's caller and stack checked; with
# --stack-min below the 1 ms every call takes, the stacks come at the returns (on the perf
# engine the drain keeps them), and none with it above (60 s); stacks_lib: a probe on
# libc's clock_nanosleep, inside sleeper's work while work's saved return address is the
# return trampoline; --off-cpu (the BPF engine only: tp_btf sched_switch and task
# storage, both in 6.1) splits each call's time.
ws='--function work --values none --root @ROOT@ --why-slow'
cases=(
  'static_O2|2000|--function add --values seq|-e|add %x0 %x1 $retval|--|/fx/workload_static|calls|2000'
  'dyn_O0|2000|--function add --values seq|-e|add %x0 %x1 $retval|--|/fx/workload_O0|calls|2000'
  'dyn_O2|2000|--function add --values seq|-e|add %x0 %x1 $retval|--|/fx/workload_O2|calls|2000'
  'bti|2000|--function add --values seq --insn @FX@/workload_bti d503245f|-e|add %x0 %x1 $retval|--|/fx/workload_bti|calls|2000'
  'mytest|2000|--function add --values seq|-e|add %x0 %x1 $retval|--|/fx/mytest|2000'
  'threads|4000|--function add --values seq --threads 4|-e|add %x0 %x1 $retval|--|/fx/workload_O2|threads|4|1000'
  'fork|2000|--function add --values seq --threads 2|-e|add %x0 %x1 $retval|--|/fx/workload_O2|fork|1000'
  'exec|2000|--function add --values seq --threads 2|-e|add %x0 %x1 $retval|--|/fx/workload_O2|exec|1000'
  'lib|2000|--function fx_lib_add --values sum|-e|libfx:fx_lib_add %x0 %x1 $retval|--|/fx/uselib|1000'
  'dlopen|1000|--function fx_lib_add --values sum|-e|/fx/libfx.so.1:fx_lib_add %x0 %x1 $retval|--|/fx/workload_O2|dlopen|/fx/libfx.so.1|1000'
  'pmu_static_O2|2000|--function add --values seq|--backend|pmu|-e|add %x0 %x1 $retval|--|/fx/workload_static|calls|2000'
  'pmu_static_O0|2000|--function add --values seq|--backend|pmu|-e|add %x0 %x1 $retval|--|/fx/workload_static_O0|calls|2000'
  'pmu_dyn_O2|2000|--function add --values seq|--backend|pmu|-e|add %x0 %x1 $retval|--|/fx/workload_O2|calls|2000'
  'pmu_bti|2000|--function add --values seq --insn @FX@/workload_bti d503245f|--backend|pmu|-e|add %x0 %x1 $retval|--|/fx/workload_bti|calls|2000'
  'lr|2000|--function add --values seq --lr-trampoline|-e|add %x0 %x1 %lr $retval|-e|add%return %lr|--|/fx/workload_O2|calls|2000'
  'place_bti|2000|--function no_loop --values none --insn @FX@/placement_bti b4000040|-e|no_loop %x0 %x1 $retval|--|/fx/placement_bti|2000'
  'place_bti_exact|2000|--function no_loop --values none --insn @FX@/placement_bti d503245f|--exact-site|-e|no_loop %x0 %x1 $retval|--|/fx/placement_bti|2000'
  'exits|1000|--function outer(int) --values none --exits|-e|outer|--|/fx/throw|-1000'
  'args_O0|5|--values none|-e|f10|-e|f_pair|-e|f_big|-e|f_bool_char|-e|f_enum|--|/fx/args_O0'
  'args_O2|5|--values none|-e|f10|-e|f_pair|-e|f_big|-e|f_bool_char|-e|f_enum|--|/fx/args_O2'
  'args_strings|12|--values none|-e|lookup|-e|measure|-e|visit @visits +0(@greeting):string|--|/fx/strings_O2|4'
  'usdt_O0|3|--values none --usdt|-e|usdt:uprof_fx:work__*|--|/fx/usdt_O0'
  'usdt_O2|3|--values none --usdt|-e|usdt:uprof_fx:work__*|--|/fx/usdt_O2'
  "stacks|20|$ws 1000 --stacks-at entry|-g|-e|work|--|/fx/why_slow|10|1000"
  "pmu_stacks|20|$ws 1000 --stacks-at entry|--backend|pmu|-g|-e|work|--|/fx/why_slow|10|1000"
  "stacks_min|20|$ws 1000 --stacks-at return|-g|--stack-min|200us|-e|work|--|/fx/why_slow|10|1000"
  "pmu_stacks_min|20|$ws 1000 --stacks-at return|--backend|pmu|-g|--stack-min|200us|-e|work|--|/fx/why_slow|10|1000"
  "stacks_min_none|20|$ws 1000 --stacks-at none|-g|--stack-min|60s|-e|work|--|/fx/why_slow|10|1000"
  "pmu_stacks_min_none|20|$ws 1000 --stacks-at none|--backend|pmu|-g|--stack-min|60s|-e|work|--|/fx/why_slow|10|1000"
  "stacks_fp|20|$ws 1000 --stacks-at entry|--call-graph|fp|-e|work|--|/fx/why_slow_fp|10|1000"
  "stacks_lib|15|--values none --root @ROOT@ --why-slow 1000 --stacks-at entry|-g|--no-args|-e|libc:clock_nanosleep|-e|work|--|/fx/why_slow|5|1000"
  "pmu_stacks_lib|15|--values none --root @ROOT@ --why-slow 1000 --stacks-at entry|--backend|pmu|-g|--no-args|-e|libc:clock_nanosleep|-e|work|--|/fx/why_slow|5|1000"
  "offcpu|8|$ws 50000 --stacks-at entry|--off-cpu|-g|-e|work|--|/fx/why_slow|4|50000"
)
: >"$R/cases"
for c in "${cases[@]}"; do
  IFS='|' read -r name _calls _check rest <<<"$c"
  echo "$name|$rest" >>"$R/cases"
done
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1 >"$W/initramfs.cpio.gz") || fail "cannot make the initramfs"
note "initramfs $(du -k "$W/initramfs.cpio.gz" | cut -f1) kB, ${#cases[@]} cases"

# --- 6. Boot -----------------------------------------------------------------------------
# -nic none: otherwise qemu looks for efi-virtio.rom. panic=-1 + -no-reboot: a dying
# /init ends qemu at once instead of hanging until the timeout.
console=$W/console.log
set +e
limit 300
qsecs=$LIMIT
timeout "$qsecs" qemu-system-aarch64 -M virt -cpu cortex-a57 -smp 2 -m 1024 -accel tcg,thread=multi \
  -nographic -no-reboot -nic none -kernel "$vmlinuz" -initrd "$W/initramfs.cpio.gz" \
  -append "console=ttyAMA0 panic=-1 loglevel=4" </dev/null >"$console.raw" 2>&1
qrc=$?
set -e
tr -d '\r' <"$console.raw" >"$console" && rm -f "$console.raw"
grep '^ARM64-INFO' "$console" | sed 's/^/  /' || true
[ $qrc -eq 124 ] && fail "qemu timed out after $qsecs s (console: $console)"
grep -q '^ARM64-DONE' "$console" ||
  { tail -n 20 "$console" | sed 's/^/  console: /'; fail "the guest did not finish its cases (qemu exit $qrc; console: $console)"; }
note "guest finished (qemu exit $qrc)"

# --- 7. Check every case ----------------------------------------------------------------
out=$W/data
rm -rf "$out" && mkdir -p "$out"
failed=()
get() { sed -n "s/.* $1=\(-\?[0-9]*\).*/\1/p" <<<"$line"; }
for c in "${cases[@]}"; do
  IFS='|' read -r name calls check _rest <<<"$c"
  check=${check//@FX@/$B}
  check=${check//@ROOT@/$R}
  line=$(grep "^ARM64-CASE $name " "$console" | head -n 1)
  why=""
  if [ -z "$line" ]; then
    why="no result line"
  else
    rc=$(get rc) events=$(get events) lost=$(get lost) kernel=$(get kernel)
    if [ "$rc" != 0 ]; then why="uprof exited $rc"
    elif [ "$events" != $((2 * calls)) ]; then why="uprof printed $events events, want $((2 * calls))"
    elif [ "$lost" != 0 ]; then why="uprof printed $lost lost"
    elif [ "$kernel" != "$events" ]; then why="uprof printed kernel count $kernel for $events events"
    fi
  fi
  if [ -z "$why" ]; then
    size=$(awk -v n="$name" '$1 == "ARM64-END" && $2 == n {print $3; exit}' "$console")
    awk -v n="$name" '$1 == "ARM64-B64" && $2 == n {print $3}' "$console" | base64 -d >"$out/$name.data" 2>/dev/null ||
      true
    if [ -z "$size" ] || [ "$(stat -c %s "$out/$name.data")" != "$size" ]; then
      why="data file not recovered from the console (want ${size:-?} bytes, got $(stat -c %s "$out/$name.data"))"
    else
      limit 60
      # shellcheck disable=SC2086  # $check is several options
      result=$(timeout "$LIMIT" "$W/check_data" "$out/$name.data" --calls "$calls" $check 2>&1) || why=${result#check: FAIL: }
    fi
  fi
  if [ -n "$why" ]; then
    echo "  $name: FAIL: $why"
    grep "^ARM64-OUT $name: " "$console" | sed 's/^ARM64-OUT /    /' || true
    failed+=("$name")
  else
    echo "  $name: ok: ${line#"ARM64-CASE $name "} | ${result#check: ok: }"
  fi
done

# Typed arguments: what args.c passes, as `uprof script` prints it, on the host from the
# copied-out file and in the guest from the same file: both must match, line for line.
want_args=(
  'f10(a1=5, a2=2, a3=3, a4=4, a5=5, a6=6, a7=7, a8=8, a9=9, a10=-10) = 39'
  'f_bool_char(b=true, c='"'A'"', sc=-3, uc=200) = 62'
  'f_enum(c=BLUE) = 1'
  'f_pair(p={x=5, y=-5}) = 5'
  'f_big(b={a=5, b=6, c=7, d=8, e=9}) = 35'
)
# Strings (tests/fixtures/strings.c with 4 keys): each key, the NULL and the bad pointer,
# and 199 bytes cut at the default 64; globals read pc-relative (visit's 4th call).
want_strings=(
  'lookup(key="key0", n=0) = 177'
  'lookup(key="key3", n=3) = 55'
  'lookup(key="hello, world", n=0) = 140'
  'measure(s=<unreadable>) = 0'
  'measure(s="'"$(printf 'x%.0s' $(seq 64))"'"...) = 1'
  'visit(@visits=3, +0(@greeting)="hello, world")'
)
# USDT (tests/fixtures/usdt.c): work__start/work__done paired into calls of uprof_fx:work,
# the argument read from [sp, 24] at -O0 and from x19 at -O2.
want_usdt=(
  'uprof_fx:work($arg1=0)  {done:$arg1=0}'
  'uprof_fx:work($arg1=1)  {done:$arg1=1}'
  'uprof_fx:work($arg1=2)  {done:$arg1=2}'
)
calls_of() { sed -E 's/^[0-9.]+  [^ ]+ [0-9]+\/[0-9]+  //; s/  \[[^]]*\]$//'; }
for name in args_O0 args_O2 args_strings usdt_O0 usdt_O2; do
  case $name in
    args_strings) wants=("${want_strings[@]}") ;;
    usdt_*) wants=("${want_usdt[@]}") ;;
    *) wants=("${want_args[@]}") ;;
  esac
  [ -f "$out/$name.data" ] || continue
  why=""
  host=$("$BUILD/uprof" script "$out/$name.data" 2>&1) || why="host 'uprof script' failed: $host"
  guest=$(sed -n "s/^ARM64-SCRIPT $name: //p" "$console")
  [ -z "$why" ] && [ "$host" != "$guest" ] && why="the host's 'uprof script' differs from the guest's"
  # The guest kernel set work__start's semaphore while the probe was attached.
  if [ -z "$why" ] && [[ $name == usdt_* ]] && ! grep -qxF "ARM64-OUT $name: work traced: 3 of 3" "$console"; then
    why="the fixture did not see its semaphore set: $(grep "^ARM64-OUT $name: work traced" "$console")"
  fi
  for w in "${wants[@]}"; do
    [ -n "$why" ] && break
    calls_of <<<"$host" | grep -qxF -- "$w" || why="no '$w' in: $(calls_of <<<"$host" | tr '\n' ';')"
  done
  if [ -n "$why" ]; then
    echo "  $name typed: FAIL: $why"
    failed+=("$name-typed")
  else
    echo "  $name typed: ok: ${#wants[@]} calls with their arguments, the same on host and guest"
  fi
done

# `uprof bench --quick` in the guest: arm64's two bench targets (single-stepped add,
# emulated b), recorded through the live kernel; every figure a positive number of ns, and
# no optimized class (arm64 has none).
bench=$(sed -n 's/^ARM64-BENCH: //p' "$console")
brc=$(sed -n 's/^ARM64-BENCH-RC \(-\?[0-9]*\).*/\1/p' "$console")
rows=$(grep -E '^(single-stepped|emulated|optimized) \(' <<<"$bench" || true)
why=""
if [ "$brc" != 0 ]; then why="uprof bench exited ${brc:-?}"
elif ! grep -q '^single-stepped (' <<<"$rows" || ! grep -q '^emulated (' <<<"$rows"; then why="a class is missing"
elif grep -q '^optimized (' <<<"$rows"; then why="an optimized class on arm64"
elif ! awk '{for (i = NF - 3; i <= NF; i++) if ($i !~ /^[0-9]+$/ || $i == 0) bad = 1} END {exit bad}' <<<"$rows"; then
  why="a figure is not a positive number"
fi
if [ -n "$why" ]; then
  echo "  bench: FAIL: $why"
  sed 's/^/    /' <<<"$bench"
  failed+=("bench")
else
  echo "  bench: ok: $(tr -s ' ' <<<"$rows" | tr '\n' ';') ($(sed -n 's/^ARM64-BENCH-RC .*seconds=//p' "$console") s)"
fi

# Recorded on arm64, reported on the host (informational: report has its own tests).
if [ -x "$BUILD/uprof" ] && [ -f "$out/dyn_O2.data" ]; then
  limit 60
  if timeout "$LIMIT" "$BUILD/uprof" report "$out/dyn_O2.data" >"$LOGS/host-report.log" 2>&1; then
    note "host 'uprof report' reads the arm64 file: $(grep -m1 '^recorded:' "$LOGS/host-report.log" | sed 's/.*(//; s/)$//')"
  else
    note "WARNING: host 'uprof report' failed on the arm64 file (see $LOGS/host-report.log)"
  fi
fi

note "done"
[ ${#failed[@]} -eq 0 ] || fail "${#failed[@]} of ${#cases[@]} cases: ${failed[*]}"
echo "arm64 live: PASS (${#cases[@]} cases, $(($(date +%s) - T0)) s)"
