#!/usr/bin/env bash
# README's second command: set up a fresh machine, build, and run every test.
# Then the robustness checks: each fuzzer for 60 s (scripts/fuzz.sh) and the suite
# again under ASan + UBSan (scripts/sanitize.sh); `--quick` or UPROF_QUICK=1 skips them.
# Ends with ctest's summary; exits non-zero when any test or check fails.
# Other arguments go to the first ctest run.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=${UPROF_QUICK:-0}
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi
scripts/setup.sh
scripts/build.sh
status=0
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@" || status=$?
if [ "$quick" != 1 ]; then
  scripts/fuzz.sh "${UPROF_FUZZ_SECONDS:-60}" || status=1
  scripts/sanitize.sh || status=1
fi
exit $status
