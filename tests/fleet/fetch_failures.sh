#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fetch_failures.sh: a source that fails is reported and never remembered
# as a miss (SPEC §12.9).
#   1. an upstream store (python3 http.server over an exported tree) whose
#      index of the image answers nothing (the stripped binary indexed
#      alone), then a debuginfod server that is down or never answers: one
#      line naming the server, exit 1, nothing in DB/misses; the next query,
#      with a real debuginfod up, answers as llvm-symbolizer-14 on the
#      binary and its debug file.  With a debuginfod that answers 404 the
#      empty index is the result, remembered, as before.
#   2. a source URL with a password (http://user:PW@host): "user:***@" in
#      every line that names it (query's errors, build's report, a usage
#      error, symdb serve's log), the password nowhere.
#   3. a source URL with a ?query or #fragment: a usage error naming the
#      option and the URL (masked) for query, build, pprof, perf and
#      serve; from SYMDB_UPSTREAM or DEBUGINFOD_URLS a failure of that
#      source; either way no request and nothing remembered.
#   4. two debuginfod servers, one down or hanging, the other answering
#      404: not remembered; with the first one up, answered as
#      llvm-symbolizer-14.
source "$(dirname "$0")/lib.sh"
require gcc objcopy curl
t0=$(date +%s%N)

fleet_fixture "$SCRATCH/fx"
fleet_addrs "$SCRATCH/fx/prog" >"$SCRATCH/addrs"
llvm-symbolizer-14 --obj "$SCRATCH/fx/srv/prog" $(cat "$SCRATCH/addrs") >"$SCRATCH/want"
grep -q middle "$SCRATCH/want" || fail "the oracle names no function: the fixture is not what it should be"

note "1. a store's index that answers nothing, then a debuginfod that fails"
mkdir -p "$SCRATCH/alone"
cp "$SCRATCH/fx/srv/prog" "$SCRATCH/alone/prog" # (its debuglink names no file here)
run "$SYMDB" build --db "$SCRATCH/src" "$SCRATCH/alone/prog"
((RC == 0)) && grep -q "(no symbols and no debug information" "$OUT" ||
	fail "build of the stripped binary alone: exit $RC: $(cat "$OUT" "$ERR")"
