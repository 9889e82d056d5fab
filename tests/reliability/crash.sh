#!/bin/bash
# SPDX-License-Identifier: MIT
#
# crash.sh: `symdb build` killed with SIGKILL at random instants (>= 200
# runs, fixed seed) never leaves a half-visible image.  After every kill,
# `symdb verify` with an infinite grace (temp files and orphans may be what
# the kill left; they are invisible to readers) must find every catalog
# entry complete and valid.  At the end `gc` (with the clock past the grace
# period) removes the leftovers, `verify --grace 0` is clean, and a final
# build resolves every image like llvm-symbolizer-14.
#
# Every tenth run also kills a `gc --max-size 1` (removing every image).
# Builds alternate between --force (every image republished: a kill lands
# in write, fsync, rename or commit) and plain builds after an `rm` of one
# image (first publication: a kill between rename and commit leaves an
# orphan, never an entry).
source "$(dirname "$0")/../cli/lib.sh"

RUNS=${CRASH_RUNS:-200}
MAXDELAY_MS=${CRASH_MAXDELAY_MS:-150}
RANDOM=4242
FILES=("$FIXTURES/full/c_gcc_O2_pie" "$FIXTURES/full/cpp_g++_O2_pie"
	"$FIXTURES/full/lib_gcc_O2.so" "$FIXTURES/full/c_clang_O2_pie"
	"$FIXTURES/full/cpplib_g++_O2.so" "$BIN/nostd_aarch64.symtab")
DB=$SCRATCH/db
S=("$SYMDB" --db "$DB")
UUIDS=()
for f in "${FILES[@]}"; do UUIDS+=("$(build_id "$f")"); done

run "${S[@]}" build -q "${FILES[@]}"
expect_ok "first build"
killed=0
gc_killed=0
for ((i = 0; i < RUNS; i++)); do
	force=--force
	if ((i % 2)); then
		force=
		"${S[@]}" rm "${UUIDS[RANDOM % ${#UUIDS[@]}]}" >/dev/null 2>&1 || true
	fi
	"${S[@]}" build -q $force "${FILES[@]}" >/dev/null 2>"$ERR" &
	pid=$!
	sleep "$(printf '0.%03d' $((RANDOM % MAXDELAY_MS)))"
	if kill -KILL "$pid" 2>/dev/null; then
		killed=$((killed + 1))
	fi
	set +e
	wait "$pid" 2>/dev/null
	rc=$?
	set -e
	((rc == 0 || rc == 137)) || fail "run $i: build exit $rc: $(cat "$ERR")"
	# symdb-indexer (PR_SET_PDEATHSIG) dies with the killed builder; its
	# command line names the builder: --parent PID.
	for ((t = 0; t < 50; t++)); do
		pgrep -f -- "--db $DB build|symdb-indexer .*--parent $pid " >/dev/null || break
		sleep 0.02
	done
	! pgrep -af -- "--db $DB build|symdb-indexer .*--parent $pid " >&2 ||
		fail "run $i: an indexer child survived its builder"
	run "${S[@]}" verify --grace 1000000d
	no_crash "run $i: verify"
	((RC == 0)) || fail "run $i: an entry is half-visible after the kill"
	# Every tenth run also kills a gc that removes every image (entry first,
	# then file: a kill in between leaves an orphan, never a dangling entry).
	if ((i % 10 == 5)); then
		"${S[@]}" gc --max-size 1 >/dev/null 2>&1 &
		pid=$!
		sleep "$(printf '0.%03d' $((RANDOM % 40)))"
		kill -KILL "$pid" 2>/dev/null && gc_killed=$((gc_killed + 1))
		wait "$pid" 2>/dev/null || true
		run "${S[@]}" verify --grace 1000000d
		((RC == 0)) || fail "run $i: an entry names a missing file after a killed gc"
	fi
done
note "$RUNS runs, $killed builds and $gc_killed gc runs killed mid-way; every catalog entry valid after each"

# Clean up what the kills left, then everything must be clean.
SYMDB_NOW=$(($(date +%s) + 7200)) run "${S[@]}" gc
expect_ok "gc after the kills"
note "gc: $(tail -1 "$OUT")"
run "${S[@]}" verify --grace 0
expect_ok "verify --grace 0 after gc"
[[ -z $(find "$DB/tmp" -type f) ]] || fail "temp files left after gc"

# A last, uninterrupted build; then every image resolves like the oracle.
run "${S[@]}" build -q "${FILES[@]}"
expect_ok "final build"
[[ $("${S[@]}" list | wc -l) == "${#FILES[@]}" ]] || fail "not every image listed"
[[ $(index_files "$DB" | wc -l) == "${#FILES[@]}" ]] || fail "one file per image expected"
for f in "${FILES[@]}"; do
	mapfile -t addrs < <(llvm-nm-14 --defined-only "$f" |
		awk '$2 == "T" && $3 !~ /^_/ {print "0x" $1}' | head -5)
	((${#addrs[@]})) || continue
	diff <(llvm_query "$f" "${addrs[@]}") <("${S[@]}" query --obj "$f" "${addrs[@]}") >/dev/null ||
		fail "$f: query differs from llvm-symbolizer after the crash runs"
done
note "crash safety: all images resolve like llvm-symbolizer-14"
