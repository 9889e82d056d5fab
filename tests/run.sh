#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run.sh [CTEST-ARGS...]: configure, build and run every symdb test.  This is
# the README's test command, and .ci/run calls exactly it.
#   SYMDB_BUILD_DIR   build directory (default: build/ at the top level)
#   SYMDB_CMAKE_ARGS  extra configure arguments, e.g.
#                     -DSYMDB_SANITIZE=address,undefined
#   JOBS              parallel jobs for the build and for ctest (default 2)
# Extra arguments go to ctest: `tests/run.sh -L unit`, `tests/run.sh -LE real`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SYMDB_BUILD_DIR:-$root/build}
jobs=${JOBS:-2}
source "$root/tests/direct-python.sh"
symdb_direct_python "$build/tests/direct-python"
# The benchmarks are built too (about 15 s on 2 cores), so that a change to a
# header they share with the tools cannot break bench/run.sh unnoticed.
# shellcheck disable=SC2086 # SYMDB_CMAKE_ARGS is a list of words on purpose
cmake -S "$root" -B "$build" -DSYMDB_WERROR=ON -DSYMDB_BUILD_TESTS=ON -DSYMDB_BUILD_BENCH=ON \
	${SYMDB_CMAKE_ARGS:-}
cmake --build "$build" -j"$jobs"
cd "$build"
# no label summary, so the output ends with ctest's "N% tests passed" line
# (and the list of failures, if any)
exec ctest --output-on-failure --no-label-summary -j"$jobs" "$@"
