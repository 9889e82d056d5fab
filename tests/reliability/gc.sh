#!/bin/bash
# SPDX-License-Identifier: MIT
#
# gc.sh: the database's life cycle with a fake clock ($SYMDB_NOW, no sleeps):
# `symdb query` records last-query times at most once a day per image,
# `gc --unused-for` expires by last use, `gc --max-size` trims least recently
# used first, gc cleans old leftovers and orphans but not young ones, and
# `symdb rm` removes exactly the images named.
source "$(dirname "$0")/../cli/lib.sh"

A=$BIN/c_gcc_O2_pie.symtab
B=$BIN/lib_gcc_O2.so.symtab
C=$BIN/cpp_g++_O2_pie.symtab
DB=$SCRATCH/db
S=("$SYMDB" --db "$DB")
T0=$(date +%s)
DAY=86400
UA=$(build_id "$A")
UB=$(build_id "$B")
UC=$(build_id "$C")
# `symdb list` must succeed: an empty listing from a failed list is no answer.
list_ok() {
	run "${S[@]}" list
	expect_ok "list"
}
# expect_listed UUID...: exactly these images (leaves $OUT and $RC alone)
expect_listed() {
	local want="" got rc=0
	(($#)) && want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	"${S[@]}" list >"$SCRATCH/list.out" 2>"$SCRATCH/list.err" || rc=$?
	((rc == 0)) || fail "symdb list: exit $rc: $(cat "$SCRATCH/list.err")"
	got=$(awk '{print $1}' "$SCRATCH/list.out" | sort | tr '\n' ' ')
	[[ $got == "$want" ]] || fail "expected images: $* ; listed: $got"
}
catalog_sum() { sha256sum "$DB/catalog/data.mdb" | cut -d' ' -f1; }

run "${S[@]}" build -q "$A" "$B" "$C"
expect_ok build
expect_listed "$UA" "$UB" "$UC"

# A query records its image's use; a second query the same day writes nothing.
addr=0x$(llvm-nm-14 --defined-only "$A" | awk '$3 == "main" {print $1}')
SYMDB_NOW=$((T0 + 50 * DAY)) run "${S[@]}" query --obj "$A" "$addr"
expect_ok "query day 50"
diff <(llvm_query "$A" "$addr") "$OUT" >/dev/null || fail "query output differs from llvm-symbolizer"
before=$(catalog_sum)
SYMDB_NOW=$((T0 + 50 * DAY + 60)) run "${S[@]}" query --obj "$A" "$addr"
expect_ok "query day 50 again"
[[ $(catalog_sum) == "$before" ]] || fail "a second query on the same day wrote the catalog"
note "last-query time recorded once per day"

# Dry run first: nothing changes.
state=$(db_state "$DB")
SYMDB_NOW=$((T0 + 60 * DAY)) run "${S[@]}" gc --unused-for 45d --dry-run
expect_ok "gc --dry-run"
grep -q "would remove $UB" "$OUT" || fail "dry run does not list $UB"
grep -q "would remove $UC" "$OUT" || fail "dry run does not list $UC"
grep -q "would remove $UA" "$OUT" && fail "dry run would remove the used image"
[[ $(db_state "$DB") == "$state" ]] || fail "gc --dry-run changed the database"

# Day 60, 45 days: B and C (built day 0, never queried) go, A (queried day 50) stays.
SYMDB_NOW=$((T0 + 60 * DAY)) run "${S[@]}" gc --unused-for 45d
expect_ok "gc --unused-for 45d"
expect_listed "$UA"
run "${S[@]}" verify
expect_ok "verify after gc"
note "gc --unused-for expired the images not queried"

# Day 120: a 60-day horizon (in hours) now expires A as well.
SYMDB_NOW=$((T0 + 120 * DAY)) run "${S[@]}" gc --unused-for 1440h
expect_ok "gc day 120"
expect_listed

# --max-size: LRU order.  B used day 10, C day 20, A day 30; the limit holds
# two of them at most, so B (least recently used) goes.
run "${S[@]}" build -q "$A" "$B" "$C"
expect_ok "build again"
expect_listed "$UA" "$UB" "$UC"
for x in "B:$B:10" "C:$C:20" "A:$A:30"; do
	IFS=: read -r _ bin d <<<"$x"
	SYMDB_NOW=$((T0 + d * DAY)) run "${S[@]}" query --obj "$bin" 0x0
	expect_ok "query on day $d"
done
list_ok
total=$(awk '{s += $3} END {print s}' "$OUT")
size_b=$(awk -v u="$UB" '$1 == u {print $3}' "$OUT")
((total > 0 && size_b > 0)) || fail "list gave no sizes: total $total, $UB $size_b"
SYMDB_NOW=$((T0 + 31 * DAY)) run "${S[@]}" gc --max-size $((total - 1))
expect_ok "gc --max-size"
expect_listed "$UA" "$UC"
[[ $(grep -c '^removed' "$OUT") == 1 ]] || fail "gc --max-size removed more than needed"
SYMDB_NOW=$((T0 + 31 * DAY)) run "${S[@]}" gc --max-size $((total - size_b - 1))
expect_ok "gc --max-size 2"
expect_listed "$UA"
note "gc --max-size trims least recently used first"

# Leftovers and orphans: old ones go, young ones (a build in progress) stay.
old=$((T0 - 7200))
echo partial >"$DB/tmp/dead.Xy12ab"
touch -d "@$old" "$DB/tmp/dead.Xy12ab"
echo partial >"$DB/tmp/live.Xy12ab"
mkdir -p "$DB/images/ee"
echo x >"$DB/images/ee/ee01.symdb"
touch -d "@$old" "$DB/images/ee/ee01.symdb"
echo x >"$DB/images/ee/ee02.symdb"
run "${S[@]}" gc
expect_ok "gc leftovers"
[[ -e $DB/tmp/dead.Xy12ab || -e $DB/images/ee/ee01.symdb ]] && fail "gc kept an old leftover or orphan"
[[ -e $DB/tmp/live.Xy12ab && -e $DB/images/ee/ee02.symdb ]] || fail "gc removed a young file"
expect_listed "$UA"
SYMDB_NOW=$((T0 + 7200)) run "${S[@]}" gc
expect_ok "gc past --grace"
[[ -e $DB/tmp/live.Xy12ab || -e $DB/images/ee/ee02.symdb ]] && fail "gc kept a leftover past --grace"
note "gc removes leftovers and orphans older than --grace only"

# rm.
run "${S[@]}" build -q "$B"
expect_ok "build B again"
run "${S[@]}" rm "$UA"
expect_ok "rm"
grep -qx "removed $UA" "$OUT" || fail "rm output: $(cat "$OUT")"
expect_listed "$UB"
[[ -e $DB/images/${UA:0:2}/$UA.symdb ]] && fail "rm left the index file"
run "${S[@]}" rm "$UA"
expect_error "rm twice" "not in the database"
((RC == 1)) || fail "rm of a missing image: exit $RC, expected 1"
run "${S[@]}" rm not-hex
((RC == 2)) || fail "rm not-hex: exit $RC, expected 2"
run "${S[@]}" verify
expect_ok "verify at the end"
note "gc: all cases passed"
