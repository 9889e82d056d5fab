#!/bin/bash
# SPDX-License-Identifier: MIT
#
# reindex.sh: `symdb reindex` rebuilds the catalog from the index files
# (SPEC §12.6).  With DB/catalog deleted, `build` and a first-sight `query`
# do not create an empty catalog over the index files (gc would then delete
# them as orphans); reindex restores the same entries
# (`list` equal but for Built_At, which becomes the file's mtime) and the
# same query results; an index file with a flipped byte is skipped with one
# line naming it (exit 4) and left for `verify --repair`; the rest resolve.
source "$(dirname "$0")/../cli/lib.sh"

FILES=("$FIXTURES/full/c_gcc_O2_pie" "$FIXTURES/full/cpp_g++_O2_pie"
	"$FIXTURES/full/lib_gcc_O2.so" "$FIXTURES/full/c_clang_O2_pie"
	"$FIXTURES/full/cpplib_g++_O2.so" "$BIN/nostd_aarch64.symtab")
DB=$SCRATCH/db
S=("$SYMDB" --db "$DB")

# list without Built_At, and the image name for the path (reindex cannot
# restore the recorded paths: the index files do not hold them); every
# file's query output over a fixed address set
listing() { "${S[@]}" list | awk '{ $4 = ""; sub(/.*\//, "", $5); print }'; }
queries() {
	local f
	for f in "${FILES[@]}"; do
		"${S[@]}" query --obj "$f" 0x0 0x1000 0x1130 0x1200 0x1800 0x2000 0x10000 || echo "query $f failed"
	done
}

run "${S[@]}" build -q "${FILES[@]}"
expect_ok "build"
list0=$(listing)
query0=$(queries)
[[ $(wc -l <<<"$list0") == "${#FILES[@]}" ]] || fail "build: not one entry per file"

rm -rf "$DB/catalog"
run "${S[@]}" list
((RC != 0)) || fail "list without a catalog succeeded"
# A build or a query indexing on first sight must not create an empty
# catalog over index files that are still there: `gc` would then delete
# them as orphans, while reindex can restore them all.
run "${S[@]}" build "${FILES[0]}"
expect_error "build with the catalog deleted" "holds index files: run 'symdb reindex'"
((RC == 3)) || fail "build with the catalog deleted: exit $RC, expected 3"
run "${S[@]}" query --obj "${FILES[1]}" 0x1130
((RC == 0)) || fail "query with the catalog deleted: exit $RC: $(cat "$ERR")"
grep -q "holds index files: run 'symdb reindex'" "$ERR" ||
	fail "query with the catalog deleted: no warning naming reindex: $(cat "$ERR")"
[[ ! -e $DB/catalog ]] || fail "a catalog was created over the index files"
run "${S[@]}" gc
((RC != 0)) || fail "gc without a catalog succeeded"
run "${S[@]}" reindex
expect_ok "reindex without a catalog"
grep -qx "reindexed ${#FILES[@]} images, skipped 0 damaged files" "$OUT" || fail "reindex: $(cat "$OUT")"
[[ $(listing) == "$list0" ]] || fail "list after reindex differs: $(diff <(echo "$list0") <(listing))"
[[ $(queries) == "$query0" ]] || fail "queries after reindex differ"
run "${S[@]}" verify --grace 0
expect_ok "verify after reindex"
note "catalog deleted and rebuilt: ${#FILES[@]} entries, list and queries identical, verify clean"

# Reindex over a live catalog: a no-op for the listing.
run "${S[@]}" reindex -q
expect_ok "reindex over an intact catalog"
[[ $(listing) == "$list0" ]] || fail "reindex over an intact catalog changed the listing"

# A damaged file is skipped, reported, and not removed.
victim=$(index_files "$DB" | head -1)
size=$(stat -c %s "$victim")
printf '\xff' | dd of="$victim" bs=1 seek=$((size - 3)) conv=notrunc status=none
rm -rf "$DB/catalog"
run "${S[@]}" reindex
no_crash "reindex with a damaged file"
((RC == 4)) || fail "reindex with a damaged file: exit $RC, expected 4"
lines=$(wc -l <"$ERR")
((lines == 1)) || fail "reindex: $lines lines on stderr, expected one"
grep -qF "images/$(basename "$(dirname "$victim")")/$(basename "$victim")" "$ERR" ||
	fail "reindex: the damaged file is not named: $(cat "$ERR")"
note "damaged file: $(cat "$ERR")"
[[ -f $victim ]] || fail "reindex removed the damaged file"
[[ $(listing | wc -l) == $((${#FILES[@]} - 1)) ]] || fail "reindex: wrong entry count"
id=$(basename "$victim" .symdb)
[[ $(listing) == "$(grep -v "^$id " <<<"$list0")" ]] || fail "reindex: wrong entries"
run "${S[@]}" verify --grace 0
((RC == 4)) || fail "verify should report the damaged file as an orphan (exit $RC)"

# No database at all: one line, nothing created.
run "$SYMDB" reindex --db "$SCRATCH/none"
expect_error "reindex of a missing database" "no symdb database here"
[[ ! -e $SCRATCH/none ]] || fail "reindex created a database"
echo "PASS reindex"
