#!/bin/bash
# SPDX-License-Identifier: MIT
#
# db_unsafe.sh: nothing inside a database is followed (SPEC §12.1, "Entries
# inside DB").  Someone who can write the database directory plants a
# symbolic link - DB/images/XX to a directory outside the database, one
# index file DB/images/XX/UUID.symdb, or DB/tmp - pointing at a victim
# directory holding copies of valid index files and a file of their choice
# (old enough for gc to call it stray).  Then build, gc (everything unused,
# so it would delete), rm, compact, reindex, verify and verify --repair,
# export and import each run on a fresh copy of that database: the victim's
# sha256s stay the same, the link stays, verify names it, and each command
# exits as README's "Bad inputs" table says.
source "$(dirname "$0")/../cli/lib.sh"

A=$BIN/c_gcc_O2_pie.symtab
B=$BIN/lib_gcc_O2.so.symtab
C=$BIN/cpp_g++_O2_pie.symtab
UA=$(build_id "$A")
UB=$(build_id "$B")
XX=${UA:0:2}
[[ ${UB:0:2} != "$XX" ]] || fail "fixtures: $A and $B share images/$XX"
TEMPLATE=$SCRATCH/template
DB=$SCRATCH/db
VICTIM=$SCRATCH/victim
LATE=$(($(date +%s) + 400 * 86400)) # every image unused, every file past --grace

# victim_sum: one line per victim file (and link) with its sha256
victim_sum() { (cd "$VICTIM" && find . \( -type f -o -type l \) -print0 | sort -z | xargs -0 -r sha256sum); }

"$SYMDB" --db "$TEMPLATE" build -q "$A" "$B" "$C" >/dev/null || fail "building the template database"

# fresh KIND: a copy of the template with KIND planted (xx, file or tmp)
fresh() {
	rm -rf "$DB" "$VICTIM"
	cp -a "$TEMPLATE" "$DB"
	mkdir -p "$VICTIM"
	echo "the victim's own file" >"$VICTIM/precious"
	case $1 in
	xx) # DB/images/XX -> VICTIM, which holds what XX held and more
		cp -a "$DB/images/$XX/." "$VICTIM/"
		rm -rf "$DB/images/$XX"
		ln -s "$VICTIM" "$DB/images/$XX"
		LINK=$DB/images/$XX WHAT="images/$XX"
		;;
	file) # DB/images/XX/UA.symdb -> a valid copy in VICTIM
		cp -a "$DB/images/$XX/$UA.symdb" "$VICTIM/$UA.symdb"
		rm "$DB/images/$XX/$UA.symdb"
		ln -s "$VICTIM/$UA.symdb" "$DB/images/$XX/$UA.symdb"
		LINK=$DB/images/$XX/$UA.symdb WHAT="images/$XX/$UA.symdb"
		;;
	tmp) # DB/tmp -> VICTIM: a build's leftovers live there
		rmdir "$DB/tmp"
		ln -s "$VICTIM" "$DB/tmp"
		LINK=$DB/tmp WHAT=tmp
		;;
	esac
	touch -d '2000-01-01' "$VICTIM"/*
	BEFORE=$(victim_sum)
}

# unchanged LABEL: the victim and the link survived
unchanged() {
	[[ $(victim_sum) == "$BEFORE" ]] || fail "$1 changed the victim directory outside the database"
	[[ -L $LINK ]] || fail "$1 removed the symbolic link $WHAT (it must be left alone)"
}

# expect_rc N LABEL
expect_rc() { ((RC == $1)) || fail "$2: exit $RC, expected $1"; }

for kind in xx file tmp; do
	S=("$SYMDB" --db "$DB")

	fresh $kind
	run "${S[@]}" verify
	expect_rc 4 "$kind: verify"
	grep -qx "unsafe $WHAT: symbolic link, not followed" "$OUT" ||
		fail "$kind: verify does not report 'unsafe $WHAT: symbolic link, not followed'"
	unchanged "$kind: verify"

	fresh $kind
	SYMDB_NOW=$LATE run "${S[@]}" verify --repair
	expect_rc 4 "$kind: verify --repair"
	grep -qx "unsafe $WHAT: symbolic link, not followed" "$OUT" ||
		fail "$kind: verify --repair does not report $WHAT"
	unchanged "$kind: verify --repair"

	fresh $kind
	SYMDB_NOW=$LATE run "${S[@]}" gc --unused-for 1d
	expect_rc 1 "$kind: gc"
	grep -q "$WHAT: symbolic link, not followed" "$ERR" || fail "$kind: gc does not name $WHAT"
	unchanged "$kind: gc"

	fresh $kind
	SYMDB_NOW=$LATE run "${S[@]}" compact --unused-for 1d
	expect_rc 1 "$kind: compact"
	unchanged "$kind: compact"

	fresh $kind
	run "${S[@]}" reindex
	[[ $kind == tmp ]] && want=0 || want=4
	expect_rc $want "$kind: reindex"
	unchanged "$kind: reindex"
	if [[ $kind != tmp ]]; then
		# unsafe, not damaged: the entry is no damage, and left to the operator
		grep -qxF "symdb: reindex: skipped unsafe $WHAT: symbolic link, not followed" "$ERR" ||
			fail "$kind: reindex does not call $WHAT unsafe: $(cat "$ERR")"
		grep -q "skipped damaged" "$ERR" && fail "$kind: reindex calls an unsafe entry damaged"
		grep -q "skipped 0 damaged files, 1 unsafe entries" "$OUT" ||
			fail "$kind: reindex summary: $(cat "$OUT")"
		"${S[@]}" list | grep -q "^$UA" && fail "$kind: reindex adopted the image behind $WHAT"
	fi

	# export reads every image: the one behind the link is refused
	fresh $kind
	run "${S[@]}" export --all
	[[ $kind == tmp ]] || ((RC != 0)) || fail "$kind: export read the image behind $WHAT"
	unchanged "$kind: export"

	if [[ $kind != tmp ]]; then
		fresh $kind
		run "${S[@]}" rm "$UA"
		expect_rc 1 "$kind: rm"
		grep -q "symbolic link, not followed" "$ERR" || fail "$kind: rm does not say why"
		unchanged "$kind: rm"
	fi

	fresh $kind
	run "${S[@]}" build -q --force "$A"
	expect_rc 1 "$kind: build --force"
	grep -q "$WHAT: symbolic link, not followed" "$ERR" || fail "$kind: build does not name $WHAT"
	unchanged "$kind: build --force"

	# import: an export of the template, into the planted database
	fresh $kind
	"$SYMDB" --db "$TEMPLATE" export "$UA" >"$SCRATCH/bundle" || fail "export from the template"
	run "${S[@]}" import --force "$SCRATCH/bundle"
	((RC != 0)) || fail "$kind: import --force through $WHAT succeeded"
	grep -q "$WHAT: symbolic link, not followed" "$ERR" || fail "$kind: import does not name $WHAT"
	unchanged "$kind: import"
	note "$kind: $WHAT as a symbolic link is reported and never followed"
done
