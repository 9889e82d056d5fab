#!/bin/bash
# SPDX-License-Identifier: MIT
#
# gc_misses.sh: `symdb gc` forgets negative fetch answers (DB/misses/HEX,
# SPEC §12.9) older than --miss-age (default 1d).  The answers are real: an
# upstream store (python3 http.server over an empty tree) answers 404.
#   1. three unknown build-ids fetched: each remembered in DB/misses
#   2. aged 2 days, 3 hours and 0: `gc -n` names only the 2-day one and
#      removes nothing; `gc` removes it, keeps the others and a file there
#      that is not a build-id; a fetch of the forgotten one asks the store
#      again, a fetch of the fresh one still asks nobody
#   3. --miss-age 2h takes the 3-hour one, --miss-age 0 the rest; one dated
#      in the future (which fetches ignore) is removed too
#   4. a symbolic link planted in DB/misses is named on stderr (exit 1),
#      neither followed nor removed: the file it points to is unchanged
source "$(dirname "$0")/lib.sh"
DB=$SCRATCH/db
mkdir -p "$SCRATCH/empty"
http_start "$SCRATCH/empty"
H1=1111111111111111111111111111111111111111
H2=2222222222222222222222222222222222222222
H3=3333333333333333333333333333333333333333
asked() { http_gets "GET /symdb/v1/${1:0:2}/$1.symdb "; }
fetch() { run "$SYMDB" build --db "$DB" --build-id "$1" --upstream "$HTTP_URL"; }

note "1. three unknown build-ids: remembered"
for h in $H1 $H2 $H3; do
	fetch $h
	expect_error "fetch of unknown $h" "$h: not found on any source"
	[[ -f $DB/misses/$h ]] || fail "no DB/misses/$h after a 404"
	[[ $(asked $h) == 1 ]] || fail "$h: the store was not asked once"
done

note "2. aged 2 days, 3 hours, now: the default --miss-age (1d) takes the first"
touch -d '-2 days' "$DB/misses/$H1"
touch -d '-3 hours' "$DB/misses/$H2"
echo "not a build-id" >"$DB/misses/notes.txt"
touch -d '-30 days' "$DB/misses/notes.txt"
run "$SYMDB" gc --db "$DB" -n
expect_ok "gc -n"
grep -qx "would remove misses/$H1 (negative fetch answer of .*)" "$OUT" || fail "gc -n did not name $H1: $(cat "$OUT")"
grep -qx "1 negative fetch answers would be forgotten" "$OUT" || fail "gc -n: no count line: $(cat "$OUT")"
grep -q -e "$H2" -e "$H3" -e notes.txt "$OUT" && fail "gc -n names a younger answer or a foreign file: $(cat "$OUT")"
[[ -f $DB/misses/$H1 ]] || fail "gc -n removed $H1"
run "$SYMDB" gc --db "$DB"
expect_ok "gc"
grep -qx "removed misses/$H1 (negative fetch answer of .*)" "$OUT" || fail "gc did not report $H1: $(cat "$OUT")"
grep -qx "1 negative fetch answers forgotten" "$OUT" || fail "gc: no count line: $(cat "$OUT")"
[[ ! -e $DB/misses/$H1 ]] || fail "gc kept the 2-day-old answer"
[[ -f $DB/misses/$H2 && -f $DB/misses/$H3 && -f $DB/misses/notes.txt ]] ||
	fail "gc removed a younger answer or the foreign file: $(ls "$DB/misses")"
fetch $H1
expect_error "fetch of the forgotten $H1" "$H1: not found on any source"
[[ $(asked $H1) == 2 ]] || fail "after gc, a fetch of $H1 did not ask the store again"
fetch $H3
expect_error "fetch of the fresh $H3" "$H3: not found on any source (answered"
[[ $(asked $H3) == 1 ]] || fail "gc broke the fresh negative answer of $H3: the store was asked"

note "3. --miss-age 2h, then 0"
run "$SYMDB" gc --db "$DB" --miss-age 2h
expect_ok "gc --miss-age 2h"
[[ ! -e $DB/misses/$H2 && -f $DB/misses/$H3 ]] || fail "--miss-age 2h: $(ls "$DB/misses")"
run "$SYMDB" gc --db "$DB" --miss-age 0
expect_ok "gc --miss-age 0"
[[ ! -e $DB/misses/$H1 && ! -e $DB/misses/$H3 ]] || fail "--miss-age 0 kept an answer: $(ls "$DB/misses")"
[[ -f $DB/misses/notes.txt ]] || fail "--miss-age 0 removed a file that is not a build-id"
# a date in the future (a clock stepped back) is no answer a fetch trusts
fetch $H3
touch -d '+2 days' "$DB/misses/$H3"
run "$SYMDB" gc --db "$DB"
expect_ok "gc, an answer dated in the future"
[[ ! -e $DB/misses/$H3 ]] || fail "gc kept an answer dated in the future"
run "$SYMDB" gc --db "$DB" --miss-age 1x
((RC == 2)) && grep -q "bad value '1x' for --miss-age" "$ERR" || fail "--miss-age 1x: exit $RC: $(cat "$ERR")"

note "4. a symbolic link planted in DB/misses"
echo victim >"$SCRATCH/victim"
sum=$(sha256sum <"$SCRATCH/victim")
ln -s "$SCRATCH/victim" "$DB/misses/$H2"
touch -h -d '-3 days' "$DB/misses/$H2"
run "$SYMDB" gc --db "$DB"
((RC == 1)) || fail "gc over a planted link: exit $RC, expected 1"
grep -q "misses/$H2: symbolic link, not followed" "$ERR" || fail "gc did not name the link: $(cat "$ERR")"
[[ -L $DB/misses/$H2 && $(sha256sum <"$SCRATCH/victim") == "$sum" ]] || fail "the link or its target changed"
echo PASS
