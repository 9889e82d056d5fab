#!/bin/bash
# SPDX-License-Identifier: MIT
#
# concurrency.sh: issue 6's concurrency acceptance.  8 `symdb build`
# processes over overlapping sets of DWARF fixtures run at once, in rounds
# (first publication, then --force rebuilds replacing published files, then
# both mixed), while rel_readers' 8 threads share one read-only handle and
# keep opening every image by UUID, resolving a fixed address set and
# comparing with llvm-symbolizer-14's output for the same binary, computed
# before any build.  Afterwards each UUID has exactly one catalog entry and
# one index file, DB/tmp is empty, `symdb verify` is clean, and every reader
# result matched the oracle (SPEC §12.5).
source "$(dirname "$0")/../cli/lib.sh"

: "${REL_READERS:?REL_READERS (tests/reliability/rel_readers) must be set}"
BUILDERS=8
READERS=8
ROUNDS=${CONC_ROUNDS:-5}
FILES=("$FIXTURES/full/c_gcc_O2_pie" "$FIXTURES/full/cpp_g++_O2_pie"
	"$FIXTURES/full/lib_gcc_O2.so" "$FIXTURES/full/c_clang_O2_pie"
	"$FIXTURES/full/cpplib_g++_O2.so" "$FIXTURES/full/cpp_clang++_O2_pie"
	"$FIXTURES/full/c_gcc_O0_pie" "$FIXTURES/full/cpplib_clang++_O2.so")
NF=${#FILES[@]}
DB=$SCRATCH/db
EXP=$SCRATCH/expect
mkdir -p "$EXP"

# The oracle, before any build: every function symbol's start and middle,
# plus one address past the last symbol, ascending; llvm-symbolizer-14 in
# LLVM style with raw linkage names (what the reader prints).
#
# fn_addrs BIN: decimal addresses of the start and middle of every sized
# function symbol, and one past the end of the highest one
fn_addrs() {
	local a s t m=0 rest
	while read -r a s t rest; do
		[[ $t == [Tt] && $s =~ ^[0-9a-f]+$ ]] || continue
		a=$((16#$a)) s=$((16#$s))
		echo "$a"
		echo $((a + s / 2))
		if ((a + s > m)); then m=$((a + s)); fi
	done < <(llvm-nm-14 -S --defined-only "$1")
	echo $((m + 64))
}

specs=()
for f in "${FILES[@]}"; do
	id=$(build_id "$f")
	[[ -n $id ]] || fail "$f has no build-id"
	fn_addrs "$f" | sort -n -u | while read -r d; do printf '%x\n' "$d"; done >"$EXP/$id.addrs"
	n=$(wc -l <"$EXP/$id.addrs")
	((n >= 10)) || fail "$f: only $n addresses"
	sed 's/^/0x/' "$EXP/$id.addrs" | llvm_query "$f" --no-demangle >"$EXP/$id.expect"
	specs+=("$id:$EXP/$id.addrs:$EXP/$id.expect")
done
note "oracle: $(cat "$EXP"/*.addrs | wc -l) addresses over $NF images from llvm-symbolizer-14"

# builders ROUND FORCE: 8 processes, builder p indexing files p..p+3 (mod 8),
# so every file is built by 4 processes at once.
builders() {
	local round=$1 force=$2 p k pids=() args
	for ((p = 0; p < BUILDERS; p++)); do
		args=()
		for ((k = 0; k < 4; k++)); do args+=("${FILES[(p + k) % NF]}"); done
		f=$force
		[[ $force == mixed ]] && { f=; ((p % 2)) && f=--force; }
		"$SYMDB" build --db "$DB" -q $f "${args[@]}" >"$SCRATCH/b$round.$p" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || fail "round $round: a builder failed: $(cat "$SCRATCH"/b$round.*)"
	done
}

stop=$SCRATCH/stop
rm -f "$stop"
"$REL_READERS" "$DB" "$READERS" "$stop" "${specs[@]}" >"$SCRATCH/readers.out" 2>"$SCRATCH/readers.err" &
rpid=$!

builders 0 ""
for ((r = 1; r <= ROUNDS; r++)); do
	builders "$r.force" --force
	builders "$r.mixed" mixed
done
touch "$stop"
set +e
wait "$rpid"
rrc=$?
set -e
((rrc == 0)) || fail "readers: exit $rrc: $(head -c 3000 "$SCRATCH/readers.err")"
[[ ! -s $SCRATCH/readers.err ]] || fail "readers wrote to stderr: $(head -c 2000 "$SCRATCH/readers.err")"
note "readers: $(cat "$SCRATCH/readers.out")"
resolved=$(sed -n 's/.* passes, \([0-9]*\) image resolutions.*/\1/p' "$SCRATCH/readers.out")
((resolved >= READERS * NF)) || fail "readers resolved only $resolved images"

# One entry and one file per UUID, nothing left in DB/tmp, verify clean.
for f in "${FILES[@]}"; do
	id=$(build_id "$f")
	n=$("$SYMDB" list --db "$DB" | grep -c "$id" || true)
	((n == 1)) || fail "$id: $n catalog entries"
	n=$(find "$DB/images" -type f -name "$id*" | wc -l)
	((n == 1)) || fail "$id: $n index files"
done
[[ $("$SYMDB" list --db "$DB" | wc -l) == "$NF" ]] || fail "catalog holds other entries"
[[ $(index_files "$DB" | wc -l) == "$NF" ]] || fail "DB/images holds other files"
[[ -z $(find "$DB/tmp" -mindepth 1) ]] || fail "DB/tmp not empty: $(ls "$DB/tmp")"
run "$SYMDB" verify --db "$DB" --grace 0
expect_ok "verify after the concurrent builds"
note "$((1 + 2 * ROUNDS)) rounds of $BUILDERS builders: $NF entries, $NF files, verify clean"
echo "PASS concurrency"
