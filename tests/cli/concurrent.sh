#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# concurrent.sh: several `symdb build` processes on the same file at once
# leave exactly one catalog entry, one index file and an empty DB/tmp (SPEC
# §12.5), in each of several rounds; also -j 2 over many files in one call.
source "$(dirname "$0")/lib.sh"

bin=/lib/x86_64-linux-gnu/libc.so.6
[[ -f $bin ]] || bin=$BIN/cpp_g++_O0_rdyn.symtab
for round in 1 2 3 4 5; do
	db=$SCRATCH/db$round
	pids=()
	for p in 1 2 3; do
		"$SYMDB" build --db "$db" --no-dwarf "$bin" >"$SCRATCH/out$round.$p" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || fail "round $round: a concurrent build failed: $(cat "$SCRATCH"/out$round.*)"
	done
	[[ $(index_files "$db" | wc -l) == 1 ]] || fail "round $round: $(index_files "$db" | wc -l) index files"
	[[ -z $(find "$db/tmp" -mindepth 1) ]] || fail "round $round: DB/tmp not empty: $(ls "$db/tmp")"
	lines=$("$SYMDB" list --db "$db" | grep -c "$(build_id "$bin")" || true)
	[[ $lines == 1 ]] || fail "round $round: $lines catalog entries"
done
note "5 rounds of 3 concurrent builds: one entry, one file each"

# --force racing --force on one image, and processes indexing different
# files into one database at once: every image present exactly once.
db=$SCRATCH/dbforce
run "$SYMDB" build --db "$db" --no-dwarf "$bin"
expect_ok "setup for --force races"
pids=()
for p in 1 2 3; do
	"$SYMDB" build --db "$db" --no-dwarf --force "$bin" >"$SCRATCH/force.$p" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || fail "a concurrent --force build failed: $(cat "$SCRATCH"/force.*)"
done
[[ $(index_files "$db" | wc -l) == 1 ]] || fail "--force races left $(index_files "$db" | wc -l) files"
[[ -z $(find "$db/tmp" -mindepth 1) ]] || fail "--force races left temp files"
run "$SYMDB" query --db "$db" --obj "$bin" 0x1000
expect_ok "query after --force races"

db=$SCRATCH/dbmix
groups=("$BIN"/c_*.symtab "$BIN"/lib_*.symtab "$BIN"/cpp*.symtab)
pids=()
for g in c_ lib_ cpp; do
	"$SYMDB" build --db "$db" "$BIN/$g"*.symtab >"$SCRATCH/mix.$g" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || fail "a concurrent build of different files failed: $(cat "$SCRATCH"/mix.*)"
done
want=$(for f in "${groups[@]}"; do build_id "$f"; done | sort -u | wc -l)
got=$("$SYMDB" list --db "$db" | wc -l)
[[ $got == "$want" ]] || fail "different files built concurrently: $got catalog entries for $want images"
[[ $(index_files "$db" | wc -l) == "$want" ]] || fail "different files built concurrently: wrong file count"
note "--force races and concurrent builds of different files: consistent"

db=$SCRATCH/dbj
run "$SYMDB" build --db "$db" -j 2 "$BIN"/*.symtab
expect_ok "build -j 2 of every symtab fixture"
# images without a build-id (the far fixtures) each get a fallback UUID
want=$(for f in "$BIN"/*.symtab; do id=$(build_id "$f"); echo "${id:-$f}"; done | sort -u | wc -l)
got=$(index_files "$db" | wc -l)
[[ $got == "$want" ]] || fail "-j 2: $got index files for $want distinct build-ids"
[[ -z $(find "$db/tmp" -mindepth 1) ]] || fail "-j 2 left temp files"
echo "PASS concurrent"
