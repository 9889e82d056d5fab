#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bundle.sh: `symdb export` / `symdb import` (SPEC §12.7).  Export three
# images (one with DWARF), import them into an empty database: the same
# catalog facts, byte-identical index files, and `symdb query` output equal
# to the source database's and to llvm-symbolizer-14's.  A second import
# skips; --force replaces.  Then damaged bundles - one flipped byte, a
# truncated stream, an inner index file damaged under valid LZ4 checksums
# (re-framed with the lz4 CLI), a record whose UUID is not the header's -
# are each rejected with one line on stderr and the target database is left
# exactly as it was (symdb list, sha256 of every file, DB/tmp).
source "$(dirname "$0")/../cli/lib.sh"

require lz4
A=$FIXTURES/full/c_gcc_O2_pie
B=$BIN/lib_gcc_O2.so.symtab
C=$BIN/cpp_g++_O2_pie.symtab
SRC=$SCRATCH/src
DST=$SCRATCH/dst
UA=$(build_id "$A")
UB=$(build_id "$B")
UC=$(build_id "$C")

run "$SYMDB" --db "$SRC" build -q "$A" "$B" "$C"
expect_ok build
run "$SYMDB" --db "$SRC" export "$UA" "$UB" "$UC"
expect_ok export
cp "$OUT" "$SCRATCH/good.bundle"
[[ $(head -c 4 "$SCRATCH/good.bundle" | od -An -tx1 | tr -d ' ') == 04224d18 ]] ||
	fail "bundle is not an LZ4 frame"
lz4 -t -q "$SCRATCH/good.bundle" || fail "lz4 -t rejects the bundle"
note "export: $(stat -c %s "$SCRATCH/good.bundle") bytes for 3 images"

# An unknown UUID exports nothing.
run "$SYMDB" --db "$SRC" export "$UA" 00112233445566778899
expect_error "export of an unknown UUID" 00112233445566778899
[[ -s $OUT ]] && fail "export wrote a bundle although a UUID is unknown"

run_in "$SCRATCH/good.bundle" "$SYMDB" --db "$DST" import
expect_ok import
[[ $(grep -c '^imported ' "$OUT") == 3 ]] || fail "import did not report 3 images"
# (the last field: a built image's path, an imported one's name: compare names)
diff <("$SYMDB" --db "$SRC" list | awk '{n = $5; sub(/.*\//, "", n); print $1, $2, $3, n}') \
	<("$SYMDB" --db "$DST" list | awk '{n = $5; sub(/.*\//, "", n); print $1, $2, $3, n}') ||
	fail "imported catalog differs from the source"
diff <(cd "$SRC" && find images -type f | sort | xargs sha256sum) \
	<(cd "$DST" && find images -type f | sort | xargs sha256sum) ||
	fail "imported index files differ from the source"
run "$SYMDB" --db "$DST" verify
expect_ok "verify after import"
[[ -z $(find "$DST/tmp" -mindepth 1) ]] || fail "import left files in DB/tmp"

# Query results: every third byte of every function symbol, all three images.
for f in "$A" "$B" "$C"; do
	llvm-nm-14 -S --defined-only "$f" | awk '$3 ~ /[tTwW]/ && NF == 4 {print $1, $2}' |
		python3 -c 'import sys
for l in sys.stdin:
    a, n = (int(x, 16) for x in l.split())
    for o in range(0, max(n, 1) + 1, 3): print(hex(a + o))' | sort -u >"$SCRATCH/addrs"
	n=$(wc -l <"$SCRATCH/addrs")
	for style in LLVM JSON; do
		"$SYMDB" --db "$SRC" query --obj "$f" --output-style=$style <"$SCRATCH/addrs" >"$SCRATCH/q.src"
		"$SYMDB" --db "$DST" query --obj "$f" --output-style=$style <"$SCRATCH/addrs" >"$SCRATCH/q.dst"
		llvm_query "$f" --output-style=$style <"$SCRATCH/addrs" >"$SCRATCH/q.llvm"
		cmp -s "$SCRATCH/q.src" "$SCRATCH/q.dst" ||
			fail "$(basename "$f") $style: imported database answers differently"
		cmp -s "$SCRATCH/q.llvm" "$SCRATCH/q.dst" ||
			fail "$(basename "$f") $style: imported database differs from llvm-symbolizer-14"
	done
	note "$(basename "$f"): $n addresses, LLVM and JSON identical to source and oracle"
