#!/bin/bash
# SPDX-License-Identifier: MIT
#
# verify.sh: `symdb verify` detects each kind of damage the issue lists, and
# `--repair` removes exactly the damaged thing and nothing valid.
#
# A pristine database of three images (one with DWARF, so every table kind
# exists) is copied for each case, damaged one way with rel_patch, and then:
# verify exits 4 naming the damage; verify leaves the files as they were;
# verify --repair exits 5; a second verify exits 0; the two undamaged images
# are still listed and still resolve like llvm-symbolizer-14.
source "$(dirname "$0")/../cli/lib.sh"
: "${REL_PATCH:?REL_PATCH (the rel_patch helper) must be set}"

DW=$FIXTURES/full/c_gcc_O2_pie   # DWARF: all 12 table kinds
CPP=$FIXTURES/full/cpp_g++_O2_pie
LIB=$BIN/lib_gcc_O2.so.symtab
PRISTINE=$SCRATCH/pristine
DB=$SCRATCH/db
HOUR_AGO=$(($(date +%s) - 7200))

run "$SYMDB" --db "$PRISTINE" build -q "$DW" "$CPP" "$LIB"
expect_ok "build pristine"
U_DW=$(build_id "$DW")
U_CPP=$(build_id "$CPP")
U_LIB=$(build_id "$LIB")
F_DW=images/${U_DW:0:2}/$U_DW.symdb
run "$SYMDB" --db "$PRISTINE" verify
expect_ok "verify pristine"
grep -q ': clean$' "$OUT" || fail "pristine database not reported clean"

fresh() { rm -rf "$DB"; cp -a "$PRISTINE" "$DB"; }

