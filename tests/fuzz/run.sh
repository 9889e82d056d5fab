#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/fuzz/run.sh [SECONDS]: build the libFuzzer targets with clang
# (-fsanitize=fuzzer,address,undefined) in build-fuzz/ and run each for
# SECONDS (default 60), starting from the committed corpus.  New inputs go to
# a scratch corpus (build-fuzz/fuzz-corpus/<target>), never into the source
# tree; a crash leaves its input in build-fuzz/fuzz-artifacts/ and fails the
# run.  Skips (exit 0, with a note) when clang is not installed.
# Environment: SYMDB_FUZZ_BUILD_DIR (default build-fuzz), SYMDB_FUZZ_JOBS;
# SYMDB_FUZZ_SEED and SYMDB_FUZZ_RUNS make a run reproducible: a fixed seed
# and a fixed number of inputs (SECONDS then only caps the time), which is
# what CI uses, so that CI's verdict does not depend on luck or machine speed.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-60}
BUILD=${SYMDB_FUZZ_BUILD_DIR:-$PWD/build-fuzz}
CLANG=$(command -v clang-14 || command -v clang || true)
if [[ -z $CLANG ]]; then
	echo "tests/fuzz/run.sh: clang not found, fuzzing skipped"
	exit 0
fi
CLANGXX=$(command -v clang++-14 || command -v clang++ || echo "$CLANG")
TARGETS=(image_open elf macho crashreport batch)

CC=$CLANG CXX=$CLANGXX cmake -S . -B "$BUILD" -DSYMDB_BUILD_FUZZERS=ON \
	-DSYMDB_SANITIZE=address,undefined >/dev/null
cmake --build "$BUILD" -j"${SYMDB_FUZZ_JOBS:-2}" --target "${TARGETS[@]/#/fuzz_}"

mkdir -p "$BUILD/fuzz-artifacts"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/symdb-fuzz-run.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${TARGETS[@]}"; do
	corpus=$BUILD/fuzz-corpus/$t
	mkdir -p "$corpus"
	echo "=== fuzz_$t: ${SECS}s"
	mask=0
	[[ $t == crashreport ]] && mask=3 # symbolicate's own output and messages
	repro=()
	[[ -n ${SYMDB_FUZZ_SEED:-} ]] && repro+=(-seed="$SYMDB_FUZZ_SEED")
	[[ -n ${SYMDB_FUZZ_RUNS:-} ]] && repro+=(-runs="$SYMDB_FUZZ_RUNS")
	if ! TMPDIR=$scratch "$BUILD/tests/fuzz/fuzz_$t" -max_total_time="$SECS" -close_fd_mask=$mask \
		"${repro[@]}" \
		-artifact_prefix="$BUILD/fuzz-artifacts/$t-" -print_final_stats=1 \
		"$corpus" "tests/fuzz/corpus/$t" >"$BUILD/fuzz-$t.log" 2>&1; then
		echo "fuzz_$t: FAILED, see $BUILD/fuzz-$t.log and $BUILD/fuzz-artifacts/"
		grep -E 'ERROR|runtime error|SUMMARY' "$BUILD/fuzz-$t.log" | head -5 || true
		status=1
	else
		grep -E '^stat::(number_of_executed_units|new_units_added)' "$BUILD/fuzz-$t.log" |
			sed "s/^/fuzz_$t: /"
	fi
done
exit $status
