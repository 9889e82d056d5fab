#!/bin/bash
# SPDX-License-Identifier: MIT
#
# rm_race.sh: `symdb query` indexing on first sight while other processes
# remove the image (`symdb rm`) and build it again.  A query builds the
# file and then opens the image it published; when an rm came in between,
# it answered ?? with "not indexed ... run 'symdb build' first" and exit 1
# (9 to 15 queries of 300).  Each query must answer as llvm-symbolizer-14,
# exit 0, nothing on stderr: the add is made again, and after a few
# removals in a row the file is indexed privately.
source "$(dirname "$0")/../cli/lib.sh"
require gcc llvm-symbolizer-14

QUERIES=${RM_RACE_QUERIES:-150}
DB=$SCRATCH/db
# A library of some size (libz: indexing takes a few milliseconds, the
# window the race needs); a fixture program if it is missing.
lib=$(readlink -f /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null || true)
if [[ -f $lib ]]; then
	cp "$lib" "$SCRATCH/p"
	addr=0x$(nm -D --defined-only "$SCRATCH/p" | awk '$2 == "T" { print $1; exit }')
else
	cat >"$SCRATCH/p.c" <<'C'
__attribute__((noinline)) int leaf(int x) { return x * 3; }
int main(int argc, char **argv) { (void)argv; return leaf(argc); }
C
	gcc -g -O1 -o "$SCRATCH/p" "$SCRATCH/p.c" || fail "gcc"
	addr=0x$(nm "$SCRATCH/p" | awk '$3 == "leaf" { print $1 }')
fi
want=$(llvm-symbolizer-14 --obj "$SCRATCH/p" "$addr")
run "$SYMDB" --db "$DB" build "$SCRATCH/p"
expect_ok "build"
uuid=$(awk '{ print $2 }' "$OUT")

stop=$SCRATCH/stop
( while [[ ! -e $stop ]]; do "$SYMDB" --db "$DB" rm "$uuid" >/dev/null 2>&1 || true; done ) &
rm_pid=$!
( while [[ ! -e $stop ]]; do "$SYMDB" --db "$DB" build "$SCRATCH/p" >/dev/null 2>&1 || true; done ) &
build_pid=$!
bad=0
for ((i = 0; i < QUERIES; i++)); do
	run "$SYMDB" --db "$DB" query --obj "$SCRATCH/p" "$addr"
	no_crash "query $i"
	if ((RC != 0)) || [[ $(cat "$OUT") != "$want" || -s $ERR ]]; then
		bad=$((bad + 1))
		last="exit $RC: $(head -c 300 "$OUT") $(head -c 300 "$ERR")"
	fi
done
touch "$stop"
wait "$rm_pid" "$build_pid" || true
((bad == 0)) || fail "$bad of $QUERIES queries differ from llvm-symbolizer-14; last: $last"
run "$SYMDB" --db "$DB" verify
no_crash "verify"
note "rm_race: $QUERIES queries during rm and build loops answered as llvm-symbolizer-14"
