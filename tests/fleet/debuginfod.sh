#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# debuginfod.sh: a real debuginfod on loopback serving a stripped binary and
# its .debug file (built here).  symdb fetches the unknown build-id, indexes
# it and answers equal to llvm-symbolizer-14 on the local files; the second
# query does not reach the server; an unknown build-id is answered from the
# negative cache inside --negative-ttl (no request) and asked again after it;
# "BUILDID:" request lines are fetched alike, answering as llvm-symbolizer-16
# does from the same server, and so is --build-id HEX; an index of the
# stripped binary alone, which answers nothing, is fetched over, and an
# upstream store's such index does not keep debuginfod from being asked.
source "$(dirname "$0")/lib.sh"
require gcc objcopy curl
t0=$(date +%s%N)

fleet_fixture "$SCRATCH/fx"
dbgd_start "$SCRATCH/fx/srv" 2
DB=$SCRATCH/db
fleet_addrs "$SCRATCH/fx/prog" | while read -r a; do printf '%s\n0x%x\n' "$a" $((a + 5)); done >"$SCRATCH/addrs"
(( $(wc -l <"$SCRATCH/addrs") >= 6 )) || fail "too few addresses in the fixture"

note "1. query --uuid of an unknown build-id: fetched, indexed, answered as llvm-symbolizer-14"
run "$SYMDB" query --db "$DB" --debuginfod "$DBGD_URL" --uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
((RC == 0)) || fail "query --uuid: exit $RC: $(cat "$ERR")"
[[ ! -s $ERR ]] || fail "query --uuid: stderr: $(cat "$ERR")"
llvm-symbolizer-14 --obj "$SCRATCH/fx/srv/prog" $(cat "$SCRATCH/addrs") >"$SCRATCH/want"
diff -u "$SCRATCH/want" "$OUT" || fail "answers differ from llvm-symbolizer-14 on the local files"
grep -q 'middle' "$OUT" || fail "the oracle names no function: the fixture is not what it should be"
(( $(dbgd_gets "$PROG_ID") >= 1 )) || fail "the server's log shows no request for $PROG_ID"
ls "$DB/tmp" | grep -q . && fail "DB/tmp not empty after the fetch: $(ls "$DB/tmp")"

note "2. the second query hits the index: no request reaches the server"
before=$(dbgd_gets "$PROG_ID")
run "$SYMDB" query --db "$DB" --debuginfod "$DBGD_URL" --uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
((RC == 0)) && diff -q "$SCRATCH/want" "$OUT" >/dev/null || fail "second query: exit $RC, or other answers"
(( $(dbgd_gets "$PROG_ID") == before )) || fail "the second query reached the server"
run "$SYMDB" build --db "$DB" --build-id "$PROG_ID" --debuginfod "$DBGD_URL"
((RC == 0)) && grep -qx "skipped $PROG_ID (already indexed)" "$OUT" || fail "build --build-id of an indexed image: $(cat "$OUT" "$ERR")"

note "2b. an index that answers nothing (the stripped binary built without its debug file) is fetched over"
mkdir -p "$SCRATCH/alone"
cp "$SCRATCH/fx/srv/prog" "$SCRATCH/alone/prog" # (its debuglink names no file here)
run "$SYMDB" build --db "$SCRATCH/db3" "$SCRATCH/alone/prog"
((RC == 0)) && grep -q "(no symbols and no debug information" "$OUT" ||
	fail "build of the stripped binary alone: exit $RC: $(cat "$OUT" "$ERR")"
run "$SYMDB" query --db "$SCRATCH/db3" --debuginfod "$DBGD_URL" --uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
((RC == 0)) || fail "query over an empty index: exit $RC: $(cat "$ERR")"
diff -u "$SCRATCH/want" "$OUT" || fail "over an empty index: answers differ from llvm-symbolizer-14 (not fetched)"

