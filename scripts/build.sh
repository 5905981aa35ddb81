#!/usr/bin/env bash
# Configures and builds uprof, its tests, fixtures and benchmarks in build/.
# CI=true turns warnings into errors.
set -euo pipefail
cd "$(dirname "$0")/.."
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUPROF_WERROR=$werror >/dev/null
cmake --build build -j"$(nproc)" 2>&1 | grep -Ev '^\[ *[0-9]+%\]|^gmake|^Consolidate|^$' || true
test -x build/uprof