run "$SYMDB" --db "$SCRATCH/src" export --tree "$SCRATCH/tree"
expect_ok "export --tree of the empty index"
http_start "$SCRATCH/tree"
STORE=$HTTP_URL
hang_start
dbgd_start "$SCRATCH/fx/srv" 2
GOOD_DBGD=$DBGD_URL
for down in "$(dead_url)" "$HANG_URL"; do
	DB=$SCRATCH/db-${down##*:}
	run "$SYMDB" query --db "$DB" --upstream "$STORE" --debuginfod "$down" --fetch-timeout 3 \
		--uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
	expect_error "store's empty index, debuginfod $down failing" "$PROG_ID: $down: "
	[[ -z $(ls -A "$DB/misses" 2>/dev/null) ]] ||
		fail "debuginfod $down failing: remembered as a miss: $(ls -A "$DB/misses")"
	run "$SYMDB" query --db "$DB" --upstream "$STORE" --debuginfod "$DBGD_URL" \
		--uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
	((RC == 0)) && [[ ! -s $ERR ]] || fail "then debuginfod up: exit $RC: $(cat "$ERR")"
	diff -u "$SCRATCH/want" "$OUT" || fail "then debuginfod up: answers differ from llvm-symbolizer-14"
done
# a debuginfod that answers 404 (the fixture's other program only): the
# empty index is the fetch's result, remembered
mkdir -p "$SCRATCH/other"
gcc -g -O1 -Wl,--build-id -o "$SCRATCH/other/other" -x c - <<<'int main(void) { return 0; }'
dbgd_start "$SCRATCH/other" 1
run "$SYMDB" query --db "$SCRATCH/db-404" --upstream "$STORE" --debuginfod "$DBGD_URL" \
	--uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
((RC == 0)) && [[ ! -s $ERR ]] || fail "store's empty index, debuginfod 404: exit $RC: $(cat "$ERR")"
[[ -f $SCRATCH/db-404/misses/$PROG_ID ]] || fail "store's empty index, debuginfod 404: not remembered"

note "2. a password in a source URL is never printed"
PW=S3cretPW
dead=$(dead_url)
creds() { echo "${1/:\/\//://alice:$PW@}"; } # http://h:p -> http://alice:PW@h:p
run "$SYMDB" query --db "$SCRATCH/db-pw" --upstream "$(creds "$dead")" --uuid "$PROG_ID" 0x1000
expect_error "dead store with a password" "$(creds "$dead" | sed "s/$PW/***/")/symdb/v1/"
run "$SYMDB" query --db "$SCRATCH/db-pw" --debuginfod "$(creds "$dead")" --uuid "$PROG_ID" \
	--output-style=JSON 0x1000
grep -qF "alice:***@" "$ERR" || fail "dead debuginfod with a password: stderr: $(cat "$ERR")"
run "$SYMDB" build --db "$SCRATCH/db-pw" --upstream "$(creds "$STORE")" --build-id "$PROG_ID"
((RC == 0)) && grep -qF "(upstream $(creds "$STORE" | sed "s/$PW/***/")/symdb/v1/" "$OUT" ||
	fail "build --build-id from a store with a password: exit $RC: $(cat "$OUT" "$ERR")"
# A debuginfod list longer than the library's reason (1 KiB), the password
# of its last URL where a cut of the reason would fall: the reason is
# masked before it is cut to any buffer (reader/fetch_api.c, fetch_fail),
# so not one byte of the password is printed.
# one URL long enough to bring the password's "S3c" to bytes 1019-1021
fill=$((1019 - ${#PROG_ID} - 2 - 13 - 20)) # "HEX: ", "http://alice:", this URL's own
long="http://127.0.0.1:1/$(printf "%${fill}s" '' | tr ' ' x) "
long+=$(creds "$dead")
export DEBUGINFOD_URLS=$long
run "$SYMDB" query --db "$SCRATCH/db-long" --uuid "$PROG_ID" 0x1000
unset DEBUGINFOD_URLS
! grep -q "${PW:0:3}" "$ERR" || fail "a long debuginfod list: part of the password printed: $(cat "$ERR")"
grep -q "$PROG_ID" "$ERR" || fail "a long debuginfod list: no reason printed: $(cat "$ERR")"
run "$SYMDB" query --db "$SCRATCH/db-pw" --upstream "ftp://alice:$PW@example.invalid/" --uuid "$PROG_ID" 0x1000
expect_error "not an http URL, with a password" "--upstream: not an http:// or https:// URL: 'ftp://alice:***@example.invalid/'"
node_serve_start "$SCRATCH/db-serve" --upstream "$(creds "$dead")"
curl -s -m 30 -H 'Content-Type: application/json' \
	--data "{\"modules\":[{\"build_id\":\"$PROG_ID\",\"addresses\":[\"0x1000\"]}]}" \
	"$NODE_SERVE_URL/v1/symbolize" >"$SCRATCH/serve.out" || true
for ((i = 0; i < 100; i++)); do grep -q "fetching $PROG_ID" "$SCRATCH/serve.err" && break; sleep 0.05; done
grep -qF "alice:***@" "$SCRATCH/serve.err" || fail "serve's log does not name the store: $(cat "$SCRATCH/serve.err")"
for f in "$SCRATCH/serve.err" "$SCRATCH/serve.out" "$NODE_SERVE_LOG"; do
	if grep -q "$PW" "$f"; then fail "the password is in $f: $(grep "$PW" "$f")"; fi
done

note "3. a source URL with a ?query or #fragment is refused (the store's path would land in it)"
asked=$(http_gets "GET ")
for cmd in "query --uuid $PROG_ID 0x1000" "build --build-id $PROG_ID" "pprof x.pb.gz" \
	"perf script" "serve --listen 127.0.0.1:0"; do
	for u in "$(creds "$STORE")/ok?token=abc" "$STORE/ok#x"; do
		shown=$(echo "$u" | sed "s/$PW/***/")
		run "$SYMDB" $cmd --db "$SCRATCH/db-q" --upstream "$u"
		expect_error "$cmd --upstream $shown" "--upstream: a source URL has no ?query or #fragment: '$shown'"
		((RC == 2)) || fail "$cmd --upstream $shown: exit $RC, expected 2 (usage)"
	done
done
run "$SYMDB" query --db "$SCRATCH/db-q" --debuginfod "$DBGD_URL/?x=1" --uuid "$PROG_ID" 0x1000
expect_error "--debuginfod with a query" "--debuginfod: a source URL has no ?query or #fragment"
SYMDB_UPSTREAM="$STORE/ok?token=abc" run "$SYMDB" query --db "$SCRATCH/db-q" --uuid "$PROG_ID" 0x1000
expect_error "SYMDB_UPSTREAM with a query" "$STORE/ok?token=abc: a source URL has no ?query or #fragment"
DEBUGINFOD_URLS="$DBGD_URL#x" run "$SYMDB" query --db "$SCRATCH/db-q" --uuid "$PROG_ID" 0x1000
expect_error "DEBUGINFOD_URLS with a fragment" "$DBGD_URL#x: a source URL has no ?query or #fragment"
[[ -z $(ls -A "$SCRATCH/db-q/misses" 2>/dev/null) ]] || fail "a refused URL was remembered as a miss"
[[ $(http_gets "GET ") == "$asked" ]] || fail "a refused URL reached the store: $(tail -2 "$HTTP_LOG")"

note "4. several debuginfod servers, one down and one answering 404: not remembered"
# (libdebuginfod folds the servers' errors into one "not found": with more
# than one server it is not every server's answer)
for down in "$(dead_url)" "$HANG_URL"; do
	DB=$SCRATCH/db4-${down##*:}
	run "$SYMDB" query --db "$DB" --debuginfod "$down" --debuginfod "$DBGD_URL" --fetch-timeout 3 \
		--uuid "$PROG_ID" 0x1000
	((RC != 0)) || fail "debuginfod $down down, another 404: exit 0"
	[[ -z $(ls -A "$DB/misses" 2>/dev/null) ]] ||
		fail "debuginfod $down down, another 404: remembered as a miss"
	run "$SYMDB" query --db "$DB" --debuginfod "$GOOD_DBGD" --debuginfod "$DBGD_URL" \
		--uuid "$PROG_ID" $(cat "$SCRATCH/addrs")
	((RC == 0)) || fail "then the server up: exit $RC: $(cat "$ERR")"
	diff -u "$SCRATCH/want" "$OUT" || fail "then the server up: answers differ from llvm-symbolizer-14"
done

note "wall time: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