done

# export --all carries every image; no UUID at all is a usage error.
run "$SYMDB" --db "$SRC" export --all
expect_ok "export --all"
cp "$OUT" "$SCRATCH/all.bundle"
run_in "$SCRATCH/all.bundle" "$SYMDB" --db "$SCRATCH/all" import -q
expect_ok "import of export --all"
diff <("$SYMDB" --db "$SRC" list | awk '{print $1, $3}') \
	<("$SYMDB" --db "$SCRATCH/all" list | awk '{print $1, $3}') || fail "export --all lost images"
run "$SYMDB" --db "$SRC" export
((RC == 2)) || fail "export without UUIDs: exit $RC, expected 2"
note "export --all"

# Importing again skips; --force replaces (same bytes).
run_in "$SCRATCH/good.bundle" "$SYMDB" --db "$DST" import
expect_ok "import again"
[[ $(grep -c '^skipped ' "$OUT") == 3 ]] || fail "second import did not skip"
run_in "$SCRATCH/good.bundle" "$SYMDB" --db "$DST" import --force -q
expect_ok "import --force"
run "$SYMDB" --db "$DST" verify
expect_ok "verify after import --force"
note "re-import skips, --force replaces"

# Damaged bundles: rejected, one line, nothing published, nothing left.
"$SYMDB" --db "$DST" rm "$UB" >/dev/null
state=$(db_state "$DST")
reject() { # WHAT BUNDLE NEEDLE...
	local what=$1 bundle=$2
	shift 2
	run_in "$bundle" "$SYMDB" --db "$DST" import
	expect_error "$what" "$@"
	((RC == 4)) || fail "$what: exit $RC, expected 4"
	[[ $(db_state "$DST") == "$state" ]] || fail "$what: the database changed"
}
size=$(stat -c %s "$SCRATCH/good.bundle")
flip() { # FILE OFFSET -> FILE.flip
	python3 -c 'import sys
p,o=sys.argv[1],int(sys.argv[2]); b=bytearray(open(p,"rb").read()); b[o]^=0x40
open(p+".flip","wb").write(b)' "$1" "$2"
}
for off in 40 $((size / 2)) $((size - 6)); do
	flip "$SCRATCH/good.bundle" $off
	reject "bundle with byte $off flipped" "$SCRATCH/good.bundle.flip" "bundle rejected"
done
for len in 0 7 100 $((size / 2)) $((size - 1)); do
	head -c $len "$SCRATCH/good.bundle" >"$SCRATCH/trunc.bundle"
	reject "bundle truncated to $len bytes" "$SCRATCH/trunc.bundle" "bundle rejected"
done
# Bytes after the frame.
{ cat "$SCRATCH/good.bundle"; echo x; } >"$SCRATCH/tail.bundle"
reject "bundle with trailing bytes" "$SCRATCH/tail.bundle" "after the end"

