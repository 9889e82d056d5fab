#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tsan.sh: the ThreadSanitizer job (.ci/run's third pass).  A
# -DSYMDB_SANITIZE=thread build of what the `concurrency` tests run (the CLI,
# the indexer, symdb-fetch, test_concurrency and its shim, test_fault, test_serve_cache; not the whole tree, to keep
# the job short), then `ctest -L concurrency`.  A TSan report (data race,
# lock-order inversion, a lock destroyed while held, ...) fails the test that
# triggered it.
#   SYMDB_BUILD_DIR  build directory (default: build-tsan/ at the top level)
#   JOBS             parallel jobs for the build and for ctest (default 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SYMDB_BUILD_DIR:-$root/build-tsan}
jobs=${JOBS:-2}
source "$root/tests/direct-python.sh"
symdb_direct_python "$build/tests/direct-python"
cmake -S "$root" -B "$build" -DSYMDB_WERROR=ON -DSYMDB_BUILD_TESTS=ON -DSYMDB_SANITIZE=thread
cmake --build "$build" -j"$jobs" --target symdb_cli symdb_indexer_exe symdb_fetch_exe test_concurrency \
	test_fault slow_publish_shim test_serve_cache
cd "$build"
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:exitcode=66}
exec ctest --output-on-failure --no-label-summary -j"$jobs" -L concurrency "$@"
