#!/bin/bash
# SPDX-License-Identifier: MIT
#
# deadlines.sh: slow and stalled clients (README "symdb serve", Limits).
# libmicrohttpd's own connection timeout is an inactivity timeout: a byte
# every now and then restarts it.  With --header-timeout-ms 1000,
# --body-timeout-ms 1000 and --idle-timeout 3, clients that send one byte
# every 0.25 s (each gap well inside the inactivity timeout):
#   1. a request line trickled byte by byte is cut off before it is complete;
#   2. whole headers trickled byte by byte are cut off before they end;
#   3. a body trickled byte by byte is cut off before it ends;
#   4. the second request of a kept-alive connection, trickled, is cut off;
# while other clients are answered all along.  Each cut is logged with its
# reason and counted in symdb_serve_connections_cut_total.
#   5. a client that pipelines requests and never reads the answers is
#      closed by the inactivity timeout: the open-connections gauge falls
#      back and the log says "idle timeout"; the server's peak RSS stays
#      under the bound README states.
# Without the deadlines (checked with --header-timeout-ms and
# --body-timeout-ms at 100000) steps 1-4 complete and are answered, so the
# test fails.
source "$(dirname "$0")/lib.sh"

serve_start --header-timeout-ms 1000 --body-timeout-ms 1000 --idle-timeout 3 --threads 2

serve_py <<'PY' || fail "slow clients were not cut off"
import select, socket, sys, threading, time
import serve_client as c

addr = sys.argv[1]
stop = False
probe_fail = []

def probe():
    # other clients are answered while the slow ones trickle
    while not stop:
        r = c.request(addr, "GET", "/healthz", timeout=10)
        if not r or r[0] != 200:
            probe_fail.append(r)
        time.sleep(0.2)

def trickle(s, data):
    """Send data a byte every 0.25 s; the number of bytes sent when the
    server closed the connection, or None when all of it went out."""
    for i in range(len(data)):
        try:
            s.send(data[i:i + 1])
        except OSError:
            return i
        time.sleep(0.25)
        r, _, _ = select.select([s], [], [], 0)
        if r:
            try:
                if s.recv(4096) == b"":
                    return i + 1
            except OSError:
                return i + 1
    return None

t = threading.Thread(target=probe)
t.start()
pad = b"X-Pad: " + b"a" * 40 + b"\r\n"
cases = [
    ("request line", b"", b"GET /healthz?" + b"q" * 40 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("headers", b"GET /healthz HTTP/1.1\r\n", b"Host: x\r\n" + pad + b"\r\n"),
    ("body", b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 60\r\n\r\n", b"b" * 60),
]
ok = True
for name, head, slow in cases:
    s = c.connect(addr, timeout=10)
    s.sendall(head)
    n = trickle(s, slow)
    print("%s: %s" % (name, "cut after %d of %d bytes" % (n, len(slow)) if n is not None
                      else "NOT cut: all %d bytes sent" % len(slow)))
    ok &= n is not None
    s.close()
# a kept-alive connection: one request answered, the next one trickled
s = c.connect(addr, timeout=10)
s.sendall(c.head_bytes("GET", "/healthz"))
r = c.read_response(s)
assert r and r[0] == 200, r
n = trickle(s, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + pad * 2 + b"\r\n")
print("second request on a kept-alive connection:", "cut" if n is not None else "NOT cut")
ok &= n is not None
stop = True
t.join()
assert not probe_fail, "other clients were not answered: %r" % probe_fail[:3]
sys.exit(0 if ok else 1)
PY
serve_alive

serve_wait_log 'reason="header deadline passed"' 3
(($(grep -c 'reason="header deadline passed"' "$SERVE_LOG") == 3)) ||
	fail "expected 3 header-deadline lines in the log: $(grep deadline "$SERVE_LOG")"
serve_wait_log 'method=- path=- status=- .*reason="header deadline passed"'
serve_wait_log 'method=- path=/healthz status=- .*reason="header deadline passed"'
serve_wait_log 'method=GET path=/healthz status=- .*reason="body deadline passed"'
serve_wait_metric 'symdb_serve_connections_cut_total\{reason="header_timeout"\} 3'
serve_wait_metric 'symdb_serve_connections_cut_total\{reason="body_timeout"\} 1'

note "5. a client that never reads"
serve_py <<'PY' || fail "never-reading client"
import socket, sys, time
import serve_client as c
s = c.connect(sys.argv[1])
s.setblocking(False)
req = c.head_bytes("GET", "/metrics")
sent, t0 = 0, time.monotonic()
# pipelined requests until neither side's buffers take more
while time.monotonic() - t0 < 2:
    try:
        sent += s.send(req)
    except BlockingIOError:
        time.sleep(0.05)
print("pipelined %d requests without reading an answer" % (sent // len(req)))
# keep the socket open (unread) until the server gives up on it
for _ in range(300):
    r = c.request(sys.argv[1], "GET", "/metrics")
    open_conns = [l for l in r[2].decode().splitlines() if l.startswith("symdb_serve_connections ")]
    if open_conns == ["symdb_serve_connections 1"]:
        print("the server closed the never-reading connection")
        sys.exit(0)
    time.sleep(0.1)
print("still open:", open_conns)
sys.exit(1)
PY
serve_wait_log 'reason="idle timeout"'
serve_alive
hwm=$(serve_hwm_kb)
note "peak RSS ${hwm} KiB (bound ${SERVE_RSS_BOUND_KB} KiB)"
((hwm < SERVE_RSS_BOUND_KB)) || fail "peak RSS ${hwm} KiB is over the bound of ${SERVE_RSS_BOUND_KB} KiB"
