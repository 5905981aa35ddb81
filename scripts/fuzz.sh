#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/) with clang, ASan and UBSan in build-fuzz/,
# then runs each for SECONDS (default 60) from its seeds in tests/fuzz/corpus/<target>/.
# One line per target; exits non-zero if any target crashed, hung, leaked or failed to
# run. What a run finds is kept in build-fuzz/: the grown corpus in corpus/<target>/,
# a crashing input in artifacts/ (replay it: build-fuzz/tests/fuzz/<target> FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
seconds=${1:-60}
# target:seeds (tests/fuzz/corpus/<seeds>/); report_fuzz reads the data file seeds.
targets=(data_file_fuzz:data_file report_fuzz:data_file spec_fuzz:spec)
b=build-fuzz

werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
# -O1 and no NDEBUG: the asserts in Result<T> stay on.
CC=clang CXX=clang++ cmake -S . -B $b -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DUPROF_FUZZ=ON -DUPROF_TESTS=OFF -DUPROF_BENCH=OFF -DUPROF_WERROR=$werror >/dev/null
if ! cmake --build $b --target "${targets[@]%%:*}" -j"$(nproc)" >$b/build.log 2>&1; then
  grep -Ev '^\[ *[0-9]+%\]|^gmake|^Consolidate' $b/build.log | tail -40
  echo "fuzz: build failed (full log: $b/build.log)" >&2
  exit 1
fi

failed=0
for ts in "${targets[@]}"; do
  t=${ts%%:*}
  seeds=tests/fuzz/corpus/${ts#*:}
  mkdir -p $b/corpus/$t $b/artifacts
  log=$b/$t.log
  # New inputs go to the first (scratch) directory; the committed seeds are only read.
  # -rss_limit_mb / -malloc_limit_mb: an allocation sized by a length field is a bug.
  if $b/tests/fuzz/$t -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=512 \
       -print_final_stats=1 -artifact_prefix=$b/artifacts/$t- \
       $b/corpus/$t $seeds >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    corpus=$(ls $b/corpus/$t | wc -l)
    echo "fuzz: $t: ok, ${runs:-?} runs in ${secs:-?} s ($(( ${runs:-0} / (${secs:-1} > 0 ? ${secs:-1} : 1) )) exec/s), coverage ${cov:-?}, corpus $corpus inputs"
  else
    failed=1
    what=$(grep -Eo 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-z -]+|runtime error: .*|deadly signal|out-of-memory.*|timeout after.*' "$log" | head -1)
    art=$(ls -t $b/artifacts/$t-* 2>/dev/null | head -1)
    echo "fuzz: $t: FAILED: ${what:-see log}; input ${art:-none}; log $log"
  fi
done
exit $failed
