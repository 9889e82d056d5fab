#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# symbolize.sh: SYMDB_SYMBOLIZER_FETCH through the library (fleet_symbolize,
# a small C driver): requests naming images by hex only.  A known image of
# an upstream store is fetched on first sight and answered as
# llvm-symbolizer-14 answers on the local file; an unknown one is
# "not indexed" with SYMDB_E_NOT_FOUND and the rest of the batch answered;
# against a server that never answers, three unknown images of one call
# share one deadline: one connection is made, not three.
source "$(dirname "$0")/lib.sh"
require gcc objcopy
: "${FLEET_SYMBOLIZE:?FLEET_SYMBOLIZE must be set}"
FETCHER=$SYMDB_BUILD/tools/symdb-fetch
INDEXER=$SYMDB_BUILD/tools/symdb-indexer
t0=$(date +%s%N)

fleet_fixture "$SCRATCH/fx"
"$SYMDB" build --db "$SCRATCH/src" "$SCRATCH/fx/prog" >/dev/null
good=$(find "$SCRATCH/src/images" -name "$PROG_ID.symdb")
mkdir -p "$SCRATCH/tree/symdb/v1/${PROG_ID:0:2}"
cp "$good" "$SCRATCH/tree/symdb/v1/${PROG_ID:0:2}/"
http_start "$SCRATCH/tree"
# The database exists (symdb_open), holding another image only.
DB=$SCRATCH/db
echo 'int main(void) { return 0; }' >"$SCRATCH/other.c"
gcc -g -o "$SCRATCH/other" "$SCRATCH/other.c"
"$SYMDB" build --db "$DB" "$SCRATCH/other" >/dev/null
U=dddd000000000000000000000000000000000001

note "1. fetched on first sight through the library, answered as llvm-symbolizer-14"
mapfile -t addrs < <(fleet_addrs "$SCRATCH/fx/prog")
reqs=()
for a in "${addrs[@]}"; do reqs+=("$PROG_ID:$a"); done
run "$FLEET_SYMBOLIZE" "$DB" "$FETCHER" "$INDEXER" 10000 "$HTTP_URL" "" "${reqs[@]}" "$U:0x1000"
((RC == 0)) || fail "fleet_symbolize: exit $RC: $(cat "$ERR")"
{
	for a in "${addrs[@]}"; do
		echo "$PROG_ID $a ok"
		llvm-symbolizer-14 --obj "$SCRATCH/fx/prog" "$a" | sed '/^$/d'
	done
	echo "$U 0x1000 status 1" # SYMDB_SYM_NOT_INDEXED, then its code (checked below)
} >"$SCRATCH/want"
sed 's/^\(.* status 1\) .*/\1/' "$OUT" >"$SCRATCH/got"
diff -u "$SCRATCH/want" "$SCRATCH/got" || fail "library answers differ from llvm-symbolizer-14's"
grep -q "^$U 0x1000 status 1 SYMDB_E_NOT_FOUND" "$OUT" || fail "the unknown image is not SYMDB_E_NOT_FOUND: $(grep "^$U" "$OUT")"
(( $(http_gets "GET /symdb/v1/${PROG_ID:0:2}/$PROG_ID.symdb") == 1 )) || fail "the store was not asked exactly once"

note "2. three unknown images, a server that never answers: one deadline for the call"
hang_start
run timeout 60 "$FLEET_SYMBOLIZE" "$DB" "$FETCHER" "$INDEXER" 1000 "$HANG_URL" "" \
	eeee000000000000000000000000000000000001:0x10 eeee000000000000000000000000000000000002:0x10 \
	eeee000000000000000000000000000000000003:0x10 "$PROG_ID:${addrs[0]}"
((RC == 0)) || fail "fleet_symbolize: exit $RC: $(cat "$ERR")"
(( $(grep -c ' status 1 .*-ETIMEDOUT\| status 1 .*timed out' "$OUT") == 3 )) || fail "not three timeouts: $(cat "$OUT")"
grep -q "^$PROG_ID ${addrs[0]} ok" "$OUT" || fail "the known image was not answered"
(( $(wc -l <"$HANG_LOG") == 1 )) || fail "$(wc -l <"$HANG_LOG") connections: the call's fetches did not share one deadline"

note "wall time: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
