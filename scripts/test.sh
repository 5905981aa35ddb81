#!/usr/bin/env bash
# README's second command: set up a fresh machine, build, and run every test.
# Ends with ctest's summary; exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