note "2c. an upstream store whose index of the image answers nothing does not hide debuginfod"
# (a store filled from stripped binaries: its index is published, then the
# debuginfod server, asked next, has the debug information, which replaces it;
# before, the fetch stopped at the store and every answer was ??)
if command -v nginx >/dev/null 2>&1; then
	# (db3's index was fetched over in 2b: a new database with the empty one)
	run "$SYMDB" build --db "$SCRATCH/db4" "$SCRATCH/alone/prog"
	((RC == 0)) && grep -q "(no symbols and no debug information" "$OUT" ||
		fail "build of the stripped binary alone (db4): exit $RC: $(cat "$OUT" "$ERR")"
	run "$SYMDB" --db "$SCRATCH/db4" export --tree "$SCRATCH/tree3"
	expect_ok "export --tree of the empty index"
	nginx_start "$SCRATCH/tree3"
	run "$SYMDB" query --db "$SCRATCH/db5" --upstream "$NGINX_URL" --debuginfod "$DBGD_URL" \
		--uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
	((RC == 0)) || fail "store with an empty index, then debuginfod: exit $RC: $(cat "$ERR")"
	diff -u "$SCRATCH/want" "$OUT" ||
		fail "store with an empty index, then debuginfod: answers differ from llvm-symbolizer-14"
	(( $(nginx_gets "$NGINX_ACCESS" "/symdb/v1/${PROG_ID:0:2}/$PROG_ID.symdb") == 1 )) ||
		fail "the store was not asked once: $(cat "$NGINX_ACCESS")"
	# the store alone: its empty index is the answer (?? as llvm-symbolizer-14 on the
	# stripped binary without its debug file), published, no error
	run "$SYMDB" query --db "$SCRATCH/db6" --upstream "$NGINX_URL" --uuid "$PROG_ID" \
		$(cat "$SCRATCH/addrs")
	((RC == 0)) && [[ ! -s $ERR ]] || fail "the store alone: exit $RC: $(cat "$ERR")"
	llvm-symbolizer-14 --obj "$SCRATCH/alone/prog" $(cat "$SCRATCH/addrs") >"$SCRATCH/want_alone"
	diff -u "$SCRATCH/want_alone" "$OUT" || fail "the store alone: answers differ from llvm-symbolizer-14"
else
	skip_part "nginx not found: the store with an empty index is not checked"
fi

note "3. symdb build --build-id through DEBUGINFOD_URLS (the environment), into another database"
DEBUGINFOD_URLS="$DBGD_URL" run "$SYMDB" build --db "$SCRATCH/db2" --build-id "$PROG_ID"
((RC == 0)) && grep -qx "indexed $PROG_ID (debuginfod $DBGD_URL)" "$OUT" || fail "build --build-id: exit $RC: $(cat "$OUT" "$ERR")"
run "$SYMDB" query --db "$SCRATCH/db2" --no-fetch --uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
diff -u "$SCRATCH/want" "$OUT" || fail "db2: answers differ from llvm-symbolizer-14"

note "4. an unknown build-id: one line, remembered; inside the TTL no request reaches the server"
U=0123456789abcdef0123456789abcdef01234567
run "$SYMDB" query --db "$DB" --debuginfod "$DBGD_URL" --uuid "$U" 0x1000
expect_error "unknown build-id" "$U: not found on any source"
n1=$(dbgd_gets "$U")
((n1 >= 1)) || fail "the unknown build-id was not asked of the server"
[[ -f $DB/misses/$U ]] || fail "no negative-cache entry DB/misses/$U"
run "$SYMDB" query --db "$DB" --debuginfod "$DBGD_URL" --uuid "$U" 0x1000
expect_error "unknown build-id again" "$U: not found on any source (answered"
(( $(dbgd_gets "$U") == n1 )) || fail "a request inside the TTL reached the server"

note "5. after the TTL it is asked again"
touch -d '-5 seconds' "$DB/misses/$U"
run "$SYMDB" build --db "$DB" --negative-ttl 2 --build-id "$U" --debuginfod "$DBGD_URL"
expect_error "after the TTL" "$U: not found on any source"
(( $(dbgd_gets "$U") > n1 )) || fail "after the TTL the server was not asked again"

note "6. --no-fetch and no source: nothing asked"
n2=$(dbgd_gets "$U")
rm -f "$DB/misses/$U"
DEBUGINFOD_URLS="$DBGD_URL" run "$SYMDB" query --db "$DB" --no-fetch --uuid "$U" 0x1000
((RC != 0)) && (( $(dbgd_gets "$U") == n2 )) || fail "--no-fetch reached the server"

