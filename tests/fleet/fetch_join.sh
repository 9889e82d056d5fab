#!/bin/bash
# SPDX-License-Identifier: MIT
#
# fetch_join.sh: separate processes asking for the same unknown image (a
# sanitizer's processes, a profile's shards) download it once.  The store
# (slow_store.py) answers each image 1 s after it is asked, and 404 for a
# fourth id.  8 `symdb query --upstream` processes at once for one image,
# then 8 for the absent one:
#   1. every query answers as llvm-symbolizer-14 (exit 0, nothing on
#      stderr), and every query of the absent id says "not found on any
#      source" (exit 1);
#   2. the store saw one GET per id (each process waits for the fetch in
#      progress, DB/tmp/fetch-HEX.lock, and then finds the image or the
#      remembered miss); before, it saw one per process;
#   3. DB/tmp is empty afterwards and verify is clean.
source "$(dirname "$0")/serve_lib.sh"
require readelf llvm-symbolizer-14
three_images
obj=${objs[0]} id=${ids[0]}
store_tree "$obj"
for i in "$id" "$absent"; do echo 1 >"$tree/delay.$i"; done
slow_store_start
DB=$SCRATCH/db
addr=0x$(llvm-nm-14 --defined-only "$obj" | awk '$2 ~ /^[tT]$/ { print $1; exit }')
want=$(llvm-symbolizer-14 --obj "$obj" "$addr")

note "1. 8 processes for one image, then 8 for an absent one"
pids=()
for k in 0 1 2 3 4 5 6 7; do
	"$SYMDB" --db "$DB" query --upstream "$store" --fetch-timeout 30 --uuid "$id" "$addr" \
		>"$SCRATCH/q$k.out" 2>"$SCRATCH/q$k.err" &
	pids+=($!)
done
for k in 0 1 2 3 4 5 6 7; do
	wait "${pids[k]}" || fail "query $k: exit $?: $(cat "$SCRATCH/q$k.err")"
	[[ $(cat "$SCRATCH/q$k.out") == "$want" && ! -s $SCRATCH/q$k.err ]] ||
		fail "query $k: $(cat "$SCRATCH/q$k.out" "$SCRATCH/q$k.err"), llvm-symbolizer-14: $want"
done
pids=()
for k in 0 1 2 3 4 5 6 7; do
	"$SYMDB" --db "$DB" query --upstream "$store" --fetch-timeout 30 --uuid "$absent" 0x10 \
		>"$SCRATCH/a$k.out" 2>"$SCRATCH/a$k.err" &
	pids+=($!)
done
for k in 0 1 2 3 4 5 6 7; do
	rc=0
	wait "${pids[k]}" || rc=$?
	((rc == 1)) && grep -q "^symdb: $absent: not found on any source" "$SCRATCH/a$k.err" ||
		fail "absent query $k: exit $rc: $(cat "$SCRATCH/a$k.err")"
done

note "2. one GET per id on the store"
for i in "$id" "$absent"; do
	n=$(grep -c "^GET /symdb/v1/${i:0:2}/$i.symdb$" "$SCRATCH/store.log" || true)
	((n == 1)) || fail "$i: $n GETs on the store, expected 1"
done

note "3. nothing left behind"
[[ -z $(ls -A "$DB/tmp") ]] || fail "DB/tmp: $(ls -A "$DB/tmp")"
run "$SYMDB" --db "$DB" verify
expect_ok "verify"
