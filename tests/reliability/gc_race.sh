#!/bin/bash
# SPDX-License-Identifier: MIT
#
# gc_race.sh: two `symdb gc` runs at once on the same database count each
# removal once (issue 12, defect 7).  The database holds N images, all
# unused, and M stray files past the grace period; in each of ROUNDS rounds
# a fresh copy gets two concurrent `gc --unused-for 1d`, and the images and
# stray files their summary lines report must add up to exactly N and M,
# with nothing left behind.  Before the fix both counted an image the other
# had removed ("not indexed" was taken as removed) and a stray file the other
# had unlinked (ENOENT was taken as removed).
source "$(dirname "$0")/../cli/lib.sh"

ROUNDS=${GC_RACE_ROUNDS:-40}
M=20
TEMPLATE=$SCRATCH/template
DB=$SCRATCH/db
LATE=$(($(date +%s) + 400 * 86400))

# One input per build-id: the .symtab fixtures and the shared libraries.
declare -A seen
inputs=()
for f in "$BIN"/*.symtab; do
	id=$(build_id "$f")
	[[ -n $id && -z ${seen[$id]:-} ]] || continue
	seen[$id]=1
	inputs+=("$f")
done
N=${#inputs[@]}
((N >= 10)) || fail "fixtures: only $N distinct build-ids"
"$SYMDB" --db "$TEMPLATE" build -q "${inputs[@]}" >/dev/null || fail "building the template"
listed=$("$SYMDB" --db "$TEMPLATE" list | wc -l)
((listed == N)) || fail "template lists $listed images, expected $N"
# M orphans, spread over the images/XX directories, and leftovers in tmp/.
i=0
for d in "$TEMPLATE"/images/*/; do
	((i < M / 2)) || break
	echo "orphan $i" >"$d/orphan$i.symdb"
	i=$((i + 1))
done
while ((i < M)); do
	echo "leftover $i" >"$TEMPLATE/tmp/leftover$i.XXXXXX"
	i=$((i + 1))
done
find "$TEMPLATE/images" "$TEMPLATE/tmp" -type f -exec touch -d '2000-01-01' {} +

# count FILE: "I F" from gc's summary "I images (B bytes) and F stray files removed"
count() { sed -n 's/^\([0-9]*\) images ([0-9]* bytes) and \([0-9]*\) stray files removed$/\1 \2/p' "$1"; }

over=0
for ((r = 1; r <= ROUNDS; r++)); do
	rm -rf "$DB"
	cp -a "$TEMPLATE" "$DB"
	SYMDB_NOW=$LATE "$SYMDB" --db "$DB" gc --unused-for 1d >"$SCRATCH/gc1" 2>"$SCRATCH/gc1.err" &
	p1=$!
	SYMDB_NOW=$LATE "$SYMDB" --db "$DB" gc --unused-for 1d >"$SCRATCH/gc2" 2>"$SCRATCH/gc2.err" &
	p2=$!
	rc1=0 rc2=0
	wait $p1 || rc1=$?
	wait $p2 || rc2=$?
	((rc1 == 0 && rc2 == 0)) || fail "round $r: gc exits $rc1 and $rc2: $(cat "$SCRATCH"/gc?.err)"
	read -r i1 f1 < <(count "$SCRATCH/gc1")
	read -r i2 f2 < <(count "$SCRATCH/gc2")
	[[ -n ${i1:-} && -n ${i2:-} ]] || fail "round $r: no summary line from gc"
	# Each "removed UUID" / "removed FILE" line is one removal too.
	lines=$(cat "$SCRATCH/gc1" "$SCRATCH/gc2" | grep -c '^removed ' || true)
	if ((i1 + i2 != N || f1 + f2 != M || lines != N + M)); then
		echo "round $r: images $i1 + $i2 (of $N), stray files $f1 + $f2 (of $M), $lines removal lines"
		over=$((over + 1))
	fi
	left=$("$SYMDB" --db "$DB" list | wc -l)
	((left == 0)) || fail "round $r: $left images left after both gc runs"
	[[ -z $(find "$DB/images" "$DB/tmp" -type f) ]] || fail "round $r: files left after both gc runs"
done
((over == 0)) || fail "$over of $ROUNDS rounds counted removals twice (or lost them)"
note "$ROUNDS rounds of two concurrent gc runs: $N images and $M stray files counted once each"
