#!/bin/bash
# SPDX-License-Identifier: MIT
#
# db_foreign.sh: an entry inside a database owned by neither the database
# directory's owner nor the user running symdb (SPEC §12.1, "Entries inside
# DB") is reported by verify and never followed, written through or removed.
# Run as root (the case of the issue: root's gc in a database another user
# can write), entries are chowned to `nobody`: a whole DB/images/XX, a stray
# file in another DB/images/YY and a leftover in DB/tmp, all old enough for
# gc to remove.  Skipped (77) when not root.
source "$(dirname "$0")/../cli/lib.sh"

(($(id -u) == 0)) || { echo "SKIP: needs root to chown to another user"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user 'nobody'"; exit 77; }

A=$BIN/c_gcc_O2_pie.symtab
B=$BIN/lib_gcc_O2.so.symtab
UA=$(build_id "$A")
UB=$(build_id "$B")
XX=${UA:0:2} YY=${UB:0:2}
[[ $XX != "$YY" ]] || fail "fixtures: $A and $B share images/$XX"
TEMPLATE=$SCRATCH/template
DB=$SCRATCH/db
LATE=$(($(date +%s) + 400 * 86400))

"$SYMDB" --db "$TEMPLATE" build -q "$A" "$B" >/dev/null || fail "building the template database"

# planted: sha256 and owner of every foreign entry
planted() {
	(cd "$DB" && find "images/$XX" "images/$YY/planted.symdb" tmp/planted.XXXXXX \
		-printf '%p %u ' -type f -exec sha256sum {} \; | sort)
}
fresh() {
	rm -rf "$DB"
	cp -a "$TEMPLATE" "$DB"
	echo planted >"$DB/images/$YY/planted.symdb"
	echo planted >"$DB/tmp/planted.XXXXXX"
	touch -d '2000-01-01' "$DB/images/$YY/planted.symdb" "$DB/tmp/planted.XXXXXX"
	chown -R nobody "$DB/images/$XX" "$DB/images/$YY/planted.symdb" "$DB/tmp/planted.XXXXXX"
	BEFORE=$(planted)
	S=("$SYMDB" --db "$DB")
}
unchanged() { [[ $(planted) == "$BEFORE" ]] || fail "$1 changed or removed a foreign entry"; }
expect_rc() { ((RC == $1)) || fail "$2: exit $RC, expected $1"; }

fresh
SYMDB_NOW=$LATE run "${S[@]}" verify --repair
expect_rc 4 "verify --repair"
for e in "images/$XX" "images/$YY/planted.symdb" tmp/planted.XXXXXX; do
	grep -qx "unsafe $e: owned by another user, not followed" "$OUT" ||
		fail "verify --repair does not report 'unsafe $e: owned by another user, not followed'"
done
unchanged "verify --repair"

fresh
SYMDB_NOW=$LATE run "${S[@]}" gc --unused-for 1d
expect_rc 1 gc
grep -q "images/$XX: owned by another user, not followed" "$ERR" || fail "gc does not name images/$XX"
unchanged gc
"${S[@]}" list | grep -q "^$UB" && fail "gc kept $UB, whose directory is not foreign"

fresh
run "${S[@]}" rm "$UA"
expect_rc 1 rm
"${S[@]}" list | grep -q "^$UA" || fail "rm of an image in a foreign directory removed its entry"
unchanged rm

fresh
SYMDB_NOW=$LATE run "${S[@]}" compact --unused-for 1d
expect_rc 1 compact
unchanged compact

fresh
run "${S[@]}" reindex
expect_rc 4 reindex
unchanged reindex

fresh
run "${S[@]}" build -q --force "$A"
expect_rc 1 "build --force"
grep -q "images/$XX: owned by another user, not followed" "$ERR" || fail "build does not name images/$XX"
unchanged "build --force"
note "foreign entries are reported and never followed, written or removed"
