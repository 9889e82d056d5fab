#!/bin/bash
# SPDX-License-Identifier: MIT
#
# proxy.sh: fetching through an HTTP proxy (symdb_fetch_opts' proxies, which
# the CLI and the server read from the environment as curl does).  A real
# nginx is the forward proxy on loopback (its access log records each
# request it carried, with the absolute URL), another nginx the upstream
# store (README's config over an exported tree), and a real debuginfod the
# debuginfod server.
#   1. http_proxy: `symdb query --uuid` fetches the store's file through the
#      proxy (one proxied GET, one GET at the store), answers as
#      llvm-symbolizer-14 on the file
#   2. http_proxy naming a dead port: one line naming the store's URL and the
#      connection failure, nothing published, the store not asked; before
#      the fetcher got the proxies this fetch went direct and succeeded
#      a proxy value past 4095 bytes: refused in one line that does not
#      repeat it (it may hold a password), nobody asked (a 5 KB
#      --debuginfod URL alike); a proxy libcurl
#      cannot use, whose value holds a password: libcurl's error repeats
#      the value, and the line shows "user:***" (also when libcurl cut the
#      value inside a 309-byte password)
#   3. no_proxy=127.0.0.1 beside that dead proxy: direct, answered
#   4. only HTTP_PROXY (uppercase) set to the dead proxy: ignored, as curl
#      ignores it (httpoxy); ALL_PROXY (uppercase) is read: proxied
#   5. debuginfod through http_proxy: `symdb build --build-id` downloads
#      through the proxy, indexes, and queries answer as llvm-symbolizer-14
#   6. `symdb serve --upstream` started with http_proxy: an unknown image is
#      fetched through the proxy (the server's copy of the options)
source "$(dirname "$0")/lib.sh"
require nginx curl gcc objcopy llvm-symbolizer-14
t0=$(date +%s.%N)

fleet_fixture "$SCRATCH/fx"
fleet_addrs "$SCRATCH/fx/prog" >"$SCRATCH/addrs"
(($(wc -l <"$SCRATCH/addrs") >= 3)) || fail "too few addresses in the fixture"
llvm-symbolizer-14 --obj "$SCRATCH/fx/prog" <"$SCRATCH/addrs" >"$SCRATCH/want"
grep -q middle "$SCRATCH/want" || fail "the oracle names no function: the fixture is not what it should be"
STORE_PATH=/symdb/v1/${PROG_ID:0:2}/$PROG_ID.symdb

run "$SYMDB" --db "$SCRATCH/store-db" build -q "$SCRATCH/fx/prog"
expect_ok "build the store's image"
run "$SYMDB" --db "$SCRATCH/store-db" export --tree "$SCRATCH/tree"
expect_ok "export --tree"
nginx_start "$SCRATCH/tree"
STORE_URL=$NGINX_URL STORE_LOG=$NGINX_ACCESS

# proxy_start: nginx as a forward proxy for http:// URLs on a free port.
# Its access log line of a proxied request holds the absolute URL asked
# for: "GET http://127.0.0.1:PORT/PATH HTTP/1.1".  Sets PROXY, PROXY_LOG.
proxy_start() {
	local dir=$SCRATCH/proxy port i try
	mkdir -p "$dir/tmp"
	for try in 1 2 3; do
		port=$(free_port)
		{
			nginx_conf_head "$dir"
			echo "    server {"
			echo "        listen 127.0.0.1:$port;"
			# the host the client named: the test's servers are IP
			# literals, so no resolver is needed
			echo "        location / { proxy_pass http://\$http_host\$request_uri; }"
			echo "    }"
			echo "}"
		} >"$dir/nginx.conf"
		: >"$dir/error.log"
		nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -g 'daemon off;' 2>>"$dir/error.log" &
		FLEET_PIDS+=("$!")
		PROXY=http://127.0.0.1:$port PROXY_LOG=$dir/access.log
		for ((i = 0; i < 200; i++)); do
			curl -s -o /dev/null -m 2 "$PROXY/" && return 0
			sleep 0.05
		done
		grep -q 'Address already in use' "$dir/error.log" || break
	done
	fail "the proxy nginx did not start: $(tail -n 3 "$dir/error.log")"
}
# proxied URL: how many GETs of that absolute URL the proxy carried
proxied() { grep -cF "\"GET $1 HTTP/" "$PROXY_LOG" || true; }
proxy_start
DEAD=$(dead_url)
note "store $STORE_URL, proxy $PROXY, dead proxy $DEAD"

