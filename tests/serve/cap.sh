#!/bin/bash
# SPDX-License-Identifier: MIT
#
# cap.sh: more concurrent clients than --max-concurrent (README "symdb
# serve", Limits).  With --max-concurrent 3, three requests are held in
# flight (headers sent, half of a Content-Length body sent); then
#   1. six more clients each get 503 with a Retry-After header and a JSON
#      error, at once (they are not queued behind the held ones);
#   2. the three held requests, once their bodies are complete, are answered
#      200: the refusals did not disturb them;
#   3. with the held ones done, a new request is answered 200 again (the
#      count of requests in flight went back down);
#   4. /metrics counts the 503s under endpoint="other" (requests refused
#      before routing) and shows 0 requests in flight;
#   5. the server's peak RSS stays under the stated bound.
# Before the cap existed, step 1 got 200s.
source "$(dirname "$0")/lib.sh"

serve_start --max-concurrent 3 --threads 2

serve_py <<'PY' || fail "the cap"
import sys
import serve_client as c
addr = sys.argv[1]
held = []
for i in range(3):
    s = c.connect(addr, timeout=20)
    s.sendall(c.head_bytes("GET", "/healthz", body_len=10) + b"12345")
    held.append(s)
# the held requests are in flight once their headers are parsed: wait for
# the server's own count rather than for a time (bounded: 60 s, for a server
# under a sanitizer on a loaded machine; 10 s was once not enough under TSan)
import time
deadline = time.monotonic() + 60
while True:
    m = c.request(addr, "GET", "/metrics", timeout=20)
    if m is not None and m[0] == 503:
        break
    assert time.monotonic() < deadline, \
        "the 3 held requests were never counted in flight: /metrics %r" % (m and m[0],)
    time.sleep(0.05)
refused = 0
for i in range(6):
    r = c.request(addr, "GET", "/healthz", timeout=20)
    assert r is not None, "no answer beyond the cap"
    assert r[0] == 503, "beyond the cap: %r" % (r,)
    assert r[1].get("retry-after", "").isdigit(), "no Retry-After: %r" % (r[1],)
    assert b'"error"' in r[2], r
    refused += 1
for s in held:
    s.sendall(b"67890")
for s in held:
    r = c.read_response(s)
    assert r and r[0] == 200 and r[2] == b"ok\n", "a held request: %r" % (r,)
    s.close()
r = c.request(addr, "GET", "/healthz")
assert r and r[0] == 200, "after the held requests: %r" % (r,)
print("refused %d beyond the cap; the 3 held requests answered 200" % refused)
PY

serve_wait_metric 'symdb_serve_requests_total\{endpoint="other",status="503"\} ([7-9]|[1-9][0-9]+)'
serve_wait_metric 'symdb_serve_requests_in_flight 1'   # this request
serve_wait_log 'status=503 .*reason="too many requests in flight \(limit 3\)"' 6
hwm=$(serve_hwm_kb)
note "peak RSS ${hwm} KiB (bound ${SERVE_RSS_BOUND_KB} KiB)"
((hwm < SERVE_RSS_BOUND_KB)) || fail "peak RSS ${hwm} KiB is over the bound of ${SERVE_RSS_BOUND_KB} KiB"
