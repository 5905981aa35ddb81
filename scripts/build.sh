#!/usr/bin/env bash
# Configures and builds uprof, its tests, fixtures and benchmarks in build/.
# CI=true turns warnings into errors. Progress lines are hidden; errors are not.
set -euo pipefail
cd "$(dirname "$0")/.."
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUPROF_WERROR=$werror >/dev/null
log=build/build.log
if ! cmake --build build -j"$(nproc)" >"$log" 2>&1; then
  grep -Ev '^\[ *[0-9]+%\]|^gmake|^Consolidate' "$log" | tail -60
  echo "build: failed (full log: $log)" >&2
  exit 1
fi
grep -E 'warning:' "$log" | head -20 || true
test -x build/uprof