# query DB [ENV=VALUE...]: symdb query --uuid PROG_ID from the store, with
# only the given proxy variables in its environment
query() {
	local db=$1
	shift
	run_in "$SCRATCH/addrs" env -u http_proxy -u https_proxy -u all_proxy -u no_proxy \
		-u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u NO_PROXY "$@" \
		"$SYMDB" --db "$db" query --upstream "$STORE_URL" --uuid "$PROG_ID"
}

note "1. http_proxy: the store's file fetched through the proxy"
query "$SCRATCH/db1" http_proxy="$PROXY"
expect_ok "query through the proxy"
cmp -s "$OUT" "$SCRATCH/want" || fail "through the proxy: answers differ from llvm-symbolizer-14"
[[ ! -s $ERR ]] || fail "through the proxy: stderr: $(cat "$ERR")"
[[ $(proxied "$STORE_URL$STORE_PATH") == 1 ]] || fail "the proxy did not carry one GET of $STORE_URL$STORE_PATH"
[[ $(nginx_gets "$STORE_LOG" "$STORE_PATH") == 1 ]] || fail "the store was not asked once"

note "2. http_proxy naming a dead port: one line, nothing published, the store not asked"
state=$(db_state "$SCRATCH/db1")
query "$SCRATCH/db2" http_proxy="$DEAD"
expect_error "dead proxy" "$PROG_ID: $STORE_URL$STORE_PATH: "
((RC == 1)) || fail "dead proxy: exit $RC, expected 1"
grep -qi 'connect' "$ERR" || fail "dead proxy: the reason is not the connection: $(cat "$ERR")"
[[ $(nginx_gets "$STORE_LOG" "$STORE_PATH") == 1 ]] || fail "dead proxy: the store was asked (the fetch went direct)"
[[ -z $("$SYMDB" --db "$SCRATCH/db2" list 2>/dev/null) ]] || fail "dead proxy: something was published"
[[ ! -e $SCRATCH/db2/misses/$PROG_ID ]] || fail "dead proxy: remembered as a negative answer"

long=http://$(head -c 5000 /dev/zero | tr '\0' a):8080
query "$SCRATCH/db2" https_proxy="$long"
expect_error "a 5 KB https_proxy" "https_proxy: longer than 4095 bytes"
[[ $(nginx_gets "$STORE_LOG" "$STORE_PATH") == 1 ]] || fail "a 5 KB https_proxy: the store was asked"
grep -q aaaaaaaa "$ERR" && fail "a 5 KB https_proxy: the value was printed"
# the same bound for debuginfod's URLs, which go to the fetcher alike (they
# were cut silently before)
run "$SYMDB" build --db "$SCRATCH/db2" --build-id "$PROG_ID" --debuginfod "$long"
expect_error "a 5 KB --debuginfod URL" "debuginfod_urls: longer than 4095 bytes"

# a password in a proxy libcurl cannot use: its error repeats the value,
# which must not reach stderr (nor a server's log)
query "$SCRATCH/db2" http_proxy="foo://user:s3cret@127.0.0.1:1"
expect_error "a proxy of unknown scheme, with a password" "foo://user:***@127.0.0.1:1"
grep -q s3cret "$ERR" && fail "the proxy's password was printed: $(cat "$ERR")"
query "$SCRATCH/db2" http_proxy="http://user:s3cret@127.0.0.1:99999"
expect_error "a proxy with a bad port, with a password" "http://user:***@127.0.0.1:99999"
grep -q s3cret "$ERR" && fail "the proxy's password was printed: $(cat "$ERR")"
# a password longer than libcurl's 256-byte error buffer: the value is cut
# inside it, and what is left of it must not show either
long_pw=$(head -c 300 /dev/zero | tr '\0' T)SECRETEND
query "$SCRATCH/db2" https_proxy="socks9://user:$long_pw@127.0.0.1:1" http_proxy="foo://user:$long_pw@127.0.0.1:1"
expect_error "a proxy with a 309-byte password" "foo://user:***"
grep -q TTTT "$ERR" && fail "a cut proxy password was printed: $(cat "$ERR")"
[[ $(nginx_gets "$STORE_LOG" "$STORE_PATH") == 1 ]] || fail "bad proxies: the store was asked"

