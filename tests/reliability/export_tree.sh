#!/bin/bash
# SPDX-License-Identifier: MIT
#
# export_tree.sh: `symdb export --tree DIR` (SPEC §12.9 store trees).
# Three images (one with DWARF) exported under umask 077: one file each at
# DIR/symdb/v1/XX/UUID.symdb, byte-identical to the database's index file,
# mode 0644 in 0755 directories (a web server of another user reads them),
# nothing else in the tree; the exported DWARF image imported elsewhere
# answers like llvm-symbolizer-14.  A re-run skips every image and leaves
# the files (same inodes); a tree file that differs (another image's bytes)
# is rewritten; named images only; a compacted image is exported
# decompressed and stays cold.  A damaged image is named on stderr (one
# line), not written, the others are, exit 4; a symbolic link planted in
# the tree is not followed (its target unchanged); a TREE that is a
# regular file is one line, exit 1.
source "$(dirname "$0")/../cli/lib.sh"

A=$FIXTURES/full/c_gcc_O2_pie
B=$BIN/lib_gcc_O2.so.symtab
C=$BIN/cpp_g++_O2_pie.symtab
DB=$SCRATCH/db
T=$SCRATCH/tree
UA=$(build_id "$A")
UB=$(build_id "$B")
UC=$(build_id "$C")
rel() { echo "symdb/v1/${1:0:2}/$1.symdb"; }
dbfile() { echo "$DB/images/${1:0:2}/$1.symdb"; }

run "$SYMDB" --db "$DB" build -q "$A" "$B" "$C"
expect_ok build

# Every image, under a umask that would hide the files from a web server.
(umask 077 && "$SYMDB" --db "$DB" export --tree "$T" >"$OUT" 2>"$ERR") && RC=0 || RC=$?
expect_ok "export --tree"
[[ ! -s $ERR ]] || fail "export --tree wrote to stderr"
for u in "$UA" "$UB" "$UC"; do
	grep -qxF "exported $u $(rel "$u") ($(stat -c %s "$(dbfile "$u")") bytes)" "$OUT" ||
		fail "no 'exported' line for $u"
	cmp -s "$T/$(rel "$u")" "$(dbfile "$u")" || fail "$(rel "$u") differs from the database's file"
	[[ $(stat -c %a "$T/$(rel "$u")") == 644 ]] || fail "$(rel "$u"): mode $(stat -c %a "$T/$(rel "$u")")"
done
[[ $(find "$T" -type f | wc -l) == 3 ]] || fail "the tree holds other files: $(find "$T" -type f)"
[[ -z $(find "$T" -type d ! -perm 0755) ]] || fail "directories not 0755: $(find "$T" -type d ! -perm 0755)"
note "export --tree: 3 files, identical to the database's, 0644 under umask 077"

# The exported file is a usable index: imported elsewhere, it answers like the oracle.
run "$SYMDB" --db "$SCRATCH/other" import "$T/$(rel "$UA")"
expect_ok "import of the exported file"
llvm-nm-14 -S --defined-only "$A" | awk '$3 ~ /[tT]/ && NF == 4 {print $1, $2}' |
	python3 -c 'import sys
for l in sys.stdin:
    a, n = (int(x, 16) for x in l.split())
    for o in range(0, max(n, 1), 5): print(hex(a + o))' | sort -u >"$SCRATCH/addrs"
"$SYMDB" --db "$SCRATCH/other" query --uuid "$UA" <"$SCRATCH/addrs" >"$SCRATCH/q.symdb"
llvm_query "$A" <"$SCRATCH/addrs" >"$SCRATCH/q.llvm"
cmp -s "$SCRATCH/q.symdb" "$SCRATCH/q.llvm" || fail "the exported index answers unlike llvm-symbolizer-14"
note "imported from the tree: $(wc -l <"$SCRATCH/addrs") addresses equal to llvm-symbolizer-14"

