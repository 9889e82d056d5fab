#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# truncate_cmds.sh: an index file truncated while `verify`, `info`,
# `export` or `compact` has it mapped (issue 12, defect 8; truncate_live.sh
# does `query`).  The truncation lands at the same instant on every run:
# truncate_shim.so (LD_PRELOAD) cuts A's index file to three quarters (a page boundary) right after the
# command maps it, before it reads a byte.  Without the SIGBUS handler each
# command dies of SIGBUS (as it did before); with it, A is reported as
# damaged in one line, the other image B is handled as usual, and the exit
# code is the one each command documents for a damaged index file (4).
source "$(dirname "$0")/lib.sh"
: "${TRUNCATE_SHIM:?TRUNCATE_SHIM (truncate_shim.so) must be set}"
# a sanitizer build: the shim comes before the runtime in the preload list
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

A=$FIXTURES/full/cpp_g++_O2_pie
B=$FIXTURES/full/c_gcc_O2_pie
TEMPLATE=$SCRATCH/template
db=$SCRATCH/db
"$SYMDB" build -q --db "$TEMPLATE" "$A" "$B" >/dev/null || fail "building the template database"
ua=$(build_id "$A")
ub=$(build_id "$B")
rel_a=images/${ua:0:2}/$ua.symdb
rel_b=images/${ub:0:2}/$ub.symdb
LATE=$(($(date +%s) + 400 * 86400)) # every image unused for compact

# fresh: a copy of the template; fa is A's index file, size its size
fresh() {
	rm -rf "$db"
	cp -a "$TEMPLATE" "$db"
	fa=$(realpath "$db/$rel_a")
	size=$(stat -c %s "$fa")
	((size > 16384)) || fail "A's index file is only $size bytes"
}
# under_cut CMD...: run CMD with A's index file truncated right after it is mapped
under_cut() { run env LD_PRELOAD="$TRUNCATE_SHIM" TRUNCATE_ON_MAP="$fa" "$@"; }
# truncated WHAT: the shim did cut A's file under the command
truncated() {
	(($(stat -c %s "$fa") == size * 3 / 4 / 4096 * 4096)) || fail "$1: A's index file was not truncated"
}

# verify: A damaged, B checked and clean, the run goes on to the end
fresh
under_cut "$SYMDB" verify --db "$db"
no_crash "verify over a truncated index"
truncated verify
((RC == 4)) || fail "verify: exit $RC, expected 4: $(cat "$OUT" "$ERR")"
grep -q "^damaged $ua $rel_a: .*truncated" "$OUT" || fail "verify does not report A: $(cat "$OUT")"
(($(grep -c "^damaged" "$OUT") == 1)) || fail "verify: not exactly one damaged line: $(cat "$OUT")"
grep -q "$ub" "$OUT" && fail "verify reports B: $(cat "$OUT")"
grep -qx "2 images checked, 1 damaged, 0 orphans, 0 leftovers: damaged" "$OUT" ||
	fail "verify summary: $(tail -1 "$OUT")"
note "verify: $(grep '^damaged' "$OUT")"

# info: the open reads the file's last non-zero byte (reader_fault.c), which
# the cut makes fault: "truncated while being opened" (before, the open read
# the header only and the full check found it)
fresh
under_cut "$SYMDB" info --db "$db" "$ua"
no_crash "info of a truncated index"
truncated info
((RC == 4)) || fail "info: exit $RC, expected 4: $(cat "$OUT" "$ERR")"
grep -q "truncated while being opened" "$ERR" ||
	fail "info does not say truncated: $(cat "$OUT" "$ERR")"
(($(wc -l <"$ERR") == 1)) || fail "info: stderr is not one line: $(cat "$ERR")"
note "info: $(cat "$ERR")"

# export: all or nothing: nothing written, one line naming A
fresh
under_cut "$SYMDB" export --db "$db" --all
cp "$OUT" "$SCRATCH/bundle"
no_crash "export of a truncated index"
truncated export
((RC == 4)) || fail "export: exit $RC, expected 4: $(cat "$ERR")"
expect_error "export" "$ua: "
grep -q truncated "$ERR" || fail "export does not say truncated: $(cat "$ERR")"
[[ ! -s $SCRATCH/bundle ]] || fail "export wrote $(stat -c %s "$SCRATCH/bundle") bytes"

# compact: A fails and keeps its (truncated) file, B is compacted
fresh
under_cut env SYMDB_NOW=$LATE "$SYMDB" compact --db "$db" --unused-for 1d
no_crash "compact of a truncated index"
truncated compact
((RC == 4)) || fail "compact: exit $RC, expected 4: $(cat "$OUT" "$ERR")"
expect_error "compact" "$ua: "
grep -q truncated "$ERR" || fail "compact does not say truncated: $(cat "$ERR")"
grep -q "^compacted $ub " "$OUT" || fail "compact did not compact B: $(cat "$OUT")"
[[ -f $db/$rel_b.lz4 && ! -e $db/$rel_b ]] || fail "B has not its cold form alone"
[[ -f $fa && ! -e $fa.lz4 ]] || fail "A was compacted from a truncated file"
note "compact: $(cat "$ERR")"