# The oracle's answer at each image's first global function, asked once:
# it depends on the binary alone, not on the database a case damaged.
declare -A ADDR WANT
for bin in "$DW" "$CPP" "$LIB"; do
	ADDR[$bin]=0x$(llvm-nm-14 --defined-only "$bin" | awk '$2 == "T" && $3 !~ /^_/ {print $1; exit}')
	WANT[$bin]=$SCRATCH/want.${bin##*/}
	llvm_query "$bin" "${ADDR[$bin]}" >"${WANT[$bin]}" || fail "llvm-symbolizer-14 on $bin failed"
done

# the two images other than $1 must be intact and resolve like the oracle
others_intact() {
	local gone=$1 u bin listed
	listed=$("$SYMDB" --db "$DB" list) || fail "list after repair: exit $?"
	for u in "$U_DW:$DW" "$U_CPP:$CPP" "$U_LIB:$LIB"; do
		bin=${u#*:}
		u=${u%%:*}
		if [[ $u == "$gone" ]]; then
			grep -q "^$u " <<<"$listed" && fail "$u still listed after repair"
			continue
		fi
		grep -q "^$u " <<<"$listed" || fail "valid image $u removed"
		"$SYMDB" --db "$DB" query --obj "$bin" "${ADDR[$bin]}" | cmp -s - "${WANT[$bin]}" ||
			fail "$u: query differs from llvm-symbolizer at ${ADDR[$bin]} after repair"
	done
}

# case NAME NEEDLE GONE-UUID: expects the damage already applied to $DB
check_case() {
	local name=$1 needle=$2 gone=$3 before
	before=$(db_state "$DB")
	run "$SYMDB" --db "$DB" verify
	no_crash "$name: verify"
	((RC == 4)) || fail "$name: verify exit $RC, expected 4"
	grep -qF -- "$needle" "$OUT" || fail "$name: verify output lacks '$needle'"
	[[ $(db_state "$DB") == "$before" ]] ||
		fail "$name: verify without --repair changed the database"
	run "$SYMDB" --db "$DB" verify --repair
	no_crash "$name: verify --repair"
	((RC == 5)) || fail "$name: verify --repair exit $RC, expected 5"
	run "$SYMDB" --db "$DB" verify
	((RC == 0)) || fail "$name: verify after repair exit $RC, expected 0"
	others_intact "$gone"
	note "$name: detected ($needle) and repaired"
}

# A flipped byte in each table the file has.
fresh
KINDS=$("$REL_PATCH" "$DB/$F_DW" kinds)
(($(echo "$KINDS" | wc -l) >= 11)) || fail "fixture lacks DWARF tables: kinds $KINDS"
for k in $KINDS; do
	fresh
	"$REL_PATCH" "$DB/$F_DW" flip "$k" || fail "rel_patch flip $k"
	check_case "flip table $k" "damaged $U_DW" "$U_DW"
done

fresh
truncate -s -100 "$DB/$F_DW"
check_case truncated "damaged $U_DW" "$U_DW"

fresh
rm "$DB/$F_DW"
check_case missing "damaged $U_DW" "$U_DW"

for k in 3 7 10; do # SYMBOL_ADDRS, INLINE_ADDRS, LINE_ADDRS
	fresh
	REL_PATCH_DB=$DB "$REL_PATCH" "$DB/$F_DW" unsort "$k" || fail "rel_patch unsort $k"
	check_case "unsorted table $k" "not above the previous one" "$U_DW"
done

fresh
REL_PATCH_DB=$DB "$REL_PATCH" "$DB/$F_DW" badstr || fail "rel_patch badstr"
check_case "string offset out of range" "past the string pool" "$U_DW"

# An orphan: a valid index file no entry names.  Old: reported and removed;
# young: may be a build between rename and commit, only mentioned.
fresh
mkdir -p "$DB/images/ff"
cp "$DB/$F_DW" "$DB/images/ff/ff00.symdb"
touch -d "@$HOUR_AGO" "$DB/images/ff/ff00.symdb"
check_case orphan "orphan images/ff/ff00.symdb" none
[[ -e $DB/images/ff/ff00.symdb ]] && fail "orphan not removed"

fresh
"$REL_PATCH" "$DB/$F_DW" flip 4 >/dev/null
mkdir -p "$DB/images/ff"
cp "$PRISTINE/$F_DW" "$DB/images/ff/ff01.symdb"
touch -d "@$HOUR_AGO" "$DB/images/ff/ff01.symdb"
check_case "damaged image and orphan together" "orphan images/ff/ff01.symdb" "$U_DW"

fresh
mkdir -p "$DB/images/ff"
cp "$DB/$F_DW" "$DB/images/ff/ff02.symdb"
run "$SYMDB" --db "$DB" verify --repair
((RC == 0)) || fail "young orphan: verify --repair exit $RC, expected 0"
grep -q '^young images/ff/ff02.symdb' "$OUT" || fail "young orphan not mentioned"
[[ -e $DB/images/ff/ff02.symdb ]] || fail "young orphan removed (could be a build in progress)"
run "$SYMDB" --db "$DB" verify --grace 0
((RC == 4)) || fail "--grace 0: exit $RC, expected 4"

# An index file replaced behind the catalog by another image's file.  Young,
# a valid file of the same UUID would be a --force rebuild between rename and
# commit, but another UUID's file never is: damaged either way.
fresh
cp "$DB/images/${U_CPP:0:2}/$U_CPP.symdb" "$DB/$F_DW"
check_case "replaced by another image's file" "differ from the catalog" "$U_DW"

# The same UUID's file, valid on its own but not what the entry records: a
# --force rebuild between rename and commit while young, damage when old.
fresh
"$REL_PATCH" "$DB/$F_DW" reseal 12 || fail "rel_patch reseal"
run "$SYMDB" --db "$DB" verify --repair
((RC == 0)) || fail "young replaced file: verify --repair exit $RC, expected 0"
grep -q "^young $F_DW" "$OUT" || fail "young replaced file not mentioned"
touch -d "@$HOUR_AGO" "$DB/$F_DW"
check_case "replaced file, old" "differ from the catalog" "$U_DW"

# A leftover temp file of a build that died.
fresh
echo partial >"$DB/tmp/$U_DW.AbCdEf"
touch -d "@$HOUR_AGO" "$DB/tmp/$U_DW.AbCdEf"
check_case leftover "leftover tmp/$U_DW.AbCdEf" none
[[ -e $DB/tmp/$U_DW.AbCdEf ]] && fail "leftover not removed"

# The catalog's own records (SPEC §12.2, §12.6), damaged behind symdb's back
# with raw LMDB writes: verify names each one, --repair fixes exactly it.
hexs() { printf %s "$1" | od -An -tx1 | tr -d ' \n'; }
N_CPP=$(hexs "$(basename "$CPP")")00$U_CPP

fresh
"$REL_PATCH" "$DB" catput images "$U_DW" 01ff || fail "catput images"
run "$SYMDB" --db "$DB" list
((RC != 0)) || fail "list with an undecodable entry exited 0"
{ grep -q "^$U_CPP " "$OUT" && grep -q "^$U_LIB " "$OUT"; } ||
	fail "list did not list the readable entries after the damaged one"
grep -q "cannot be decoded" "$ERR" || fail "list: no message about the undecodable entry"
run "$SYMDB" --db "$DB" verify
grep -q '^2 images checked' "$OUT" || fail "verify did not check the 2 readable entries"
check_case "undecodable catalog value" "catalog images $U_DW" "$U_DW"

fresh
"$REL_PATCH" "$DB" catdel names "$N_CPP" || fail "catdel names"
check_case "missing names record" "catalog names $(basename "$CPP")/$U_CPP: no names record" none

fresh
"$REL_PATCH" "$DB" catput names "$(hexs ghost)00$(printf 'ab%.0s' {1..20})" "" ||
	fail "catput names"
check_case "dangling names record" "catalog names ghost/$(printf 'ab%.0s' {1..20}): no image" none

fresh
"$REL_PATCH" "$DB" catput used "$(printf 'cd%.0s' {1..20})" 0000000000000001 || fail "catput used"
check_case "stale used record" "catalog used $(printf 'cd%.0s' {1..20}): no image" none

fresh
"$REL_PATCH" "$DB" catput used "$U_CPP" 000001 || fail "catput used"
check_case "malformed used record" "catalog used $U_CPP: value is not a u64" none

# Usage and a missing database.
run "$SYMDB" --db "$SCRATCH/nothing" verify
((RC == 3)) || fail "verify on a missing database: exit $RC, expected 3"
run "$SYMDB" --db "$DB" verify --bogus
((RC == 2)) || fail "verify --bogus: exit $RC, expected 2"
note "verify: all cases passed"