# A re-run adds only what is missing: nothing here, the files untouched.
inodes=$(find "$T" -type f -printf '%i %p\n' | sort)
run "$SYMDB" --db "$DB" export --tree "$T"
expect_ok "export --tree again"
[[ $(grep -c '^skipped .* (already in the tree)$' "$OUT") == 3 ]] || fail "the re-run did not skip 3 images"
[[ $(find "$T" -type f -printf '%i %p\n' | sort) == "$inodes" ]] || fail "the re-run rewrote files"
# one removed: only that one is written again
rm "$T/$(rel "$UB")"
run "$SYMDB" --db "$DB" export --tree "$T" --all
expect_ok "export --tree after a removal"
[[ $(grep -c '^exported ' "$OUT") == 1 ]] && grep -q "^exported $UB " "$OUT" ||
	fail "only $UB should be written again"
# a file with other bytes under A's name (a store holding an old index): rewritten
cp "$(dbfile "$UC")" "$T/$(rel "$UA")"
run "$SYMDB" --db "$DB" export --tree "$T" "$UA"
expect_ok "export --tree over a stale file"
grep -q "^exported $UA " "$OUT" || fail "a stale file was not rewritten"
cmp -s "$T/$(rel "$UA")" "$(dbfile "$UA")" || fail "the rewritten file differs from the database's"
note "re-runs: 3 skipped (inodes kept); a removed file and a stale one written again"

# Named images only.
run "$SYMDB" --db "$DB" export --tree "$SCRATCH/t2" "$UB"
expect_ok "export --tree UUID"
[[ $(find "$SCRATCH/t2" -type f) == "$SCRATCH/t2/$(rel "$UB")" ]] || fail "export --tree UUID wrote other files"

# A damaged image: named, skipped, the others written, exit 4.
f=$(dbfile "$UB")
python3 -c 'import sys
p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)-3]^=0x40; open(p,"wb").write(b)' "$f"
run "$SYMDB" --db "$DB" export --tree "$SCRATCH/t4"
expect_error "export --tree with a damaged image" "$UB"
((RC == 4)) || fail "a damaged image: exit $RC, expected 4"
[[ ! -e $SCRATCH/t4/$(rel "$UB") ]] || fail "the damaged image was written"
[[ -f $SCRATCH/t4/$(rel "$UA") && -f $SCRATCH/t4/$(rel "$UC") ]] || fail "the good images were not written"
[[ $(find "$SCRATCH/t4" -type f | wc -l) == 2 ]] || fail "temporary files left: $(find "$SCRATCH/t4" -type f)"
note "damaged image: one line, not written, the others are"

# A compacted image (B, damaged above, is left as it is): its index
# file's bytes, and it stays cold.
sha=$(sha256sum <"$(dbfile "$UC")")
SYMDB_NOW=$(($(date +%s) + 400 * 86400)) "$SYMDB" --db "$DB" compact --unused-for 1d >/dev/null 2>&1 || true
[[ -f $(dbfile "$UC").lz4 && ! -e $(dbfile "$UC") ]] || fail "compact did not make $UC cold"
run "$SYMDB" --db "$DB" export --tree "$SCRATCH/t3" "$UC"
expect_ok "export --tree of a cold image"
[[ $(sha256sum <"$SCRATCH/t3/$(rel "$UC")") == "$sha" ]] || fail "a cold image exported other bytes"
[[ ! -e $(dbfile "$UC") ]] || fail "exporting thawed the image"
note "a compacted image: exported decompressed, left cold"

# A symbolic link planted in the tree is not followed.
mkdir -p "$SCRATCH/t5/symdb/v1" "$SCRATCH/victim"
echo keep >"$SCRATCH/victim/file"
ln -s "$SCRATCH/victim" "$SCRATCH/t5/symdb/v1/${UA:0:2}"
run "$SYMDB" --db "$DB" export --tree "$SCRATCH/t5" "$UA"
expect_error "a symbolic link in the tree" "symbolic link, not followed"
((RC == 1)) || fail "a symbolic link in the tree: exit $RC, expected 1"
[[ $(ls "$SCRATCH/victim") == file && $(cat "$SCRATCH/victim/file") == keep ]] ||
	fail "the link's target changed: $(ls -a "$SCRATCH/victim")"
# TREE a regular file
: >"$SCRATCH/notadir"
run "$SYMDB" --db "$DB" export --tree "$SCRATCH/notadir"
expect_error "--tree on a regular file" "$SCRATCH/notadir: Not a directory"
((RC == 1)) || fail "--tree on a regular file: exit $RC, expected 1"
note "a link in the tree and a TREE that is a file: refused, one line"
echo "export_tree: ok"
