#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fetch_exe_only.sh: a real debuginfod that has the stripped executable of
# a build-id and no debuginfo (SPEC §12.9).  The executable alone indexes
# to nothing (§7.2: a stripped PIE whose .dynsym only imports); that index
# is the fetch's result, remembered like a miss for the negative TTL:
#   1. query --uuid: fetched once, answered as llvm-symbolizer-14 on the
#      stripped executable (??), DB/misses/HEX written
#   2. more queries (--uuid, --build-id), `build --build-id` ("skipped ...
#      (already indexed)", exit 0) and a `symdb serve` started on the
#      database: none reaches debuginfod
#   3. after the TTL the server is asked again; once a debuginfod has the
#      debuginfo, the index is replaced and answers as llvm-symbolizer-14
#      on the executable and its debug file
# Before, every query, build and serve lookup downloaded the executable
# again (and found no debuginfo again).
source "$(dirname "$0")/lib.sh"
require gcc objcopy curl

fleet_fixture "$SCRATCH/fx"
fleet_addrs "$SCRATCH/fx/prog" >"$SCRATCH/addrs"
mkdir -p "$SCRATCH/exe-only"
cp "$SCRATCH/fx/srv/prog" "$SCRATCH/exe-only/prog" # (its debuglink names no file here)
llvm-symbolizer-14 --obj "$SCRATCH/exe-only/prog" $(cat "$SCRATCH/addrs") >"$SCRATCH/want_alone"
llvm-symbolizer-14 --obj "$SCRATCH/fx/srv/prog" $(cat "$SCRATCH/addrs") >"$SCRATCH/want"
grep -q middle "$SCRATCH/want" || fail "the oracle names no function: the fixture is not what it should be"
grep -q middle "$SCRATCH/want_alone" && fail "the stripped executable alone answers: the fixture is not what it should be"
dbgd_start "$SCRATCH/exe-only" 1
EXE_DBGD=$DBGD_URL
# debuginfod logs a request when it ends: let the log settle before counting
gets() { sleep 0.3; dbgd_gets "$PROG_ID"; }
DB=$SCRATCH/db

note "1. the executable without debuginfo: fetched once, answered ??, remembered"
run "$SYMDB" query --db "$DB" --debuginfod "$EXE_DBGD" --uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
((RC == 0)) && [[ ! -s $ERR ]] || fail "first query: exit $RC: $(cat "$ERR")"
diff -u "$SCRATCH/want_alone" "$OUT" || fail "first query: answers differ from llvm-symbolizer-14 on the executable"
n1=$(gets)
grep -q "GET /buildid/$PROG_ID/executable 200" "$DBGD_LOG" &&
	grep -q "GET /buildid/$PROG_ID/debuginfo 404" "$DBGD_LOG" ||
	fail "the server was not asked as expected: $(grep buildid "$DBGD_LOG")"
[[ -f $DB/misses/$PROG_ID ]] || fail "the executable-only result was not remembered in DB/misses/$PROG_ID"

note "2. within the TTL nothing reaches debuginfod: query, --build-id lines, build, serve"
run "$SYMDB" query --db "$DB" --debuginfod "$EXE_DBGD" --uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
((RC == 0)) && [[ ! -s $ERR ]] || fail "second query: exit $RC: $(cat "$ERR")"
diff -u "$SCRATCH/want_alone" "$OUT" || fail "second query: answers differ"
run_in "$SCRATCH/addrs" "$SYMDB" query --db "$DB" --debuginfod "$EXE_DBGD" --build-id "$PROG_ID"
((RC == 0)) || fail "query --build-id: exit $RC: $(cat "$ERR")"
run "$SYMDB" build --db "$DB" --build-id "$PROG_ID" --debuginfod "$EXE_DBGD"
((RC == 0)) && grep -qx "skipped $PROG_ID (already indexed)" "$OUT" && [[ ! -s $ERR ]] ||
	fail "build --build-id: exit $RC: $(cat "$OUT" "$ERR")"
node_serve_start "$DB" --debuginfod "$EXE_DBGD" --fetch-budget-ms 10000
curl -s -m 30 -H 'Content-Type: application/json' \
	--data "{\"modules\":[{\"build_id\":\"$PROG_ID\",\"addresses\":[\"0x1000\"]}]}" \
	"$NODE_SERVE_URL/v1/symbolize" >"$SCRATCH/serve.out" || fail "serve: no answer"
grep -q '"status":"ok"' "$SCRATCH/serve.out" || fail "serve: $(cat "$SCRATCH/serve.out")"
n=$(gets)
((n == n1)) || fail "requests inside the TTL reached debuginfod: $n GETs, $n1 after the first fetch"

note "3. after the TTL it is asked again; a debuginfo that appears replaces the index"
touch -d '-5 seconds' "$DB/misses/$PROG_ID"
run "$SYMDB" query --db "$DB" --debuginfod "$EXE_DBGD" --negative-ttl 2 --uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
((RC == 0)) && [[ ! -s $ERR ]] || fail "query after the TTL: exit $RC: $(cat "$ERR")"
(( $(gets) > n1 )) || fail "after the TTL the server was not asked again"
dbgd_start "$SCRATCH/fx/srv" 2 # (a second server: its log replaces the first's)
touch -d '-5 seconds' "$DB/misses/$PROG_ID"
run "$SYMDB" query --db "$DB" --debuginfod "$DBGD_URL" --negative-ttl 2 --uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
((RC == 0)) && [[ ! -s $ERR ]] || fail "query with the debuginfo served: exit $RC: $(cat "$ERR")"
diff -u "$SCRATCH/want" "$OUT" || fail "with the debuginfo served: answers differ from llvm-symbolizer-14"
[[ ! -e $DB/misses/$PROG_ID ]] || fail "the miss was not forgotten once the debuginfo was published"