# Inner damage under valid LZ4 checksums: decompress, edit, re-frame with the
# lz4 CLI (content checksum on by default, -BX adds block checksums).
lz4 -d -q -c "$SCRATCH/good.bundle" >"$SCRATCH/raw"
# record layout: 8 magic, then u8 uuid_len, uuid, u64 BE size, file
read -r ulen fsize < <(python3 -c 'import sys
b=open(sys.argv[1],"rb").read(); n=b[8]; print(n, int.from_bytes(b[9+n:17+n],"big"))' "$SCRATCH/raw")
first=$((8 + 1 + ulen + 8))
reframe() { lz4 -q -BX -c "$1" >"$1.lz4"; lz4 -t -q "$1.lz4" || fail "lz4 CLI frame invalid"; }
# (a) the last byte of the first index file (a table checksum catches it)
flip "$SCRATCH/raw" $((first + fsize - 1)); reframe "$SCRATCH/raw.flip"
reject "inner index file damaged (last byte)" "$SCRATCH/raw.flip.lz4" "$UA"
# (b) a byte of its header UUID (the header checksum catches it)
flip "$SCRATCH/raw" $((first + 40)); reframe "$SCRATCH/raw.flip"
reject "inner index file damaged (header)" "$SCRATCH/raw.flip.lz4" "$UA"
# (c) the record's UUID is not the one in the file's header
flip "$SCRATCH/raw" 9; reframe "$SCRATCH/raw.flip"
reject "record UUID differs from the header" "$SCRATCH/raw.flip.lz4" "UUID"
# (d) a declared size past the end of the stream
python3 -c 'import sys
p=sys.argv[1]; b=bytearray(open(p,"rb").read()); n=b[8]
b[9+n:17+n]=(1<<40).to_bytes(8,"big"); open(p+".big","wb").write(b)' "$SCRATCH/raw"
reframe "$SCRATCH/raw.big"
reject "declared size of 1 TiB" "$SCRATCH/raw.big.lz4" "16 GiB"
# (e) the end record missing
head -c $(($(stat -c %s "$SCRATCH/raw") - 1)) "$SCRATCH/raw" >"$SCRATCH/raw.noend"
reframe "$SCRATCH/raw.noend"
reject "no end record" "$SCRATCH/raw.noend.lz4" "no end record"
# (f) a frame without checksums
lz4 -q --no-frame-crc -c "$SCRATCH/raw" >"$SCRATCH/raw.nocrc.lz4"
reject "frame without checksums" "$SCRATCH/raw.nocrc.lz4" "without block and content checksums"
# The intact raw stream re-framed by the lz4 CLI imports fine.
reframe "$SCRATCH/raw"
run_in "$SCRATCH/raw.lz4" "$SYMDB" --db "$DST" import
expect_ok "import of a bundle framed by the lz4 CLI"
grep -q "^imported $UB" "$OUT" || fail "lz4-CLI bundle did not import $UB"
note "damaged bundles rejected, database unchanged"

# One index file instead of a bundle (what `symdb serve` sends for GET
# /v1/images/ID/index): imported as a FILE argument, verified the same way;
# it answers like llvm-symbolizer-14; a damaged one is refused, nothing
# published.
IDX=$SCRATCH/one
ia=$(find "$SRC/images" -name "$UA.symdb")
cp "$ia" "$SCRATCH/a.symdb"
run "$SYMDB" --db "$IDX" import "$SCRATCH/a.symdb"
expect_ok "import of one index file"
[[ $(cat "$OUT") == "imported $UA" ]] || fail "index file import printed: $(cat "$OUT")"
cmp -s "$ia" "$(find "$IDX/images" -name "$UA.symdb")" || fail "imported index file differs"
llvm-nm-14 --defined-only "$A" | awk '$2 ~ /[tT]/ {print "0x" $1}' | head -50 >"$SCRATCH/addrs"
"$SYMDB" --db "$IDX" query --no-build --uuid "$UA" <"$SCRATCH/addrs" >"$SCRATCH/q.idx"
llvm_query "$A" <"$SCRATCH/addrs" >"$SCRATCH/q.llvm"
cmp -s "$SCRATCH/q.llvm" "$SCRATCH/q.idx" || fail "imported index file differs from llvm-symbolizer-14"
run "$SYMDB" --db "$IDX" import "$SCRATCH/a.symdb"
expect_ok "import of the index file again"
[[ $(cat "$OUT") == "skipped $UA (already indexed)" ]] || fail "second index import: $(cat "$OUT")"
"$SYMDB" --db "$IDX" rm "$UA" >/dev/null
state=$(db_state "$IDX")
flip "$SCRATCH/a.symdb" $(($(stat -c %s "$SCRATCH/a.symdb") - 1))
run "$SYMDB" --db "$IDX" import "$SCRATCH/a.symdb.flip"
expect_error "damaged index file" "index file rejected, nothing imported" "Checksum"
((RC == 4)) || fail "damaged index file: exit $RC, expected 4"
[[ $(db_state "$IDX") == "$state" ]] || fail "damaged index file: the database changed"
note "one index file imported; a damaged one refused"
echo "PASS bundle"
