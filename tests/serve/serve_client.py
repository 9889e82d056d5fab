#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# serve_client.py: a raw HTTP/1.1 client for the `symdb serve` tests, on a
# bare socket so that a test can send exactly the bytes it means (hostile
# paths, lying or missing Content-Length, chunked bodies, slow or stalled
# writes) over TCP, [v6] or a unix socket.  Standard library only.
#
# As a module: connect(ADDR), request(ADDR, ...), read_response(sock).
# As a command:
#   serve_client.py ADDR METHOD PATH [--body-file F] [--header 'K: V']...
# prints "STATUS" on the first line, then the body; exit 0 when an answer
# came, 1 when the connection ended without one.
import argparse
import socket
import sys


def connect(addr, timeout=30.0):
    """ADDR: HOST:PORT, [V6]:PORT or unix:/path."""
    if addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(addr[5:])
        return s
    host, _, port = addr.rpartition(":")
    fam = socket.AF_INET
    if host.startswith("["):
        host, fam = host[1:-1], socket.AF_INET6
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect((host, int(port)))
    return s


def head_bytes(method, path, headers=(), body_len=None):
    """The request line and headers; path may be bytes (sent as is)."""
    if isinstance(path, str):
        path = path.encode()
    out = method.encode() + b" " + path + b" HTTP/1.1\r\nHost: localhost\r\n"
    for h in headers:
        out += (h.encode() if isinstance(h, str) else h) + b"\r\n"
    if body_len is not None:
        out += b"Content-Length: %d\r\n" % body_len
    return out + b"\r\n"


def read_response(s):
    """(status, {lower-case header: value}, body) or None when the
    connection ended before a status line."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        try:
            d = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            d = b""
        if not d:
            return None
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(b":")
        hdrs[k.strip().lower().decode()] = v.strip().decode("latin-1")
    if "content-length" in hdrs:
        n = int(hdrs["content-length"])
        while len(rest) < n:
            try:
                d = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                d = b""
            if not d:
                break
            rest += d
        rest = rest[:n]
    elif hdrs.get("transfer-encoding", "").lower() == "chunked":
        rest = read_chunked(s, rest)
    return status, hdrs, rest


def read_chunked(s, rest):
    body = b""
    while True:
        while b"\r\n" not in rest:
            d = s.recv(65536)
            if not d:
                return body
            rest += d
        line, _, rest = rest.partition(b"\r\n")
        n = int(line.split(b";")[0], 16)
        while len(rest) < n + 2:
            d = s.recv(65536)
            if not d:
                return body + rest
            rest += d
        body += rest[:n]
        rest = rest[n + 2:]
        if n == 0:
            return body


def request(addr, method, path, body=b"", headers=(), timeout=30.0):
    s = connect(addr, timeout)
    try:
        s.sendall(head_bytes(method, path, headers, len(body) if body or method == "POST" else None)
                  + body)
        return read_response(s)
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("method")
    ap.add_argument("path")
    ap.add_argument("--body-file")
    ap.add_argument("--header", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args()
    body = open(a.body_file, "rb").read() if a.body_file else b""
    try:
        r = request(a.addr, a.method, a.path, body, a.header, a.timeout)
    except OSError as e:
        print("connection failed: %s" % e, file=sys.stderr)
        return 1
    if r is None:
        print("no answer", file=sys.stderr)
        return 1
    sys.stdout.write("%d\n" % r[0])
    sys.stdout.flush()
    sys.stdout.buffer.write(r[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