note "7. BUILDID: request lines and --build-id fetch on first sight"
# The answers are llvm-symbolizer-14's on the stripped binary, as in 1 (what
# symdb indexes from debuginfod: the executable and its debuginfo; LLVM 16
# reads the debuginfo file alone, and names _init and _start from its
# symbol table); the unknown build-id is said as llvm-symbolizer-16 says it
# after asking the same server.
if command -v llvm-symbolizer-16 >/dev/null; then
	{
		while read -r a; do
			printf 'BUILDID:%s %s\nCODE BUILDID:%s %s\n' "$PROG_ID" "$a" "${PROG_ID^^}" "$a"
		done <"$SCRATCH/addrs"
		printf 'BUILDID:%s 0x1000\nBUILDID:%s 0x1000\n' "$U" "$U"
	} >"$SCRATCH/bid-lines"
	sed -e "s|^\(CODE \)\{0,1\}BUILDID:$PROG_ID |$SCRATCH/fx/srv/prog |I" \
		-e "s|^BUILDID:$U |/nonexistent/prog |" "$SCRATCH/bid-lines" >"$SCRATCH/path-lines"
	llvm-symbolizer-14 <"$SCRATCH/path-lines" >"$SCRATCH/want14" 2>/dev/null
	DEBUGINFOD_URLS="$DBGD_URL" DEBUGINFOD_CACHE_PATH="$SCRATCH/llvm-cache" \
		llvm-symbolizer-16 --debug-file-directory=/nonexistent <"$SCRATCH/bid-lines" \
		>"$SCRATCH/want16" 2>"$SCRATCH/want16.err"
	grep -q middle "$SCRATCH/want16" || fail "llvm-symbolizer-16 did not fetch $PROG_ID"
	grep -q middle "$SCRATCH/want14" || fail "llvm-symbolizer-14 named no function: the input is wrong"
	run_in "$SCRATCH/bid-lines" "$SYMDB" query --db "$SCRATCH/db3" --debuginfod "$DBGD_URL" \
		--debug-file-directory=/nonexistent
	((RC == 0)) || fail "BUILDID lines: exit $RC: $(cat "$ERR")"
	diff -u "$SCRATCH/want14" "$OUT" || fail "BUILDID lines: answers differ from llvm-symbolizer-14's by path"
	diff -u "$SCRATCH/want16.err" "$ERR" || fail "BUILDID lines: stderr differs from llvm-symbolizer-16"
	run "$SYMDB" list --db "$SCRATCH/db3"
	grep -q "^$PROG_ID " "$OUT" || fail "BUILDID lines: $PROG_ID was not published"
	[[ -f $SCRATCH/db3/misses/$U ]] || fail "BUILDID lines: the unknown build-id was not remembered"
	# a fetch that fails (nobody listens): the fetch's reason, once, in JSON too
	dead=$(dead_url)
	printf 'BUILDID:abcd 0x10\nBUILDID:abcd 0x20\n' >"$SCRATCH/bid-dead"
	run_in "$SCRATCH/bid-dead" "$SYMDB" query --db "$SCRATCH/db3" --output-style=JSON \
		--debuginfod "$dead" --fetch-timeout 5 --debug-file-directory=/nonexistent
	((RC == 1)) || fail "BUILDID line, dead source: exit $RC, expected 1"
	[[ $(grep -c '"Error"' "$OUT") == 1 ]] && grep -qF "\"Message\":\"abcd: $dead: " "$OUT" ||
		fail "BUILDID line, dead source: JSON does not carry the fetch's reason once: $(cat "$OUT")"
	grep -qF "symdb: abcd: $dead: " "$ERR" || fail "BUILDID line, dead source: stderr: $(cat "$ERR")"
	# --build-id HEX (LLVM 15's option) fetches alike, into a new database
	llvm-symbolizer-14 --obj="$SCRATCH/fx/srv/prog" <"$SCRATCH/addrs" >"$SCRATCH/want14.obj" 2>/dev/null
	run_in "$SCRATCH/addrs" "$SYMDB" query --db "$SCRATCH/db4" --debuginfod "$DBGD_URL" \
		--debug-file-directory=/nonexistent --build-id "${PROG_ID^^}"
	((RC == 0)) || fail "--build-id: exit $RC: $(cat "$ERR")"
	diff -u "$SCRATCH/want14.obj" "$OUT" || fail "--build-id: answers differ from llvm-symbolizer-14's by path"
	run "$SYMDB" list --db "$SCRATCH/db4"
	grep -q "^$PROG_ID " "$OUT" || fail "--build-id: $PROG_ID was not published"
else
	skip_part "7. BUILDID lines: llvm-symbolizer-16 not found"
fi

note "wall time: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
