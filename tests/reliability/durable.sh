#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# durable.sh: the publishing order of SPEC §12.5, observed.  Each command
# runs with durable_shim.c preloaded (it records fsyncs by inode, renames,
# mkdirs and LMDB commits); durable_check.py then requires, for every index
# file renamed into DB/images/: the file fsynced before the rename, its
# directory fsynced after it and before the catalog commit, and DB/images/
# fsynced when the directory was new.  Covered: a first build, a build
# --force over the existing file, an import, a compaction and a thaw (these
# two change no catalog entry).  Finally the checker must reject each record
# with those fsyncs taken out, so a pass means something.
source "$(dirname "$0")/../cli/lib.sh"
: "${DURABLE_SHIM:?DURABLE_SHIM (durable_shim.so) must be set}"
CHECK=$(dirname "$0")/durable_check.py
# a sanitizer build: the shim comes before the runtime in the preload list
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

db=$SCRATCH/db
bin=$BIN/c_gcc_O2_pie.symtab
other=$BIN/lib_gcc_O2.so.symtab
n=0
logs=()

# traced DB MODE CMD...: run one symdb command under the shim and check its
# record (MODE --commit or --no-commit)
traced() {
	local d=$1 mode=$2
	shift 2
	n=$((n + 1))
	local log=$SCRATCH/log.$n
	: >"$log"
	run env DURABLE_LOG="$log" LD_PRELOAD="$DURABLE_SHIM" "$@"
	expect_ok "$*"
	python3 "$CHECK" "$log" "$d" "$mode" >"$SCRATCH/check.$n" ||
		fail "$*: $(grep FAIL "$SCRATCH/check.$n")"
	note "$*: $(cat "$SCRATCH/check.$n")"
	logs+=("$log $d $mode $*")
}

traced "$db" --commit "$SYMDB" build --db "$db" "$bin" "$other"
traced "$db" --commit "$SYMDB" build --db "$db" --force "$bin"
"$SYMDB" export --db "$db" --all >"$SCRATCH/bundle" || fail "export"
traced "$SCRATCH/db2" --commit "$SYMDB" import --db "$SCRATCH/db2" "$SCRATCH/bundle"
later=$(($(date +%s) + 86400 * 30))
traced "$db" --no-commit env SYMDB_NOW=$later "$SYMDB" compact --db "$db" --unused-for 1d
[[ -n $(find "$db/images" -name '*.lz4') ]] || fail "compact made no cold file"
addr=0x$(llvm-nm-14 --defined-only "$bin" | awk '$2 ~ /[Tt]/ { print $1; exit }')
traced "$db" --no-commit "$SYMDB" query --db "$db" --obj "$bin" "$addr"
[[ $(index_files "$db" | wc -l) -ge 1 ]] || fail "the query did not thaw the image"

# the checker catches a missing fsync in each of these records
for entry in "${logs[@]}"; do
	read -r log d mode what <<<"$entry"
	for plant in drop-file-fsync drop-dir-fsync; do
		if python3 "$CHECK" "$log" "$d" "$mode" --plant "$plant" >/dev/null; then
			fail "the checker passes $what with $plant"
		fi
	done
done
echo "PASS durable (${#logs[@]} commands, every rename into DB/images checked)"
