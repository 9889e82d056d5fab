#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run.sh - the symdb benchmark, like for like, in one command (method:
# bench/README.md; the driver is bench/compare.py).
#
#   bench/run.sh            full run: 1,000,000 addresses per input, 3 interleaved
#                           repetitions (2 for llvm-symbolizer-14 and for GSYM on
#                           uniform sets); at most ~21 minutes on an idle 2-core
#                           machine; replaces the generated section of
#                           bench/RESULTS.md
#   bench/run.sh --quick    20,000 addresses, 1 repetition (checks that every
#                           step works, estimates the full run's time); writes
#                           WORK/RESULTS-quick.md
# Options:
#   --work DIR       scratch directory (default /tmp/symdb-bench): address sets,
#                    databases, .gsym files, outputs, raw.jsonl (every run)
#   --build DIR      build directory (default SRC/build-bench)
#   --rev REV        measure git revision REV (exported with git archive into
#                    WORK/src and built in WORK/build) instead of the work tree
#   --out FILE       where to write the report
#   --only PARTS     comma-separated subset of build,cli,lib,many,paths,open
#   --images NAMES   comma-separated subset of libpython,libc,libstdcxx,ceph-osd
#   --n N            addresses (lines) per input
#   --reps N         repetitions of the cheap side of each pair (default 3)
#   --slow-reps N    repetitions of llvm-symbolizer-14 and of GSYM on uniform
#                    sets (default 2)
#   --no-install     do not apt-get install ceph-osd ceph-osd-dbg when missing
#                    (the image is then skipped with a message)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CMDLINE="bench/run.sh${*:+ $*}"
SRC=$(cd "$HERE/.." && pwd)
WORK=/tmp/symdb-bench
BUILD=
REV=
PASS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--quick|--no-install) PASS+=("$1") ;;
	--out|--only|--images|--n|--reps|--slow-reps) PASS+=("$1" "$2"); shift ;;
	--work) WORK=$2; shift ;;
	--build) BUILD=$2; shift ;;
	--rev) REV=$2; shift ;;
	-h|--help) sed -n '3,/^set -euo/p' "$0" | grep '^#' | cut -c3-; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [ -n "$REV" ]; then
	rm -rf "$WORK/src" && mkdir -p "$WORK/src"
	git -C "$SRC" archive "$REV" | tar -x -C "$WORK/src"
	COMMIT=$(git -C "$SRC" rev-parse --short "$REV")
	SRC_BUILD=$WORK/src
	BUILD=${BUILD:-$WORK/build}
else
	COMMIT=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
	SRC_BUILD=$SRC
	BUILD=${BUILD:-$SRC/build-bench}
fi
log "building $COMMIT in $BUILD (Release)"
cmake -S "$SRC_BUILD" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSYMDB_BUILD_BENCH=ON \
	-DSYMDB_BUILD_TESTS=OFF > "$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log"; exit 1; }
cmake --build "$BUILD" -j"$(nproc)" --target symdb_cli symdb_indexer_exe bench_resolve \
	gsym_lookup bench_open spawn_rusage > "$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; exit 1; }

exec python3 "$HERE/compare.py" --build "$BUILD" --work "$WORK" --commit "$COMMIT" \
	--command "$CMDLINE" "${PASS[@]}"
