#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fetch_force.sh: `symdb build --build-id HEX --force` fetches and publishes
# HEX anew when the database already holds it, as `symdb build FILE --force`
# rebuilds (SPEC §12.9).
#   1. an index fetched from a real debuginfod, then damaged (bytes of a
#      table flipped: `symdb verify` says so): without --force it is kept
#      ("skipped"); with --force the server is asked again, the index is
#      replaced, verify is clean and the answers are llvm-symbolizer-14's
#   2. the same with an upstream store (python3 http.server over an
#      exported tree): "imported" again, verify clean
#   3. a build-id remembered as a miss: --force asks the server anyway
source "$(dirname "$0")/lib.sh"
require gcc objcopy curl

fleet_fixture "$SCRATCH/fx"
fleet_addrs "$SCRATCH/fx/prog" >"$SCRATCH/addrs"
llvm-symbolizer-14 --obj "$SCRATCH/fx/srv/prog" $(cat "$SCRATCH/addrs") >"$SCRATCH/want"
grep -q middle "$SCRATCH/want" || fail "the oracle names no function: the fixture is not what it should be"
dbgd_start "$SCRATCH/fx/srv" 2

# damage DB: flip 8 bytes in the middle of the one index file (a table's
# payload), and check that verify reports it
damage() {
	local f
	f=$(index_files "$1")
	[[ -n $f ]] || fail "$1: no index file to damage"
	python3 - "$f" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
for i in range(len(b) // 2, len(b) // 2 + 8):
    b[i] ^= 0xff
open(sys.argv[1], 'wb').write(b)
PY
	run "$SYMDB" verify --db "$1"
	((RC == 4)) && grep -q "^damaged $PROG_ID " "$OUT" || fail "verify of the damaged index: exit $RC: $(cat "$OUT" "$ERR")"
}

note "1. a damaged index fetched from debuginfod: --force fetches it anew"
DB=$SCRATCH/db
run "$SYMDB" build --db "$DB" --build-id "$PROG_ID" --debuginfod "$DBGD_URL"
((RC == 0)) && grep -qx "indexed $PROG_ID (debuginfod $DBGD_URL)" "$OUT" || fail "first fetch: exit $RC: $(cat "$OUT" "$ERR")"
damage "$DB"
run "$SYMDB" build --db "$DB" --build-id "$PROG_ID" --debuginfod "$DBGD_URL"
((RC == 0)) && grep -qx "skipped $PROG_ID (already indexed)" "$OUT" || fail "without --force: exit $RC: $(cat "$OUT" "$ERR")"
before=$(dbgd_gets "$PROG_ID")
run "$SYMDB" build --db "$DB" --build-id "$PROG_ID" --debuginfod "$DBGD_URL" --force
((RC == 0)) && grep -qx "indexed $PROG_ID (debuginfod $DBGD_URL)" "$OUT" ||
	fail "--force over a damaged index: exit $RC: $(cat "$OUT" "$ERR") (expected it fetched anew)"
(( $(dbgd_gets "$PROG_ID") > before )) || fail "--force did not ask the server"
run "$SYMDB" verify --db "$DB"
expect_ok "verify after --force: $(cat "$OUT")"
run "$SYMDB" query --db "$DB" --no-fetch --uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
diff -u "$SCRATCH/want" "$OUT" || fail "after --force: answers differ from llvm-symbolizer-14"
[[ -z $(ls -A "$DB/tmp" 2>/dev/null) ]] || fail "DB/tmp not empty after --force: $(ls -A "$DB/tmp")"

note "2. a damaged index imported from an upstream store: --force imports it anew"
run "$SYMDB" --db "$SCRATCH/good" build --build-id "$PROG_ID" --debuginfod "$DBGD_URL"
expect_ok "the store's source database"
run "$SYMDB" --db "$SCRATCH/good" export --tree "$SCRATCH/tree"
expect_ok "export --tree"
http_start "$SCRATCH/tree"
DB=$SCRATCH/db-up
run "$SYMDB" build --db "$DB" --build-id "$PROG_ID" --upstream "$HTTP_URL"
((RC == 0)) && grep -q "^imported $PROG_ID (upstream " "$OUT" || fail "first import: exit $RC: $(cat "$OUT" "$ERR")"
damage "$DB"
run "$SYMDB" build --db "$DB" --build-id "$PROG_ID" --upstream "$HTTP_URL" --force
((RC == 0)) && grep -q "^imported $PROG_ID (upstream " "$OUT" ||
	fail "--force over a damaged import: exit $RC: $(cat "$OUT" "$ERR") (expected it imported anew)"
(( $(http_gets "GET /symdb/v1/${PROG_ID:0:2}/$PROG_ID.symdb") == 2 )) || fail "the store was not asked twice: $(cat "$HTTP_LOG")"
run "$SYMDB" verify --db "$DB"
expect_ok "verify after --force (upstream): $(cat "$OUT")"

note "3. a remembered miss does not stop --force"
U=0123456789abcdef0123456789abcdef01234567
run "$SYMDB" build --db "$SCRATCH/db" --build-id "$U" --debuginfod "$DBGD_URL"
expect_error "unknown build-id" "$U: not found on any source"
[[ -f $SCRATCH/db/misses/$U ]] || fail "the unknown build-id was not remembered"
n=$(dbgd_gets "$U")
run "$SYMDB" build --db "$SCRATCH/db" --build-id "$U" --debuginfod "$DBGD_URL" --force
expect_error "unknown build-id, --force" "$U: not found on any source"
grep -qF "(answered" "$ERR" && fail "--force answered from the negative cache: $(cat "$ERR")"
(( $(dbgd_gets "$U") > n )) || fail "--force did not ask the server about a remembered miss"
