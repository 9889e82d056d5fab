#!/bin/bash
# SPDX-License-Identifier: MIT
#
# basic.sh: the HTTP core of `symdb serve` (README "symdb serve"):
#   1. GET /healthz answers 200 "ok"; GET /metrics counts it under the fixed
#      labels endpoint="healthz",status="200";
#   2. an unknown path is a 404, a known path with another method a 405
#      with an Allow header, HEAD a GET without the body, differing
#      Content-Length headers and HTTP/1.1 without Host a 400,
#      each with a JSON {"error": ...} body;
#   3. keep-alive: two requests on one connection get two answers;
#   4. a body announced over --max-body gets 413 before a byte of it is
#      sent (with and without "Expect: 100-continue": never a 100); a
#      chunked body that passes the limit gets 413 at its end, and one that
#      never ends is cut off; a body under the limit is read; headers or a
#      request target over --max-header-bytes get libmicrohttpd's 431/414;
#      the peak RSS stays under the stated bound;
#   5. SIGTERM: exit 0;
#   6. a database that does not exist yet is created (with its parents),
#      as `symdb build` creates one, and served; one that exists but cannot
#      be written exits 3 with one line on stderr (checked as an
#      unprivileged user when possible), and so does a --db that is a
#      regular file;
#   7. a bad option value is one line naming the option, exit 2.
# Before `symdb serve` existed every step failed: serve_start found no
# "listening on" line.
source "$(dirname "$0")/lib.sh"

serve_start --max-body 1000

note "1. healthz and metrics"
serve_req GET /healthz
((STATUS == 200)) || fail "/healthz: status $STATUS"
[[ $(cat "$OUT") == ok ]] || fail "/healthz: body '$(cat "$OUT")'"
serve_req GET /metrics
((STATUS == 200)) || fail "/metrics: status $STATUS"
grep -qx 'symdb_serve_requests_total{endpoint="healthz",status="200"} [1-9][0-9]*' "$OUT" ||
	fail "/metrics: no healthz 200 counter"
grep -q '^# TYPE symdb_serve_request_duration_seconds histogram$' "$OUT" ||
	fail "/metrics: no latency histogram"

note "2. 404 and 405"
serve_req GET /no/such/thing
((STATUS == 404)) || fail "unknown path: status $STATUS"
grep -q '^{"error":"' "$OUT" || fail "404: body is not a JSON error: $(cat "$OUT")"
serve_req DELETE /healthz
((STATUS == 405)) || fail "DELETE /healthz: status $STATUS"
# a 405 says what the path takes (RFC 9110 §15.5.6); HEAD is a GET without
# its body (§9.3.2)
serve_py <<'PY' || fail "405 Allow and HEAD"
import sys, serve_client as c
s = c.connect(sys.argv[1])
for m, p, allow in (("DELETE", "/healthz", "GET, HEAD"), ("GET", "/v1/symbolize", "POST"),
                    ("PUT", "/v1/images", "POST")):
    s.sendall(c.head_bytes(m, p))
    r = c.read_response(s)
    assert r and r[0] == 405 and r[1].get("allow") == allow, (m, p, r)
s.close()
s = c.connect(sys.argv[1])
s.sendall(c.head_bytes("HEAD", "/healthz"))
got = b""
while b"\r\n\r\n" not in got:
    got += s.recv(4096)
head, _, rest = got.partition(b"\r\n\r\n")
assert head.startswith(b"HTTP/1.1 200"), head
s.settimeout(0.5)
try:
    rest += s.recv(4096)
except OSError:
    pass
assert rest == b"", ("HEAD sent a body", rest)
# RFC 9112: Content-Length headers that differ (§6.3), an HTTP/1.1 request
# without Host (§3.2): 400, where libmicrohttpd took the first length
for raw, want in ((b"POST /v1/symbolize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   b"Content-Length: 2\r\nContent-Length: 5\r\n\r\n{}", b"Content-Length headers that differ"),
                  (b"GET /healthz HTTP/1.1\r\n\r\n", b"without a Host header")):
    s = c.connect(sys.argv[1])
    s.sendall(raw)
    r = c.read_response(s)
    assert r and r[0] == 400 and want in r[2], (raw, r)
    s.close()
s = c.connect(sys.argv[1])
s.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
r = c.read_response(s)
assert r and r[0] == 200, ("HTTP/1.0 needs no Host", r)
PY

note "3. keep-alive"
serve_py <<'PY' || fail "keep-alive"
import sys, serve_client as c
s = c.connect(sys.argv[1])
for i in range(3):
    s.sendall(c.head_bytes("GET", "/healthz"))
    r = c.read_response(s)
    assert r and r[0] == 200 and r[2] == b"ok\n", r
    # an error without a body pending keeps the connection too
    s.sendall(c.head_bytes("GET", "/no/such/thing"))
    r = c.read_response(s)
    assert r and r[0] == 404 and r[1].get("connection", "").lower() != "close", r
PY

note "4. 413 before the body"
serve_py <<'PY' || fail "413 from Content-Length"
import sys, socket, serve_client as c
for expect in ([], ["Expect: 100-continue"]):
    s = c.connect(sys.argv[1], timeout=10)
    # headers only: not one byte of the 100 MB body is ever sent
    s.sendall(c.head_bytes("GET", "/healthz", expect, body_len=100_000_000))
    r = c.read_response(s)
    assert r is not None, "no answer to an over-limit Content-Length"
    assert r[0] == 413, r
    assert b'"error"' in r[2], r
    s.close()
# a chunked body past the limit that ends: read, dropped, answered 413
s = c.connect(sys.argv[1], timeout=10)
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
          + (b"40\r\n" + b"x" * 64 + b"\r\n") * 24 + b"0\r\n\r\n")
