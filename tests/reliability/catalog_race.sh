#!/bin/bash
# SPDX-License-Identifier: MIT
#
# catalog_race.sh: readers racing the build that creates a database (SPEC
# §12.1).  Each round starts `symdb build` into a fresh directory while two
# readers spin `symdb list` and `symdb query` on it until the build is done.
# A reader may find no database yet ("no symdb database here", "No such
# file"), but never a half-created catalog: no "MDB_NOTFOUND", "not a symdb
# catalog", "MDB_INVALID", "truncated" or "Bad file descriptor".  The
# catalog is created in DB/.catalog-new.* and renamed into place; before
# that, LMDB's data.mdb existed before its named databases did.
source "$(dirname "$0")/../cli/lib.sh"

ROUNDS=${CATALOG_RACE_ROUNDS:-60}
P=$FIXTURES/full/c_gcc_O2_pie
[[ -f $P ]] || P=$BIN/c_gcc_O0_pie.symtab
bad=$SCRATCH/bad
: >"$bad"

spin() { # spin CMD...: until the build's marker appears, keep only bad lines
	local out=$SCRATCH/spin.$BASHPID
	while [[ ! -e $SCRATCH/done ]]; do
		"$@" >/dev/null 2>"$out" || true
		grep -E 'MDB_|not a symdb catalog|truncated|Bad file descriptor|data.mdb|Bus error' \
			"$out" >>"$bad" || true
	done
}

reads=0
for ((r = 0; r < ROUNDS; r++)); do
	DB=$SCRATCH/db$r
	rm -f "$SCRATCH/done"
	spin "$SYMDB" --db "$DB" list &
	l=$!
	spin "$SYMDB" --db "$DB" query --obj "$P" 0x1000 &
	q=$!
	sleep 0.0$((RANDOM % 3))
	run "$SYMDB" --db "$DB" build -q "$P"
	touch "$SCRATCH/done"
	wait "$l" "$q"
	expect_ok "build round $r"
	rm -rf "$DB"
	reads=$((reads + 1))
done
if [[ -s $bad ]]; then
	fail "$(wc -l <"$bad") reads saw a half-created catalog, e.g. $(sort "$bad" | uniq -c | head -3)"
fi
note "$ROUNDS rounds of a first build raced by list and query: no half-created catalog seen"
