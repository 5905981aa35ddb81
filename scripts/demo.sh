#!/usr/bin/env bash
# README's first command: set up a fresh machine, build, and run uprof's main job on
# the bundled example (examples/mytest.c: add(a, b) called in a loop).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
echo "+ uprof probe --list build/mytest add"
build/uprof probe --list build/mytest add
echo "+ uprof probe build/mytest add 'add%return'"
build/uprof probe build/mytest add 'add%return'
