# SPDX-License-Identifier: MIT
#
# lib.sh: helpers sourced by the tests/cli/*.sh scripts.  CTest passes
#   SYMDB     the symdb CLI          FIXTURES  the fixtures.build output
#   SCRATCH   this test's scratch directory (wiped here)
# and points SYMDB_DIR inside SCRATCH, so no test can touch ~/.cache.
# run() captures one command's exit code, stdout and stderr; the expect_*
# helpers check them the way the issue's acceptance words it: a failure is
# ONE line on stderr naming the file, an exit code in 1..127 (no signal), and
# no sanitizer report.
set -euo pipefail

: "${SYMDB:?SYMDB (the symdb CLI) must be set}"
: "${FIXTURES:?FIXTURES must be set}"
: "${SCRATCH:?SCRATCH must be set}"
case $SCRATCH in
*/scratch/*) ;;
*) echo "lib.sh: refusing to wipe SCRATCH=$SCRATCH (not under a scratch dir)" >&2; exit 2 ;;
esac
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
BIN=$FIXTURES/bin
OUT=$SCRATCH/.out
ERR=$SCRATCH/.err
RC=0

fail() {
	echo "FAIL: $*" >&2
	if [[ -f $OUT ]]; then
		echo "  last stdout: $(head -c 600 "$OUT")" >&2
		echo "  last stderr: $(head -c 600 "$ERR")" >&2
	fi
	exit 1
}
note() { echo "-- $*"; }

# require TOOL...: a test that cannot run reports SKIP (exit 77), never a pass.
require() {
	local t
	for t; do
		command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
	done
}
# skip_part WHY: one part of the test cannot run here.  The rest still runs;
# then the test ends as skipped (exit 77) unless something failed.
SKIPPED_PARTS=0
skip_part() {
	echo "SKIP: $*"
	SKIPPED_PARTS=$((SKIPPED_PARTS + 1))
}
trap 'rc=$?; if ((rc == 0 && SKIPPED_PARTS)); then echo "SKIP: $SKIPPED_PARTS part(s) could not run"; exit 77; fi' EXIT
# every test compares with the oracle or reads facts with these
require llvm-symbolizer-14 llvm-nm-14 llvm-readelf-14 readelf python3

# run CMD...: run it, keep RC, stdout in $OUT, stderr in $ERR
run() {
	set +e
	"$@" >"$OUT" 2>"$ERR" </dev/null
	RC=$?
	set -e
	return 0
}

# run_in INPUTFILE CMD...: same, with stdin from a file
run_in() {
	local in=$1
	shift
	set +e
	"$@" >"$OUT" 2>"$ERR" <"$in"
	RC=$?
	set -e
	return 0
}

no_crash() {
	((RC < 128)) || fail "$*: killed by signal $((RC - 128))"
	if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer' "$ERR"; then
		fail "$*: sanitizer report"
	fi
}

expect_ok() {
	no_crash "$*"
	((RC == 0)) || fail "$*: exit $RC, expected 0"
}

# expect_error WHAT NEEDLE...: non-zero exit, one stderr line holding a NEEDLE
expect_error() {
	local what=$1 n lines
	shift
	no_crash "$what"
	((RC != 0)) || fail "$what: exit 0, expected an error"
	lines=$(wc -l <"$ERR")
	((lines == 1)) || fail "$what: $lines lines on stderr, expected exactly one"
	for n in "$@"; do
		grep -qF -- "$n" "$ERR" && { note "$what: exit $RC: $(cat "$ERR")"; return 0; }
	done
	fail "$what: stderr does not name any of: $*"
}

# db_state DB: a text digest of everything a database holds (catalog as
# `symdb list` shows it, every index file's sha256, leftover temp files)
db_state() {
	local db=$1
	"$SYMDB" list --db "$db" 2>&1 | sed 's/^/list: /'
	(cd "$db" && find images -type f -print0 2>/dev/null | sort -z | xargs -0 -r sha256sum)
	find "$db/tmp" -mindepth 1 2>/dev/null | sed 's/^/tmp: /'
	return 0
}

# indexer_hook NAME: the path of a wrapper that runs the test build of
# symdb-indexer (SYMDB_INDEXER_TEST, CTest sets it) with `--test-hook NAME`;
# give it to the CLI as SYMDB_INDEXER=... (README "Tests").  The builder
# starts the indexer with an empty environment, so a hook cannot travel in
# a variable.
indexer_hook() {
	: "${SYMDB_INDEXER_TEST:?SYMDB_INDEXER_TEST (symdb-indexer-test) must be set}"
	local w=$SCRATCH/indexer-hook-$1
	printf '#!/bin/sh\nexec "%s" --test-hook %s "$@"\n' "$SYMDB_INDEXER_TEST" "$1" >"$w"
	chmod +x "$w"
	echo "$w"
}

# index_files DB: the index files of a database, one per line
index_files() { find "$1/images" -type f -name '*.symdb' 2>/dev/null | sort; }

# sanitized: true in the sanitizer lane when the test's oracle runs are
# skipped there (SYMDB_TEST_SANITIZED, set by CMake per test)
sanitized() { [[ -n ${SYMDB_TEST_SANITIZED:-} ]]; }

# expect_oracle WHAT FILE: $OUT is byte for byte the oracle's answer in FILE.
# In the sanitizer lane, where the oracle did not run (the plain lane
# compared), $OUT becomes FILE instead: the runs that follow on the same
# input must answer as this one did.
expect_oracle() {
	if sanitized; then
		cp "$OUT" "$2"
		return 0
	fi
	cmp -s "$OUT" "$2" ||
		fail "$1: differs from llvm-symbolizer-14 ($(diff "$2" "$OUT" | head -4 | tr '\n' ' ' | cut -c1-400))"
}

# llvm_query BIN ARGS...: the oracle's output, to compare with symdb query
llvm_query() {
	local bin=$1
	shift
	llvm-symbolizer-14 --debug-file-directory=/nonexistent --obj "$bin" "$@"
}

# build_id BIN: the GNU build-id as lowercase hex.  binutils' readelf: 5 ms
# a start here, llvm-readelf-14 88 ms (libLLVM's relocations), and some tests
# ask for hundreds.
build_id() {
	readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1
}

# numbered_images OBJ DIR N: DIR/p1 .. DIR/pN, object OBJ linked with build-id
# I (0x followed by 40 hex digits) for pI: N images of one program.  It is
# linked once; every other copy gets its build-id written into the copy's
# note, the only bytes in which links with another --build-id=0x... differ
# (the linker copies the given bytes as they are).
numbered_images() {
	local obj=$1 dir=$2 n=$3
	gcc "$obj" -o "$dir/p1" -Wl,--build-id=0x"$(printf '%040x' 1)" || fail "linking $obj"
	python3 - "$dir" "$n" <<'PY' || fail "numbered_images: cannot copy $dir/p1"
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
base = open(os.path.join(d, "p1"), "rb").read()
# the whole note (little-endian namesz 4, descsz 20, NT_GNU_BUILD_ID, "GNU")
note = b"\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0" + (1).to_bytes(20, "big")
if base.count(note) != 1:
    sys.exit("p1: its build-id note is not in it exactly once")
at = base.index(note) + 16
for i in range(2, n + 1):
    path = os.path.join(d, "p%d" % i)
    with open(path, "wb") as f:
        f.write(base[:at] + i.to_bytes(20, "big") + base[at + 20:])
    os.chmod(path, 0o755)
PY
}
