#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# force_race.sh: CLI queries during repeated `symdb build --force` of the
# same file (issue 12, defect 9c).  A query that read the catalog entry just
# before a rebuild renamed its new file into place, and mapped the file
# before the rebuild's catalog commit, saw a file that disagreed with the
# entry and exited 4 ("file replaced behind the catalog"): 2 of 222 queries
# while libc was rebuilt 16 times.  The reader now waits for the publisher's
# commit and retries (symdb.h "Threads").  Here two query loops run while the
# file is rebuilt REBUILDS times: no query may fail, and every answer must be
# llvm-symbolizer-14's.  The rebuilds alternate between two copies of the
# binary under names of different lengths: the same build-id and answers,
# but index files that differ (the image name is in the header), as a
# rebuild by a newer symdb or with other options would.  The builder runs with slow_publish_shim, which
# sleeps after the rename of the index file into place: the window a real
# disk's fsyncs open between rename and commit, which tmpfs or a fast SSD
# close to microseconds, so that queries land in it on every rebuild.
source "$(dirname "$0")/../cli/lib.sh"
: "${SLOW_PUBLISH_SHIM:?SLOW_PUBLISH_SHIM (tests/reliability/slow_publish_shim.so) must be set}"
# An ASan build wants its runtime first among the preloaded libraries.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

REBUILDS=${FORCE_RACE_REBUILDS:-24}
MIN_QUERIES=$((REBUILDS * 2))
bin=$FIXTURES/full/cpp_g++_O2_pie
db=$SCRATCH/db
[[ -f $bin ]] || fail "missing fixture $bin"

# The oracle: the start and middle of every sized function, ascending.
llvm-nm-14 -S --defined-only "$bin" | while read -r a s t rest; do
	[[ $t == [Tt] && $s =~ ^[0-9a-f]+$ ]] || continue
	printf '0x%x\n0x%x\n' $((16#$a)) $((16#$a + 16#$s / 2))
done | sort -u | sort -k1,1 >"$SCRATCH/addrs"
[[ -s $SCRATCH/addrs ]] || fail "no function symbols in $bin"
llvm_query "$bin" <"$SCRATCH/addrs" >"$SCRATCH/expect"
run "$SYMDB" build --db "$db" "$bin"
expect_ok "first build"
run_in "$SCRATCH/addrs" "$SYMDB" query --db "$db" --obj "$bin"
expect_ok "query before the race"
cmp -s "$OUT" "$SCRATCH/expect" || fail "query differs from llvm-symbolizer-14 before any rebuild"

# query_loop N: query until the builder is done; one line per query,
# "EXIT SAME" (SAME 1 when the answer is the oracle's).
query_loop() {
	local n=$1 i=0 rc same
	while [[ ! -e $SCRATCH/built ]]; do
		i=$((i + 1))
		set +e
		"$SYMDB" query --db "$db" --obj "$bin" <"$SCRATCH/addrs" >"$SCRATCH/q$n.out" 2>"$SCRATCH/q$n.err"
		rc=$?
		set -e
		same=0
		cmp -s "$SCRATCH/q$n.out" "$SCRATCH/expect" && same=1
		echo "$rc $same" >>"$SCRATCH/results"
		if ((rc != 0 || !same)); then
			cp "$SCRATCH/q$n.err" "$SCRATCH/bad$n.$i.err"
			cp "$SCRATCH/q$n.out" "$SCRATCH/bad$n.$i.out"
		fi
	done
}

: >"$SCRATCH/results"
query_loop 1 &
q1=$!
query_loop 2 &
q2=$!
builds_failed=0
mkdir -p "$SCRATCH/a" "$SCRATCH/b"
cp "$bin" "$SCRATCH/a/prog"
cp "$bin" "$SCRATCH/b/prog_under_a_longer_name"
copies=("$SCRATCH/a/prog" "$SCRATCH/b/prog_under_a_longer_name")
for ((i = 1; i <= REBUILDS; i++)); do
	LD_PRELOAD=$SLOW_PUBLISH_SHIM SLOW_PUBLISH_US=60000 \
		"$SYMDB" build --db "$db" --force "${copies[i % 2]}" >"$SCRATCH/build.out" 2>&1 ||
		builds_failed=$((builds_failed + 1))
done
touch "$SCRATCH/built"
wait "$q1" "$q2"

total=$(wc -l <"$SCRATCH/results")
exit4=$(awk '$1 == 4' "$SCRATCH/results" | wc -l)
failed=$(awk '$1 != 0' "$SCRATCH/results" | wc -l)
wrong=$(awk '$1 == 0 && $2 == 0' "$SCRATCH/results" | wc -l)
note "$REBUILDS rebuilds, $total queries: $failed failed ($exit4 exit 4), $wrong answered differently"
((builds_failed == 0)) || fail "$builds_failed of $REBUILDS rebuilds failed: $(cat "$SCRATCH/build.out")"
if ((failed || wrong)); then
	f=$(ls "$SCRATCH"/bad*.err | head -1)
	fail "$failed queries failed, $wrong differed from llvm-symbolizer-14; first: $(head -c 400 "$f")"
fi
((total >= MIN_QUERIES)) || fail "only $total queries ran during the rebuilds (want >= $MIN_QUERIES)"
[[ $(index_files "$db" | wc -l) == 1 ]] || fail "more than one index file after the rebuilds"
echo "PASS force_race"
