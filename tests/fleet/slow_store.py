#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""slow_store.py TREE LOG PORTFILE: an upstream index store for the serve
fetch tests that serves TREE/symdb/v1/XX/HEX.symdb over HTTP on a free
loopback port (written to PORTFILE), with four kinds of misbehaviour chosen
by files in TREE:
  TREE/delay.HEX  GET for HEX waits the seconds the file says, then answers
  TREE/hang.HEX   GET for HEX is accepted and never answered
  TREE/status.HEX GET for HEX answers the HTTP status the file says
  TREE/endless.HEX GET for HEX answers 200 and a body that never ends
Every request is appended to LOG ("GET PATH") when it arrives.  Standard
library only; the test kills it at exit."""
import http.server
import os
import sys
import time

TREE, LOG, PORTFILE = sys.argv[1:4]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        with open(LOG, "a") as f:
            f.write("GET %s\n" % self.path)
        hexid = os.path.basename(self.path).split(".")[0]
        if os.path.exists(os.path.join(TREE, "hang." + hexid)):
            time.sleep(3600)
            return
        delay = os.path.join(TREE, "delay." + hexid)
        if os.path.exists(delay):
            with open(delay) as f:
                time.sleep(float(f.read()))
        if os.path.exists(os.path.join(TREE, "endless." + hexid)):
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            chunk = b"\0" * 65536
            try:
                while True:
                    self.wfile.write(chunk)
            except OSError:
                return
        status = os.path.join(TREE, "status." + hexid)
        if os.path.exists(status):
            with open(status) as f:
                self.send_error(int(f.read()))
            return
        parts = self.path.strip("/").split("/")
        path = os.path.join(TREE, *parts)
        if ".." in parts or not os.path.isfile(path):
            self.send_error(404)
            return
        with open(path, "rb") as f:
            data = f.read()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
