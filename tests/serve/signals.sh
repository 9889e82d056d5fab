#!/bin/bash
# SPDX-License-Identifier: MIT
#
# signals.sh: SIGTERM with a request in flight, and SIGHUP (README "symdb
# serve", Signals).
#   1. SIGTERM while one request is in flight (headers and half its body
#      sent) and another connection sits idle after a kept-alive answer:
#      new connections are refused, a new request on the idle connection
#      gets 503 "shutting down" with Connection: close, the request in
#      flight is answered 200 once its body is complete, and the server
#      exits 0;
#   2. SIGTERM while a request stays stuck in flight: the server waits at
#      most --deadline-ms, then exits 0 all the same;
#   3. SIGHUP after the log file was renamed (log rotation): the next line
#      goes to a new file at the --log path, the old file keeps the old
#      lines, and the server goes on serving.
# Before graceful shutdown, step 1's request in flight got no answer.
source "$(dirname "$0")/lib.sh"

note "1. SIGTERM with a request in flight"
serve_start --deadline-ms 20000
serve_py "$SERVE_PID" <<'PY' || fail "graceful stop"
import errno, os, signal, socket, sys, time
import serve_client as c
addr, pid = sys.argv[1], int(sys.argv[2])
idle = c.connect(addr, timeout=20)
idle.sendall(c.head_bytes("GET", "/healthz"))
assert c.read_response(idle)[0] == 200
busy = c.connect(addr, timeout=20)
busy.sendall(c.head_bytes("GET", "/healthz", body_len=10) + b"12345")
# in flight once the server counts it (a request of ours is counted too)
for _ in range(200):
    m = c.request(addr, "GET", "/metrics")[2].decode()
    if "symdb_serve_requests_in_flight 2" in m:
        break
    time.sleep(0.05)
else:
    sys.exit("the held request never showed as in flight")
os.kill(pid, signal.SIGTERM)
# new connections: refused once the listening socket is closed
for _ in range(200):
    try:
        s = c.connect(addr, timeout=5)
        s.close()
        time.sleep(0.05)
    except OSError as e:
        print("new connection after SIGTERM:", os.strerror(e.errno) if e.errno else e)
        break
else:
    sys.exit("still accepting connections 10 s after SIGTERM")
idle.sendall(c.head_bytes("GET", "/healthz"))
r = c.read_response(idle)
assert r and r[0] == 503 and b"shutting down" in r[2], "idle connection: %r" % (r,)
assert r[1].get("connection", "").lower() == "close", r[1]
busy.sendall(b"67890")
r = c.read_response(busy)
assert r and r[0] == 200 and r[2] == b"ok\n", "the request in flight: %r" % (r,)
print("in flight: answered 200 after SIGTERM")
PY
serve_stop wait
((SERVE_RC == 0)) || fail "exit $SERVE_RC after SIGTERM, expected 0"

note "2. SIGTERM with a request stuck in flight"
serve_start --deadline-ms 1000
serve_py "$SERVE_PID" <<'PY' || fail "stuck request"
import os, signal, sys, time
import serve_client as c
addr, pid = sys.argv[1], int(sys.argv[2])
stuck = c.connect(addr, timeout=30)
stuck.sendall(c.head_bytes("GET", "/healthz", body_len=10) + b"1")
for _ in range(200):
    if "symdb_serve_requests_in_flight 2" in c.request(addr, "GET", "/metrics")[2].decode():
        break
    time.sleep(0.05)
os.kill(pid, signal.SIGTERM)
r = c.read_response(stuck)   # the connection ends when the server stops
assert r is None, r
PY
serve_stop wait
((SERVE_RC == 0)) || fail "exit $SERVE_RC after SIGTERM with a stuck request, expected 0"

note "3. SIGHUP reopens the log"
serve_start
serve_req GET /healthz?before-rotation
serve_wait_log 'path=/healthz\?before-rotation status=200'
mv "$SERVE_LOG" "$SERVE_LOG.1"
kill -HUP "$SERVE_PID"
for ((i = 0; i < 100; i++)); do
	serve_req GET /healthz?after-rotation
	[[ -s $SERVE_LOG ]] && break
	sleep 0.05
done
serve_wait_log 'path=/healthz\?after-rotation status=200'
grep -q 'path=/healthz?before-rotation' "$SERVE_LOG.1" || fail "the old log lost its lines"
serve_alive
serve_stop
((SERVE_RC == 0)) || fail "exit $SERVE_RC, expected 0"
