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
# A request stays counted in flight until libmicrohttpd's completion
# callback, which may run after its client already has the answer: the
# start-up /healthz or a /metrics probe can still be counted when a held
# request arrives, and that held request is then refused.  So a held
# connection that was answered (refused) is replaced, and the server's own
# count decides when three are held (/metrics itself is refused then);
# bounded: 60 s, for a server under a sanitizer on a loaded machine.
import select
import time

def hold():
    s = c.connect(addr, timeout=20)
    s.sendall(c.head_bytes("GET", "/healthz", body_len=10) + b"12345")
    return s

held = [hold() for i in range(3)]
replaced = 0
deadline = time.monotonic() + 60
while True:
    ready = select.select(held, [], [], 0)[0]
    for s in ready:
        r = c.read_response(s)
        assert r is None or r[0] == 503, "a held request answered early: %r" % (r,)
        s.close()
        held[held.index(s)] = hold()
        replaced += 1
    m = c.request(addr, "GET", "/metrics", timeout=20)
    # twice, 0.2 s apart, with no held request answered: a refusal of a held
    # request may still be on its way when the first probe is refused
    if m is not None and m[0] == 503:
        time.sleep(0.2)
        m = c.request(addr, "GET", "/metrics", timeout=20)
        if m is not None and m[0] == 503 and not select.select(held, [], [], 0)[0]:
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
# the held requests' counts go once their completion callbacks ran (above)
deadline = time.monotonic() + 60
while True:
    r = c.request(addr, "GET", "/healthz")
    if r and r[0] == 503 and time.monotonic() < deadline:
        time.sleep(0.05)
        continue
    break
assert r and r[0] == 200, "after the held requests: %r" % (r,)
print("refused %d beyond the cap; the 3 held requests answered 200 (%d replaced)"
      % (refused, replaced))
PY

serve_wait_metric 'symdb_serve_requests_total\{endpoint="other",status="503"\} ([7-9]|[1-9][0-9]+)'
serve_wait_metric 'symdb_serve_requests_in_flight 1'   # this request
serve_wait_log 'status=503 .*reason="too many requests in flight \(limit 3\)"' 6
hwm=$(serve_hwm_kb)
note "peak RSS ${hwm} KiB (bound ${SERVE_RSS_BOUND_KB} KiB)"
((hwm < SERVE_RSS_BOUND_KB)) || fail "peak RSS ${hwm} KiB is over the bound of ${SERVE_RSS_BOUND_KB} KiB"