r = c.read_response(s)
assert r and r[0] == 413, r
s.close()
# one that never ends: cut off once it is twice the limit, never answered
s = c.connect(sys.argv[1], timeout=10)
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
sent = 0
try:
    while sent < 1_000_000:
        s.sendall(b"40\r\n" + b"x" * 64 + b"\r\n")
        sent += 64
except OSError:
    pass
r = c.read_response(s)
assert r is None or r[0] == 413, r
assert sent < 1_000_000, "an endless chunked body was read to the end"
# under the limit: read and answered
r = c.request(sys.argv[1], "GET", "/healthz", b"y" * 999)
assert r and r[0] == 200, r
PY
serve_py <<'PY' || fail "headers over --max-header-bytes"
import sys, serve_client as c
r = c.request(sys.argv[1], "GET", "/healthz", headers=["X-Big: " + "a" * 40000])
assert r and r[0] == 431, "a 40 KB header: %r" % (r and r[:2],)
r = c.request(sys.argv[1], "GET", "/healthz?" + "q" * 40000)
assert r and r[0] == 414, "a 40 KB request target: %r" % (r and r[:2],)
PY
serve_alive
serve_wait_metric 'symdb_serve_requests_total\{endpoint="other",status="431"\} 1'
grep -qx 'symdb_serve_images_mapped 0' "$OUT" || fail "metrics: $(grep mapped "$OUT")"
serve_wait_log 'path=/healthz status=431 .*reason="refused by the HTTP parser"'
hwm=$(serve_hwm_kb)
note "peak RSS ${hwm} KiB (bound ${SERVE_RSS_BOUND_KB} KiB)"
((hwm < SERVE_RSS_BOUND_KB)) || fail "peak RSS ${hwm} KiB is over the bound of ${SERVE_RSS_BOUND_KB} KiB"

note "5. SIGTERM"
serve_stop TERM
((SERVE_RC == 0)) || fail "SIGTERM: exit $SERVE_RC, expected 0"
serve_wait_log 'method=GET path=/healthz status=200'

note "6. missing, unwritable or bogus database"
# Before the database was created on first sight, this start failed with
# exit 3 ("cannot open catalog: No such file or directory").
keep_db=$SERVE_DB
SERVE_DB=$SCRATCH/missing/parent/db
serve_start
serve_req GET /healthz
((STATUS == 200)) || fail "created database: /healthz status $STATUS"
[[ -d $SERVE_DB/catalog ]] || fail "created database: no $SERVE_DB/catalog"
serve_stop TERM
((SERVE_RC == 0)) || fail "created database: exit $SERVE_RC after SIGTERM"
run "$SYMDB" list --db "$SERVE_DB"
expect_ok "symdb list on the database serve created"
SERVE_DB=$keep_db
: >"$SCRATCH/regular-file"
run "$SYMDB" serve --db "$SCRATCH/regular-file" --listen 127.0.0.1:0
((RC == 3)) || fail "--db a regular file: exit $RC, expected 3"
expect_error "--db a regular file" "$SCRATCH/regular-file"
if command -v setpriv >/dev/null && (($(id -u) == 0)); then
	chmod -R a+rX "$SCRATCH"
	chmod -R a-w "$SERVE_DB"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$SYMDB" serve --db "$SERVE_DB" \
		--listen 127.0.0.1:0
	chmod -R u+w "$SERVE_DB"
	((RC == 3)) || fail "unwritable database: exit $RC, expected 3"
	expect_error "unwritable database" "not writable" "Permission denied"
else
	skip_part "unwritable database: needs root and setpriv to become another user"
fi

note "7. bad option values"
for args in "--threads 0" "--max-body 1Q" "--idle-timeout 0" "--max-concurrent x" "--bogus" "--listen"; do
	# shellcheck disable=SC2086
	run "$SYMDB" serve --db "$SERVE_DB" $args
	((RC == 2)) || fail "serve $args: exit $RC, expected 2"
	expect_error "serve $args" "$(echo "$args" | cut -d' ' -f1)"
done
