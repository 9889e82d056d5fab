#!/bin/bash
# SPDX-License-Identifier: MIT
#
# log.sh: request data in the access log and in /metrics (README "symdb
# serve", The access log).  Requests whose targets hold hostile bytes (ESC
# sequences, BEL, DEL, C0 controls, bytes that are not UTF-8, a valid
# multi-byte character, '"', '\', percent-encoded NUL/LF/ESC, an over-long
# path) and a hostile method:
#   1. every request the server answered has exactly one log line, and it
#      names the target escaped by the documented rule (decoding it gives
#      back the bytes sent, cut at 2048 with "...");
#   2. every byte of the log is printable ASCII or a newline;
#   3. /metrics: every line is a comment or a sample whose labels are all
#      from the fixed sets (endpoints, statuses, le bounds, cut reasons,
#      stack frame sources):
#      nothing of the requests shows up there;
#   4. the server's peak RSS stays under the stated bound.
source "$(dirname "$0")/lib.sh"

serve_start

serve_py "$SERVE_LOG" <<'PY' || fail "hostile bytes"
import re, sys
import serve_client as c
addr, log = sys.argv[1], sys.argv[2]

def esc(b, space_ok=False):
    out = []
    for x in b:
        if x == 0x5c:
            out.append("\\\\")
        elif x < 0x20 or x >= 0x7f or x == 0x22 or (x == 0x20 and not space_ok):
            out.append("\\x%02x" % x)
        else:
            out.append(chr(x))
    return "".join(out)

targets = [
    b"/healthz?\x1b[2J\x1b]8;;http://evil\x07link\x1b]8;;\x07",
    b"/v1/\x01\x02\x7f\x80\x9b\xff\xc3\xa9",
    b'/a"b\\c',
    b"/%00%0a%1b%2e%2e%2f",
    b"/long/" + b"\xee" * 3000,
]
answered = []
for t in targets:
    r = c.request(addr, "GET", t)
    if r is None:
        print("no answer for %r (refused by the HTTP parser)" % t[:40])
        continue
    answered.append(t)
    print("%d for %r" % (r[0], t[:40]))
r = c.request(addr, "G\x1bT", b"/healthz")
print("hostile method:", r[0] if r else "no answer")
assert len(answered) >= 4, "the server refused most hostile targets: %d answered" % len(answered)

# the log line of every answered target, found by its escaped form; and
# decoding that form gives the bytes back
def unesc(s):
    out, i = bytearray(), 0
    while i < len(s):
        if s.startswith("\\x", i):
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        elif s.startswith("\\\\", i):
            out.append(0x5c)
            i += 2
        else:
            out.append(ord(s[i]))
            i += 1
    return bytes(out)

import time
for _ in range(200):   # a line is written as its request ends: maybe just after
    lines = open(log, "rb").read().split(b"\n")
    if all(any((" path=" + esc(t[:2048])).encode() in l for l in lines) for t in answered):
        break
    time.sleep(0.05)
for t in answered:
    want = esc(t[:2048]) + ("..." if len(t) > 2048 else "")
    hits = [l for l in lines if (" path=" + want + " ").encode() in l]
    assert len(hits) == 1, "%d log lines for %r (want %r)" % (len(hits), t[:40], want[:80])
    field = re.search(rb" path=(\S*) ", hits[0]).group(1).decode()
    assert unesc(field[:-3] if len(t) > 2048 else field) == t[:2048], field[:80]
data = open(log, "rb").read()
bad = [b for b in set(data) if not (0x20 <= b <= 0x7e or b == 0x0a)]
assert not bad, "raw bytes in the log: %r" % bad
print("log: %d lines, printable ASCII only" % data.count(b"\n"))

# /metrics: comments, or samples with labels from the fixed sets only
ok = {
    "endpoint": {"symbolize_json", "symbolize_binary", "images_upload", "images_get",
                 "images_index", "healthz", "metrics", "other"},
    "reason": {"header_timeout", "body_timeout"},
    "source": {"resolved", "cache", "earlier_stack", "deadline",        # stack frames
               "none", "upstream", "debuginfod", "negative_cache"},  # fetches
    "result": {"ok", "not_found", "timeout", "damaged", "error"},
    "mode": {"user", "system"},
}
r = c.request(addr, "GET", "/metrics")
assert r[0] == 200
sample = re.compile(r'^symdb_serve_[a-z_]+(\{[^}]*\})? [0-9.]+$')
for l in r[2].decode("ascii").splitlines():
    if l.startswith("# HELP ") or l.startswith("# TYPE "):
        continue
    assert sample.match(l), "metrics line: %r" % l
    for k, v in re.findall(r'(\w+)="([^"]*)"', l):
        if k == "status":
            assert re.fullmatch(r"[1-5][0-9][0-9]|other|none", v), l
        elif k == "le":
            assert re.fullmatch(r"[0-9.]+|\+Inf", v), l
        else:
            assert k in ok and v in ok[k], "label %s=%r: %s" % (k, v, l)
cpu = {m: float(v) for m, v in re.findall(r'^symdb_serve_cpu_seconds_total\{mode="(\w+)"\} ([0-9.]+)$',
                                            r[2].decode("ascii"), re.M)}
assert set(cpu) == {"user", "system"} and cpu["user"] + cpu["system"] > 0, "cpu: %r" % cpu
print("metrics: fixed labels only")
PY
serve_alive
hwm=$(serve_hwm_kb)
note "peak RSS ${hwm} KiB (bound ${SERVE_RSS_BOUND_KB} KiB)"
((hwm < SERVE_RSS_BOUND_KB)) || fail "peak RSS ${hwm} KiB is over the bound of ${SERVE_RSS_BOUND_KB} KiB"
