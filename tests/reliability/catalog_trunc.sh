#!/bin/bash
# SPDX-License-Identifier: MIT
#
# catalog_trunc.sh: a truncated DB/catalog/data.mdb (SPEC §12.1, "Catalog
# files").  A real catalog of 160 images (over 64 KiB) is cut to every size
# from 0 up in 4 KiB steps; at each size every command that reads or writes
# the catalog must die of no signal, exit 3 and print one line naming
# data.mdb (before the check, LMDB touched the missing pages: SIGBUS), except
# a query indexing on first sight, which answers from a private index with
# one warning line naming data.mdb (query --no-build exits 3).  Then
# the repair alternates between `symdb reindex` and `symdb verify --repair`:
# the damaged catalog is moved aside to DB/catalog.damaged-*, never opened,
# every image is back, and a query answers like llvm-symbolizer-14.
source "$(dirname "$0")/../cli/lib.sh"
require gcc

N=160
DB=$SCRATCH/db
S=("$SYMDB" --db "$DB")
W=$SCRATCH/bin
mkdir -p "$W"
printf 'int f(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return f(c); }\n' >"$W/p.c"
gcc -g -O0 -c "$W/p.c" -o "$W/p.o"
# One object, N + 1 images with distinct build-ids, cheaply.
numbered_images "$W/p.o" "$W" $((N + 1))
files=()
for i in $(seq 1 $N); do files+=("$W/p$i"); done
run "${S[@]}" build -q "${files[@]}"
expect_ok "build $N images"
data=$DB/catalog/data.mdb
good=$SCRATCH/good.mdb
cp "$data" "$good"
full=$(stat -c %s "$good")
((full > 65536)) || fail "catalog of $N images is only $full bytes"
run "${S[@]}" export "$(printf '%040x' 1)"
expect_ok "export"
cp "$OUT" "$SCRATCH/bundle"

f_addr=0x$(llvm-nm-14 "$W/p7" | awk '$3 == "f" { print $1 }')
want=$(llvm-symbolizer-14 --obj "$W/p7" "$f_addr")

uuid2=$(printf '%040x' 2)
cmds=("list" "query --no-build --obj $W/p7 $f_addr" "info $W/p7" "build $W/p$((N + 1))"
	"rm $uuid2" "gc" "compact --unused-for 1d" "verify" "export $uuid2"
	"import $SCRATCH/bundle" "import")

checked=0
for ((size = 0; size < full; size += 4096)); do
	cp "$good" "$data"
	truncate -s "$size" "$data"
	for c in "${cmds[@]}"; do
		# shellcheck disable=SC2086 # the words of c are the arguments
		if [[ $c == import ]]; then # from stdin
			run_in "$SCRATCH/bundle" "${S[@]}" import
		else
			run "${S[@]}" $c
		fi
		no_crash "$c with data.mdb cut to $size"
		((RC == 3)) || fail "$c with data.mdb cut to $size: exit $RC, expected 3"
		[[ $(wc -l <"$ERR") == 1 ]] || fail "$c with data.mdb cut to $size: not one line"
		grep -qF "$data: truncated: $size bytes" "$ERR" ||
			fail "$c with data.mdb cut to $size: $(cat "$ERR")"
		checked=$((checked + 1))
	done
	# Indexing on first sight still answers, from a private index, with one
	# warning naming the catalog and why (README "Index on first sight").
	run "${S[@]}" query --obj "$W/p7" "$f_addr"
	no_crash "query (first sight) with data.mdb cut to $size"
	((RC == 0)) || fail "query (first sight) with data.mdb cut to $size: exit $RC, expected 0"
	[[ $(cat "$OUT") == "$want" ]] || fail "query (first sight) at $size: differs from llvm-symbolizer-14"
	[[ $(wc -l <"$ERR") == 1 ]] && grep -qF "$data: truncated: $size bytes" "$ERR" &&
		grep -qF "private temporary directory" "$ERR" ||
		fail "query (first sight) at $size: $(cat "$ERR")"
	[[ $(stat -c %s "$data") == "$size" ]] || fail "a command changed the damaged data.mdb"
	if (((size / 4096) % 2)); then
		run "${S[@]}" verify --repair --grace 0
		no_crash "verify --repair with data.mdb cut to $size"
		((RC == 5)) || fail "verify --repair at $size: exit $RC, expected 5"
	else
		run "${S[@]}" reindex
		no_crash "reindex with data.mdb cut to $size"
		((RC == 0)) || fail "reindex at $size: exit $RC, expected 0"
	fi
	grep -qF "$data: truncated: $size bytes" "$ERR" || fail "repair at $size: $(cat "$ERR")"
	grep -q "moved to $DB/catalog.damaged-" "$ERR" || fail "repair at $size: $(cat "$ERR")"
	aside=$(ls -d "$DB"/catalog.damaged-*)
	[[ $(wc -l <<<"$aside") == 1 && $(stat -c %s "$aside/data.mdb") == "$size" ]] ||
		fail "repair at $size: the damaged catalog was not moved aside unchanged"
	rm -rf "$aside"
	[[ $("${S[@]}" list | wc -l) == "$N" ]] || fail "repair at $size: not $N images"
	got=$("${S[@]}" query --obj "$W/p7" "$f_addr")
	[[ $got == "$want" ]] || fail "repair at $size: query differs from llvm-symbolizer-14"
done
note "data.mdb of $full bytes cut to $((full / 4096)) sizes: $checked commands each exit 3 with one line; every repair restored $N images"