note "3. no_proxy=127.0.0.1 beside the dead proxy: direct"
query "$SCRATCH/db3" http_proxy="$DEAD" no_proxy=127.0.0.1
expect_ok "no_proxy"
cmp -s "$OUT" "$SCRATCH/want" || fail "no_proxy: answers differ from llvm-symbolizer-14"
[[ $(nginx_gets "$STORE_LOG" "$STORE_PATH") == 2 ]] || fail "no_proxy: the store was not asked directly"

note "4. HTTP_PROXY is never read (httpoxy); ALL_PROXY is"
query "$SCRATCH/db4" HTTP_PROXY="$DEAD"
expect_ok "HTTP_PROXY alone"
cmp -s "$OUT" "$SCRATCH/want" || fail "HTTP_PROXY alone: answers differ"
[[ $(nginx_gets "$STORE_LOG" "$STORE_PATH") == 3 ]] || fail "HTTP_PROXY alone: the store was not asked directly"
query "$SCRATCH/db5" ALL_PROXY="$PROXY"
expect_ok "ALL_PROXY"
cmp -s "$OUT" "$SCRATCH/want" || fail "ALL_PROXY: answers differ"
[[ $(proxied "$STORE_URL$STORE_PATH") == 2 ]] || fail "ALL_PROXY: the proxy did not carry the GET"

note "5. debuginfod through http_proxy"
dbgd_start "$SCRATCH/fx/srv" 2
run env http_proxy="$PROXY" "$SYMDB" build --db "$SCRATCH/db6" --build-id "$PROG_ID" --debuginfod "$DBGD_URL"
((RC == 0)) && grep -qx "indexed $PROG_ID (debuginfod $DBGD_URL)" "$OUT" ||
	fail "build --build-id through the proxy: exit $RC: $(cat "$OUT" "$ERR")"
(($(grep -cF "\"GET $DBGD_URL/buildid/$PROG_ID/" "$PROXY_LOG") >= 1)) ||
	fail "the proxy carried no request to debuginfod: $(cat "$PROXY_LOG")"
# (the oracle on what debuginfod serves: the stripped executable and its
# debug file, as debuginfod.sh)
llvm-symbolizer-14 --obj "$SCRATCH/fx/srv/prog" <"$SCRATCH/addrs" >"$SCRATCH/want-srv"
run_in "$SCRATCH/addrs" "$SYMDB" --db "$SCRATCH/db6" query --no-fetch --uuid "$PROG_ID"
cmp -s "$OUT" "$SCRATCH/want-srv" || fail "debuginfod through the proxy: answers differ from llvm-symbolizer-14"
run env http_proxy="$DEAD" "$SYMDB" build --db "$SCRATCH/db7" --build-id "$PROG_ID" --debuginfod "$DBGD_URL"
expect_error "debuginfod behind a dead proxy" "$PROG_ID: $DBGD_URL: "
[[ -z $("$SYMDB" --db "$SCRATCH/db7" list 2>/dev/null) ]] || fail "debuginfod, dead proxy: something was published"

note "6. symdb serve --upstream started with http_proxy"
# (an assignment before a function call is in the environment of what
# the function runs: its /healthz probe with curl goes through the proxy
# too, which forwards it)
http_proxy="$PROXY" node_serve_start "$SCRATCH/db8" --upstream "$STORE_URL"
a=$(head -1 "$SCRATCH/addrs")
body=$(curl -s -m 60 -H 'Content-Type: application/json' \
	-d "{\"modules\":[{\"build_id\":\"$PROG_ID\",\"addresses\":[\"$a\"]}]}" "$NODE_SERVE_URL/v1/symbolize")
grep -q '"status": *"ok"' <<<"$body" || fail "serve: the unknown image was not fetched: $body"
grep -q "\"function\": *\"$(sed -n 1p "$SCRATCH/want")\"" <<<"$body" ||
	fail "serve: the frame is not llvm-symbolizer-14's $(sed -n 1p "$SCRATCH/want"): $body"
[[ $(proxied "$STORE_URL$STORE_PATH") == 3 ]] || fail "serve: the proxy did not carry the GET"
kill -TERM "$NODE_SERVE_PID"
wait "$NODE_SERVE_PID" || fail "symdb serve: exit $? after SIGTERM: $(cat "$SCRATCH/serve.err")"
! grep -qE 'Sanitizer|runtime error' "$SCRATCH/serve.err" || fail "symdb serve: $(cat "$SCRATCH/serve.err")"

note "wall time: $(printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)") s"
echo PASS
