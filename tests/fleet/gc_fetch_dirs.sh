#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gc_fetch_dirs.sh: a debuginfod fetch keeps its download in a directory
# of its own, DB/tmp/fetch-HEX-PID-N (SPEC §12.9); one whose process died
# (killed during the download, here from a server that never answers) is
# a leftover that `symdb verify` reports and `symdb gc` removes past the
# grace period (SPEC §12.6), with everything in it.
#   1. the query killed: verify --grace 0 names the directory (exit 4);
#      gc with the default grace keeps it (young); gc --grace 0 removes it
#   2. a fetch in progress: gc --grace 0 leaves its directory, verify says
#      it may belong to a fetch in progress
#   3. a symbolic link planted in a dead fetch's directory: named on
#      stderr, neither followed nor removed (SPEC §12.1), exit 1; the file
#      it points to is unchanged
source "$(dirname "$0")/lib.sh"
hang_start
DB=$SCRATCH/db
U=dddd$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')

# start_fetch: a query of U from the hanging server in the background,
# QPID; waits for its fetch directory, FDIR (its name in DB/tmp)
start_fetch() {
	"$SYMDB" query --db "$DB" --debuginfod "$HANG_URL" --fetch-timeout 120 --uuid "$U" 0x1000 \
		>/dev/null 2>&1 &
	QPID=$!
	FLEET_PIDS+=("$QPID")
	for ((i = 0; i < 200; i++)); do
		FDIR=$(cd "$DB/tmp" 2>/dev/null && ls -d "fetch-$U-$QPID-"* 2>/dev/null | head -1) || true
		[[ -n $FDIR ]] && return 0
		sleep 0.05
	done
	fail "no DB/tmp/fetch-$U-$QPID-N directory while the fetch runs: $(ls -A "$DB/tmp" 2>&1)"
}

note "1. a fetch killed during its download leaves a leftover directory"
start_fetch
kill -KILL "$QPID"
wait "$QPID" 2>/dev/null || true
[[ -d $DB/tmp/$FDIR ]] || fail "the killed fetch left no directory (nothing to test)"
run "$SYMDB" verify --db "$DB" --grace 0
((RC == 4)) || fail "verify --grace 0: exit $RC, expected 4 (a leftover)"
grep -qx "leftover tmp/$FDIR/ (a fetch that died, [0-9]* bytes)" "$OUT" ||
	fail "verify does not name tmp/$FDIR/: $(cat "$OUT")"
run "$SYMDB" gc --db "$DB"
expect_ok "gc (default grace)"
[[ -d $DB/tmp/$FDIR ]] || fail "gc removed a fetch directory younger than the grace period"
run "$SYMDB" gc --db "$DB" --grace 0 -n
expect_ok "gc --grace 0 -n"
grep -q "^would remove tmp/$FDIR/ " "$OUT" && [[ -d $DB/tmp/$FDIR ]] ||
	fail "gc -n: $(cat "$OUT"), or removed"
run "$SYMDB" gc --db "$DB" --grace 0
expect_ok "gc --grace 0"
grep -q "^removed tmp/$FDIR/ (leftover of a fetch that died" "$OUT" || fail "gc: $(cat "$OUT")"
[[ ! -e $DB/tmp/$FDIR ]] || fail "gc --grace 0 left $FDIR: $(find "$DB/tmp/$FDIR")"

note "2. a fetch in progress keeps its directory"
start_fetch
run "$SYMDB" gc --db "$DB" --grace 0
expect_ok "gc --grace 0 during a fetch"
[[ -d $DB/tmp/$FDIR ]] || fail "gc removed the directory of a fetch in progress"
run "$SYMDB" verify --db "$DB" --grace 0
grep -qx "young tmp/$FDIR/ (may belong to a fetch in progress)" "$OUT" ||
	fail "verify during a fetch: $(cat "$OUT")"
kill -KILL "$QPID"
wait "$QPID" 2>/dev/null || true

note "3. a symbolic link inside a dead fetch's directory is left"
echo "keep me" >"$SCRATCH/outside"
ln -s "$SCRATCH/outside" "$DB/tmp/$FDIR/link"
mkdir -p "$SCRATCH/outdir" && echo "keep me too" >"$SCRATCH/outdir/file"
ln -s "$SCRATCH/outdir" "$DB/tmp/$FDIR/dirlink"
run "$SYMDB" gc --db "$DB" --grace 0
((RC == 1)) || fail "gc with links planted: exit $RC, expected 1"
grep -qF "$DB/tmp/$FDIR/link: symbolic link, not followed" "$ERR" ||
	fail "gc does not name the planted link: $(cat "$ERR")"
[[ -L $DB/tmp/$FDIR/link && -L $DB/tmp/$FDIR/dirlink ]] || fail "gc removed a planted link"
[[ $(cat "$SCRATCH/outside") == "keep me" && $(cat "$SCRATCH/outdir/file") == "keep me too" ]] ||
	fail "gc changed what a link points to"
rm "$DB/tmp/$FDIR/link" "$DB/tmp/$FDIR/dirlink"
run "$SYMDB" gc --db "$DB" --grace 0
expect_ok "gc once the links are gone"
[[ ! -e $DB/tmp/$FDIR ]] || fail "gc left $FDIR once the links were gone"
