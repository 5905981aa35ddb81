#!/usr/bin/env bash
# README's first command: set up a fresh machine, build, and run uprof's main job on
# the bundled example (examples/mytest.c: add(a, b) called in a loop): record every
# call and return of add with its arguments and return value, then report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"   # the uprobe PMU needs CAP_SYS_ADMIN
set -x
build/uprof probe --list build/mytest add
$sudo build/uprof probe --vars build/mytest add
$sudo build/uprof record -e add -o build/mytest.data -- build/mytest 100000
build/uprof report build/mytest.data
build/uprof script build/mytest.data | sed -n 1,6p   # sed reads to the end: no SIGPIPE under pipefail
