#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# images_test.py CASE: POST /v1/images and GET /v1/images/{id}[/index] of a
# real `symdb serve` (on a unix socket in the test's scratch directory, so
# no port is shared with other tests), driven over HTTP with the standard
# library.  Facts are checked against llvm-readelf-14 (build-ids) and
# llvm-symbolizer-14 (answers from the uploaded and the imported index).
#
#   upload       upload a DWARF program; the answer's fields; GET the entry;
#                query the database like llvm-symbolizer-14; the same upload
#                again is "already_indexed"
#   index        GET .../index: import the file into a second database with
#                `symdb import` and query it (== llvm-symbolizer-14); a
#                compacted image is sent decompressed, the same bytes; GET
#                /symdb/v1/XX/ID.symdb (the store layout) sends the same
#   concurrent   8 clients upload the same file at once: one image, one
#                "indexed" and seven "already_indexed" answers
#   cutoff       a client that disconnects midway (Content-Length and
#                chunked): nothing published, no temp file, `symdb verify`
#                clean, the server still answers
#   hostile      a truncated ELF, a decompression bomb, a crashing indexer,
#                a text file, an empty body: 422 with the indexer's reason,
#                nothing published, no temp file
#   oversize     Content-Length over --max-upload: 413 before the body is
#                sent; a chunked body that passes it: 413; nothing kept
#   macho        a universal Mach-O file: one image per slice (arch, LC_UUID
#                as llvm-dwarfdump-14 --uuid prints them); a dSYM DWARF file
#   busy         one indexer slot, held by a hanging indexer: another upload
#                and the same upload get 503 + Retry-After at the deadline
#   slow         two uploads whose indexers hang hold both slots and, with
#                --threads 2, both pool threads before: /healthz and
#                /v1/symbolize are answered before either upload ends
#   bad_ids      ../../x, %2e%2e%2f, odd length, upper case -> 400 (raw
#                paths, as sent); unknown -> 404; a bad Content-Type -> 415;
#                the same for /symdb/v1/XX/ID.symdb, and XX not the id's
#                first two digits -> 404
#
# Environment (CTest): SYMDB, SCRATCH, SYMDB_INDEXER_TEST; fixture sources
# are compiled here with gcc.  A missing tool is a skip (exit 77).
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "fixtures", "dw_inline.c")
SYMDB = os.environ.get("SYMDB", "")
SCRATCH = os.environ.get("SCRATCH", "")
FAILS = []


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


class UnixConn(http.client.HTTPConnection):
    def __init__(self, path, timeout=60):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


class Server:
    """symdb serve on a unix socket; killed at exit whatever happens."""

    def __init__(self, db, *opts):
        self.db = db  # created by symdb serve when missing
        self.sock = os.path.join(SCRATCH, "serve-%d.sock" % len(os.listdir(SCRATCH)))
        self.log = open(os.path.join(SCRATCH, "serve.log"), "ab")
        self.p = subprocess.Popen([SYMDB, "serve", "--db", db, "--listen", "unix:" + self.sock,
                                   "--log", "-", *opts], stdout=self.log, stderr=self.log)
        for _ in range(300):
            if self.p.poll() is not None:
                raise SystemExit("FAIL: symdb serve exited with %d (see serve.log)" % self.p.returncode)
            try:
                st, _, _ = self.request("GET", "/healthz", timeout=2)
                if st == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise SystemExit("FAIL: symdb serve did not answer /healthz in 30 s")

    def request(self, method, path, body=None, headers=None, timeout=120):
        c = UnixConn(self.sock, timeout)
        try:
            c.putrequest(method, path, skip_accept_encoding=True)
            for k, v in (headers or {}).items():
                c.putheader(k, v)
            if body is not None and "Transfer-Encoding" not in (headers or {}):
                c.putheader("Content-Length", str(len(body)))
            c.endheaders(body)
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()

    def upload(self, data, ctype="application/octet-stream"):
        st, hdr, body = self.request("POST", "/v1/images", data, {"Content-Type": ctype})
        try:
            js = json.loads(body)
        except ValueError:
            js = {"raw": body.decode("utf-8", "replace")}
        return st, hdr, js

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def run(*argv, **kw):
    return subprocess.run(list(argv), capture_output=True, text=True, **kw)


def build_id(path):
    out = run("llvm-readelf-14", "-n", path).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    return None


def compile_fixture(name, *flags, src=SRC):
    out = os.path.join(SCRATCH, name)
    r = run("gcc", "-O2", "-g", *flags, src, "-o", out)
    if r.returncode:
        raise SystemExit("FAIL: gcc: " + r.stderr)
    return out


def addresses(binary):
    """Function starts and a few bytes in, from llvm-nm-14 (not from symdb)."""
    out = run("llvm-nm-14", "--defined-only", binary).stdout
    addrs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tT":
            a = int(f[0], 16)
            addrs += ["0x%x" % a, "0x%x" % (a + 4)]
    return addrs[:40]


def oracle(binary, addrs):
    return run("llvm-symbolizer-14", "--obj", binary, *addrs).stdout


def query(db, uuid, addrs):
    r = run(SYMDB, "--db", db, "query", "--no-build", "--uuid", uuid, *addrs)
    return r.stdout


def db_state(db):
    """symdb list plus the sha256 of every file under DB/images."""
    lst = run(SYMDB, "--db", db, "list").stdout
    files = {}
    root = os.path.join(db, "images")
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                files[os.path.relpath(p, root)] = hashlib.sha256(f.read()).hexdigest()
    return lst, files


def tmp_uploads(db):
    t = os.path.join(db, "tmp")
    return sorted(os.listdir(t)) if os.path.isdir(t) else []


def wait_tmp_empty(db, secs=15):
    """The server removes an aborted upload when libmicrohttpd reports the
    connection gone: poll for a bounded time, never assert a time."""
    end = time.monotonic() + secs
    while tmp_uploads(db) and time.monotonic() < end:
        time.sleep(0.1)
    return tmp_uploads(db)


def verify_clean(db, what):
    r = run(SYMDB, "--db", db, "verify", "--grace", "0")
    check(r.returncode == 0, "%s: symdb verify exit %d %s" % (what, r.returncode, r.stdout.strip()[:300]))


# ---- cases ---------------------------------------------------------------

def other_program(name):
    """A second program (another build-id) to have in the database."""
    c = os.path.join(SCRATCH, name + ".c")
    with open(c, "w") as f:
        f.write("int %s_main(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return %s_main(c); }\n"
                % (name, name))
    return compile_fixture(name, src=c)


def case_upload():
    prog = compile_fixture("prog")
    bid = build_id(prog)
    db = os.path.join(SCRATCH, "db")
    s = Server(db)
    try:
        with open(prog, "rb") as f:
            data = f.read()
        st, _, js = s.upload(data)
        check(st == 201, "first upload: 201 (got %d %s)" % (st, js))
        im = js.get("images", [{}])[0]
        check(js.get("status") == "indexed" and im.get("status") == "indexed", "status indexed")
        check(im.get("build_id") == bid, "build_id %s == llvm-readelf's %s" % (im.get("build_id"), bid))
        check(im.get("id_kind") == "gnu_build_id", "id_kind gnu_build_id")
        check(im.get("format") == "elf" and im.get("kind") == "binary", "format elf, kind binary")
        check(im.get("dwarf") is True and im.get("partial") is False, "dwarf true, partial false")
        nsyms = len([l for l in run("llvm-nm-14", "--defined-only", prog).stdout.splitlines()])
        check(0 < im.get("symbols", 0) <= nsyms, "symbols %s in 1..%d (llvm-nm)" % (im.get("symbols"), nsyms))
        check(im.get("line_rows", 0) > 0 and im.get("inline_nodes", 0) > 0, "line rows and inline nodes")
        check(im.get("name") == "upload-" + bid, "name upload-BUILDID (never the client's)")
        addrs = addresses(prog)
        check(query(db, bid, addrs) == oracle(prog, addrs),
              "query of the uploaded image == llvm-symbolizer-14 (%d addresses)" % len(addrs))
        st, _, js = s.upload(data)
        check(st == 200 and js.get("status") == "already_indexed", "second upload: 200 already_indexed")
        st, hdr, body = s.request("GET", "/v1/images/" + bid)
        e = json.loads(body) if st == 200 else {}
        check(st == 200 and e.get("build_id") == bid and e.get("dwarf") is True and
              e.get("cold") is False and e.get("index") == "/v1/images/%s/index" % bid,
              "GET entry: %d %s" % (st, e))
        check(hdr.get("Content-Type", "").startswith("application/json"), "entry is JSON")
        # The upload's file was a temporary one, removed when the request
        # ended: no source path is recorded for it (SPEC §12.2 `paths`).
        # Before SYMDB_BUILD_NO_SOURCE_PATH, `symdb list` showed DB/tmp/upload-ID.
        check(db not in body.decode() and "/tmp/" not in body.decode(),
              "GET entry names no path of the server's (%s)" % body.decode().strip())
        lj = run(SYMDB, "--db", db, "list", "--json")
        rows = json.loads(lj.stdout).get("images", []) if lj.returncode == 0 else []
        mine = [r for r in rows if bid in json.dumps(r)]
        check(lj.returncode == 0 and len(mine) == 1 and not mine[0].get("path") and
              db not in json.dumps(mine[0]), "symdb list --json: no source path for the upload (%s)" % mine)
        lt = run(SYMDB, "--db", db, "list").stdout
        check(os.path.join(db, "tmp") not in lt, "symdb list: no DB/tmp path (%s)" % lt.strip())
        # a stripped copy (same build-id, less in it) is skipped
        stripped = os.path.join(SCRATCH, "prog.stripped")
        run("strip", "-g", prog, "-o", stripped)
        with open(stripped, "rb") as f:
            st, _, js = s.upload(f.read())
        check(st == 200 and js["images"][0]["status"] == "already_indexed" and
              js["images"][0]["dwarf"] is True, "strip -g copy: already_indexed, index keeps DWARF")
        # its separate debug file: a different file for an indexed build-id,
        # neither richer (it has no .dynsym): the builder's 409 conflict
        dbg = os.path.join(SCRATCH, "prog.debug")
        run("objcopy", "--only-keep-debug", prog, dbg)
        with open(dbg, "rb") as f:
            st, _, js = s.upload(f.read())
        check(st == 409 and "already indexed from different contents" in js.get("error", ""),
              "its .debug file afterwards: 409 conflict (%d %s)" % (st, js))
        # another program: its `strip -g` binary first (no DWARF), then its
        # .debug file, recognised as one, replaces that index
        other = other_program("other")
        run("objcopy", "--only-keep-debug", other, other + ".debug")
        run("strip", "-g", other, "-o", other + ".nodwarf")
        with open(other + ".nodwarf", "rb") as f:
            st, _, js = s.upload(f.read())
        im = js.get("images", [{}])[0]
        check(st == 201 and im.get("kind") == "binary" and im.get("dwarf") is False and
              im.get("build_id") == build_id(other), "strip -g binary: 201, no DWARF (%d %s)" % (st, js))
        oaddrs = addresses(other)
        want = oracle(other, oaddrs)

        def served():
            """The server's answers for other's addresses, as llvm-symbolizer's
            function and file:line lines, or the module's status."""
            body = json.dumps({"modules": [{"build_id": build_id(other), "addresses": oaddrs}]})
            st, _, b = s.request("POST", "/v1/symbolize", body.encode(),
                                 {"Content-Type": "application/json"})
            m = json.loads(b)["modules"][0] if st == 200 else {}
            if m.get("status") != "ok":
                return m.get("status", "http %d" % st)
            out = ""
            for r in m["results"]:
                if not r["frames"]:
                    out += "??\n??:0:0\n" # (llvm's empty answer)
                for fr in r["frames"]:
                    out += "%s\n%s:%d:%d\n" % (fr["function"], fr["file"] or "??", fr["line"],
                                               fr["column"])
                out += "\n"
            return out
        check(served() != want, "before its .debug file the server cannot give llvm's lines")
        with open(other + ".debug", "rb") as f:
            st, _, js = s.upload(f.read())
        im = js.get("images", [{}])[0]
        check(st == 201 and im.get("kind") == "debug_file" and im.get("dwarf") is True and
              im.get("replaced") == "index_without_dwarf",
              "its .debug file: 201, kind debug_file, replaced index_without_dwarf (%d %s)" % (st, js))
        # The server answers from the index that replaced the one it had
        # open, as llvm-symbolizer-14 does from the full binary; and once
        # the image is removed from the catalog, it is unknown.
        for k in range(3):
            got = served()
            diff = [(a, b) for a, b in zip(got.split("\n"), want.split("\n")) if a != b][:2]
            check(got == want, "after the replacement, request %d == llvm-symbolizer-14 %s" %
                  (k, diff or "(%d vs %d lines)" % (got.count("\n"), want.count("\n"))))
        rm = run(SYMDB, "--db", db, "rm", build_id(other))
        check(rm.returncode == 0, "symdb rm: %s" % rm.stderr)
        check(served() == "unknown_image", "after symdb rm: unknown_image")
        # Path modules keep the index their file chose: two programs
        # without a build-id whose loaded bytes are equal (lines moved),
        # asked in one request, each answered as llvm-symbolizer-14 answers
        # from that file (SPEC §5.2), twice (the worker's context kept).
        with open(SRC) as f:
            text = f.read()
        progs = []
        for k, pad in enumerate(("", "/* moved */\n/* twice */\n")):
            src = os.path.join(SCRATCH, "nobid%d.c" % k)
            with open(src, "w") as f:
                f.write(pad + text)
            progs.append(compile_fixture("nobid%d" % k, "-Wl,--build-id=none", src=src))
        paddrs = addresses(progs[0])
        check(paddrs == addresses(progs[1]), "the two builds share their addresses")
        want = [oracle(p, paddrs) for p in progs]
        check(want[0] != want[1], "llvm-symbolizer-14 tells the two builds apart")
        for k in range(2):
            body = json.dumps({"modules": [{"path": p, "addresses": paddrs} for p in progs]})
            st, _, b = s.request("POST", "/v1/symbolize", body.encode(),
                                 {"Content-Type": "application/json"})
            mods = json.loads(b)["modules"] if st == 200 else []
            for j, m in enumerate(mods):
                out = ""
                for r in m.get("results", []):
                    if not r["frames"]:
                        out += "??\n??:0:0\n"
                    for fr in r["frames"]:
                        out += "%s\n%s:%d:%d\n" % (fr["function"], fr["file"] or "??",
                                                   fr["line"], fr["column"])
                    out += "\n"
                check(out == want[j], "request %d, path %s == llvm-symbolizer-14" % (k, progs[j]))
        check(tmp_uploads(db) == [], "no temp file left")
    finally:
        s.stop()


def case_index():
    prog = compile_fixture("prog")
    bid = build_id(prog)
    db = os.path.join(SCRATCH, "db")
    s = Server(db)
    try:
        with open(prog, "rb") as f:
            st, _, _ = s.upload(f.read())
        check(st == 201, "upload: 201")
        st, hdr, body = s.request("GET", "/v1/images/%s/index" % bid)
        check(st == 200 and hdr.get("Content-Type") == "application/octet-stream",
              "GET index: 200 application/octet-stream (%d %s)" % (st, hdr.get("Content-Type")))
        check(body[:8] == b"\x89SYMDB\r\n", "the body is an index file (SPEC magic)")
        # the upstream store layout (SPEC §12.9) answers the same bytes
        store = "/symdb/v1/%s/%s.symdb" % (bid[:2], bid)
        st, hdr, sbody = s.request("GET", store)
        check(st == 200 and sbody == body and hdr.get("Content-Type") == "application/octet-stream",
              "GET %s: 200, the same bytes (%d, %d bytes)" % (store, st, len(sbody)))
        dl = os.path.join(SCRATCH, "dl.symdb")
        with open(dl, "wb") as f:
            f.write(body)
        db2 = os.path.join(SCRATCH, "db2")
        r = run(SYMDB, "--db", db2, "import", dl)
        check(r.returncode == 0 and r.stdout.strip() == "imported " + bid,
              "symdb import of the download: %d %s %s" % (r.returncode, r.stdout.strip(), r.stderr.strip()))
        addrs = addresses(prog)
        check(query(db2, bid, addrs) == oracle(prog, addrs),
              "the imported index answers like llvm-symbolizer-14 (%d addresses)" % len(addrs))
        # a damaged download is refused by import, nothing published
        bad = bytearray(body)
        bad[len(bad) // 2] ^= 0xff
        with open(dl + ".bad", "wb") as f:
            f.write(bytes(bad))
        db3 = os.path.join(SCRATCH, "db3")
        r = run(SYMDB, "--db", db3, "import", dl + ".bad")
        check(r.returncode == 4 and "nothing imported" in r.stderr, "a flipped byte: import refuses (exit 4)")
        # compacted: sent decompressed, byte for byte what was sent before
        env = dict(os.environ, SYMDB_NOW=str(int(time.time()) + 400 * 86400))
        r = run(SYMDB, "--db", db, "compact", "--unused-for", "1d", env=env)
        cold = [n for n in os.listdir(os.path.join(db, "images", bid[:2]))]
        check(r.returncode == 0 and any(n.endswith(".lz4") for n in cold), "image compacted: %s" % cold)
        st, _, body2 = s.request("GET", "/v1/images/" + bid)
        check(st == 200 and json.loads(body2).get("cold") is True, "entry says cold")
        st, _, body2 = s.request("GET", "/v1/images/%s/index" % bid)
        check(st == 200 and body2 == body, "cold image: the same index bytes")
        st, _, body2 = s.request("GET", store)
        check(st == 200 and body2 == body, "cold image: the same bytes from the store path")
        st, _, _ = s.request("GET", "/v1/images/%s/index" % ("ab" * 20))
        check(st == 404, "unknown id: 404")
        st, _, _ = s.request("GET", "/symdb/v1/ab/%s.symdb" % ("ab" * 20))
        check(st == 404, "unknown id, store path: 404")
        # the index file replaced by a symbolic link is not followed
        path = os.path.join(db, "images", bid[:2], bid + ".symdb")
        os.rename(path, path + ".moved")
        os.symlink(path + ".moved", path)
        st, _, body3 = s.request("GET", "/v1/images/%s/index" % bid)
        check(st == 500 and b"symbolic link" in body3, "a symbolic link: not followed (%d %s)" % (st, body3[:100]))
    finally:
        s.stop()


def case_concurrent():
    prog = compile_fixture("prog")
    bid = build_id(prog)
    db = os.path.join(SCRATCH, "db")
    s = Server(db, "--max-indexers", "2", "--threads", "8", "--max-concurrent", "64")
    with open(prog, "rb") as f:
        data = f.read()
    results = [None] * 8
    go = threading.Barrier(8)

    def client(i):
        go.wait()
        try:
            results[i] = s.upload(data)
        except Exception as e:  # noqa: BLE001 - reported as a failure
            results[i] = (0, {}, {"error": repr(e)})

    try:
        ts = [threading.Thread(target=client, args=(i,)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(300)
        st = [r[0] for r in results]
        status = sorted(r[2].get("status", "?") for r in results)
        check(all(x in (200, 201) for x in st), "8 uploads all succeed: %s" % st)
        check(status == ["already_indexed"] * 7 + ["indexed"], "one indexed, seven already_indexed: %s" % status)
        check(sorted(st) == [200] * 7 + [201], "one 201, seven 200")
        check(all(r[2].get("images", [{}])[0].get("build_id") == bid for r in results), "every answer names the build-id")
        lst = run(SYMDB, "--db", db, "list").stdout.splitlines()
        check(len(lst) == 1 and lst[0].startswith(bid), "one image in the catalog: %s" % lst)
        check(len(os.listdir(os.path.join(db, "images", bid[:2]))) == 1, "one index file")
        check(tmp_uploads(db) == [], "no temp file left")
        verify_clean(db, "after 8 uploads")
    finally:
        s.stop()


def raw_send(s, head, body_part, chunked=False):
    """Send the headers and part of a body, then disconnect."""
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(30)
    c.connect(s.sock)
    c.sendall(head)
    if chunked:
        c.sendall(b"%x\r\n" % len(body_part) + body_part + b"\r\n")
    else:
        c.sendall(body_part)
    time.sleep(0.3)
    c.close()


def raw_exchange(s, head, chunks=()):
    """Send the headers, then the chunks as long as the server reads them;
    return what the server answered (it may answer and close early)."""
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(30)
    c.connect(s.sock)
    got = b""
    try:
        c.sendall(head)
        for part in chunks:
            c.sendall(part)
    except OSError:
        pass
    try:
        while True:
            b = c.recv(4096)
            if not b:
                break
            got += b
    except OSError:
        pass
    c.close()
    return got


def case_cutoff():
    prog = compile_fixture("prog")
    other = other_program("other")
    db = os.path.join(SCRATCH, "db")
    s = Server(db)
    try:
        with open(other, "rb") as f:
            st, _, _ = s.upload(f.read())
        check(st == 201, "an image indexed before")
        before = db_state(db)
        with open(prog, "rb") as f:
            data = f.read()
        head = (b"POST /v1/images HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                b"Content-Length: %d\r\n\r\n" % len(data))
        raw_send(s, head, data[: len(data) // 2])
        left = wait_tmp_empty(db)
        check(left == [], "Content-Length upload cut at half: no temp file (%s)" % left)
        head = (b"POST /v1/images HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n")
        raw_send(s, head, data[: len(data) // 2], chunked=True)
        left = wait_tmp_empty(db)
        check(left == [], "chunked upload cut midway: no temp file (%s)" % left)
        check(db_state(db) == before, "catalog and index files unchanged")
        verify_clean(db, "after cut-off uploads")
        st, _, _ = s.request("GET", "/healthz")
        check(st == 200, "the server still answers")
        st, _, js = s.upload(data)
        check(st == 201, "the whole upload afterwards: 201")
    finally:
        s.stop()


def case_hostile():
    prog = compile_fixture("prog")
    gz = compile_fixture("prog-gz", "-gz=zlib")
    db = os.path.join(SCRATCH, "db")
    good = other_program("good")
    cases = []
    with open(prog, "rb") as f:
        data = f.read()
    cases.append(("truncated ELF", data[:3000], "section headers lie outside the file"))
    # Elf64_Chdr of .debug_info: ch_size (offset 8) = 1 TiB (tests/corrupt/bad_dwarf.sh)
    bomb = os.path.join(SCRATCH, "bomb")
    r = run(sys.executable, os.path.join(HERE, "..", "corrupt", "patch_elf.py"), gz, bomb, "u64",
            ".debug_info", "8", "0x10000000000")
    if r.returncode:
        raise SystemExit("FAIL: patch_elf.py: " + r.stderr)
    with open(bomb, "rb") as f:
        cases.append(("decompression bomb", f.read(), "(refused: decompression bomb)"))
    cases.append(("text", b"this is not an object file\n" * 40, "not an ELF"))
    cases.append(("empty", b"", "empty file"))
    s = Server(db)
    try:
        with open(good, "rb") as f:
            s.upload(f.read())
        before = db_state(db)
        for name, body, reason in cases:
            st, _, js = s.upload(body)
            err = js.get("error", "")
            check(st == 422 and reason in err and "\n" not in err and "/tmp/" not in err,
                  "%s: 422 with the reason (%d %r)" % (name, st, err))
        check(db_state(db) == before, "nothing published")
        check(tmp_uploads(db) == [], "no temp file left")
        verify_clean(db, "after hostile uploads")
    finally:
        s.stop()
    hook = os.environ.get("SYMDB_INDEXER_TEST")
    if not hook:
        print("SKIP part: no symdb-indexer-test (crashing indexer)")
        return
    w = os.path.join(SCRATCH, "indexer-segv")
    with open(w, "w") as f:
        f.write('#!/bin/sh\nexec "%s" --test-hook segv "$@"\n' % hook)
    os.chmod(w, 0o755)
    s = Server(db, "--indexer", w)
    try:
        st, _, js = s.upload(data)
        check(st == 422 and js.get("error") == "indexer crashed: signal 11 (Segmentation fault)",
              "a crashing indexer: 422 with its reason (%d %s)" % (st, js))
        st, _, body = s.request("GET", "/metrics")
        m = dict(l.split()[:2] for l in body.decode().splitlines()
                 if l.startswith("symdb_serve_indexer_"))
        check(m.get("symdb_serve_indexer_failures_total") == "1" and
              m.get("symdb_serve_indexer_runs_total") == "1", "metrics: one run, one failure (%s)" % m)
        check(db_state(db) == before, "nothing published")
        check(tmp_uploads(db) == [], "no temp file left")
    finally:
        s.stop()


def case_oversize():
    prog = compile_fixture("prog")
    db = os.path.join(SCRATCH, "db")
    with open(prog, "rb") as f:
        data = f.read()
    s = Server(db, "--max-upload", str(len(data) - 1))
    try:
        got = raw_exchange(s, b"POST /v1/images HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Type: application/octet-stream\r\n"
                           b"Content-Length: %d\r\n\r\n" % len(data))
        check(got.startswith(b"HTTP/1.1 413"), "Content-Length over the limit: 413 before the body (%r)" % got[:40])
        # 2^64-1 is a length like any other (it once read as "no length"
        # and waited for the body timeout), on both endpoints
        for path, ctype in ((b"/v1/images", b"application/octet-stream"),
                            (b"/v1/symbolize", b"application/json")):
            t0 = time.monotonic()
            got = raw_exchange(s, b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\n"
                               b"Content-Length: 18446744073709551615\r\n\r\n" % (path, ctype))
            check(got.startswith(b"HTTP/1.1 413") and b"body of 18446744073709551615 bytes" in got
                  or b"18446744073709551615 bytes, more than the limit" in got,
                  "%s: Content-Length 2^64-1: 413 naming it (%r)" % (path.decode(), got[-120:]))
            check(time.monotonic() - t0 < 10, "%s: 2^64-1 answered at once" % path.decode())
        chunks = [b"%x\r\n" % len(data[i:i + 4096]) + data[i:i + 4096] + b"\r\n"
                  for i in range(0, len(data), 4096)] + [b"0\r\n\r\n"]
        got = raw_exchange(s, b"POST /v1/images HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Type: application/octet-stream\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n", chunks)
        check(got.startswith(b"HTTP/1.1 413"), "chunked body over the limit: 413 (%r)" % got[:40])
        left = wait_tmp_empty(db)
        check(left == [], "no temp file left (%s)" % left)
        check(run(SYMDB, "--db", db, "list").stdout == "", "nothing published")
    finally:
        s.stop()


def case_busy():
    """--max-indexers 1 with a hanging indexer: another upload waits for a
    slot until its deadline, then 503 + Retry-After; the same file waits
    for its turn, then 503 too."""
    hook = os.environ.get("SYMDB_INDEXER_TEST")
    if not hook:
        skip("no symdb-indexer-test (hanging indexer)")
    w = os.path.join(SCRATCH, "indexer-hang")
    with open(w, "w") as f:
        f.write('#!/bin/sh\nexec "%s" --test-hook hang "$@"\n' % hook)
    os.chmod(w, 0o755)
    prog = compile_fixture("prog")
    other = other_program("other")
    db = os.path.join(SCRATCH, "db")
    s = Server(db, "--indexer", w, "--max-indexers", "1", "--deadline-ms", "1500",
               "--threads", "4")
    first = {}

    def hang():
        try:
            with open(prog, "rb") as f:
                first["r"] = s.upload(f.read())
        except OSError as e:
            first["r"] = (0, {}, {"error": repr(e)})

    t = threading.Thread(target=hang, daemon=True)
    try:
        t.start()
        end = time.monotonic() + 30
        # the first upload holds the slot once its indexer (a child of the
        # server) runs
        while time.monotonic() < end and not run("pgrep", "-P", str(s.p.pid)).stdout:
            time.sleep(0.1)
        for name, path, why in (("another file", other, "indexer slot"),
                                ("the same file", prog, "being indexed")):
            with open(path, "rb") as f:
                st, hdr, js = s.upload(f.read())
            check(st == 503 and hdr.get("Retry-After") == "2" and why in js.get("error", ""),
                  "%s while the only slot hangs: 503, Retry-After 2 (%d %s %s)" %
                  (name, st, hdr.get("Retry-After"), js))
        st, _, _ = s.request("GET", "/healthz")
        check(st == 200, "the server still answers")
    finally:
        s.p.kill()
        s.p.wait()
    check(run(SYMDB, "--db", db, "list").stdout == "", "nothing published")


def case_slow():
    """Two uploads whose indexers hang hold both default indexer slots with
    --threads 2: /healthz and a /v1/symbolize request are still answered,
    before either upload ends (each upload waits on a thread of its own,
    its connection suspended, not on a libmicrohttpd pool thread).  The
    hanging indexers are then killed: both uploads get their 422."""
    hook = os.environ.get("SYMDB_INDEXER_TEST")
    if not hook:
        skip("no symdb-indexer-test (hanging indexer)")
    w = os.path.join(SCRATCH, "indexer-hang")
    with open(w, "w") as f:
        f.write('#!/bin/sh\nexec "%s" --test-hook hang "$@"\n' % hook)
    os.chmod(w, 0o755)
    prog = compile_fixture("prog")
    bid = build_id(prog)
    db = os.path.join(SCRATCH, "db")
    r = run(SYMDB, "--db", db, "build", "-q", prog)
    check(r.returncode == 0, "symdb build of the program to symbolize")
    addrs = addresses(prog)[:4]
    s = Server(db, "--indexer", w, "--threads", "2", "--max-indexers", "2")
    order, lock = [], threading.Lock()
    got = {}

    def note(what, result):
        # the indexers still hanging when the answer came: an upload
        # ends only once its indexer is gone
        alive = len(run("pgrep", "-P", str(s.p.pid)).stdout.split())
        with lock:
            order.append((what, alive))
            got[what] = result

    def upload(name):
        try:
            with open(other_program(name), "rb") as f:
                res = s.upload(f.read())
        except OSError as e:
            res = (0, {}, {"error": repr(e)})
        note("upload " + name, res)

    def healthz():
        try:
            res = s.request("GET", "/healthz", timeout=600)
        except OSError as e:
            res = (0, {}, repr(e).encode())
        note("healthz", res)

    def symbolize():
        body = json.dumps({"modules": [{"build_id": bid, "addresses": addrs}]}).encode()
        try:
            res = s.request("POST", "/v1/symbolize", body, {"Content-Type": "application/json"},
                            timeout=600)
        except OSError as e:
            res = (0, {}, repr(e).encode())
        note("symbolize", res)

    ups = [threading.Thread(target=upload, args=(n,), daemon=True) for n in ("slow_a", "slow_b")]
    try:
        for t in ups:
            t.start()
        # both slots held: two indexers (children of the server) hang
        end = time.monotonic() + 60
        kids = []
        while time.monotonic() < end and len(kids) < 2:
            kids = run("pgrep", "-P", str(s.p.pid)).stdout.split()
            time.sleep(0.1)
        check(len(kids) == 2, "two indexers hang (%s)" % kids)
        asks = [threading.Thread(target=f, daemon=True) for f in (healthz, symbolize)]
        for t in asks:
            t.start()
        # Wait for both answers (a bounded wait, only so that a server that
        # never answers ends the test: the order is what is checked).
        for t in asks:
            t.join(60)
        for k in run("pgrep", "-P", str(s.p.pid)).stdout.split():
            run("kill", "-KILL", k)
        for t in asks + ups:
            t.join(120)
        print("order: %s" % order)
        early = sorted(w for w, alive in order[:2] if alive == 2)
        check(early == ["healthz", "symbolize"],
              "/healthz and /v1/symbolize answered while both indexers still hung, before "
              "either upload ended (order, hanging indexers: %s)" % order)
        st, _, body = got.get("healthz", (0, {}, b""))
        check(st == 200 and body.strip() == b"ok", "/healthz: 200 ok (%d %r)" % (st, body[:80]))
        st, _, body = got.get("symbolize", (0, {}, b""))
        res = json.loads(body)["modules"][0]["results"] if st == 200 else []
        check(len(res) == len(addrs) and all(x["status"] == "ok" for x in res),
              "/v1/symbolize: 200, %d results ok (%d %r)" % (len(addrs), st, body[:200]))
        for n in ("slow_a", "slow_b"):
            st, _, js = got.get("upload " + n, (0, {}, {}))
            check(st == 422 and "signal 9" in js.get("error", ""),
                  "upload %s after its indexer was killed: 422 (%d %s)" % (n, st, js))
        st, _, _ = s.request("GET", "/healthz")
        check(st == 200, "the server still answers")
    finally:
        s.stop()
    check(tmp_uploads(db) == [], "no temp file left")


def case_macho():
    """A universal Mach-O file: one image per slice, with its arch and
    LC_UUID (llvm-dwarfdump-14 --uuid); a dSYM's DWARF file is a
    debug_file with DWARF."""
    for t in ("clang", "ld64.lld-14", "llvm-lipo-14", "dsymutil", "llvm-dwarfdump-14"):
        if not shutil.which(t):
            skip(t + " not found")
    src = os.path.join(HERE, "..", "fixtures", "mo_c.c")
    slices = []
    for arch in ("arm64", "x86_64"):
        o, app = os.path.join(SCRATCH, "mo_%s.o" % arch), os.path.join(SCRATCH, "app_" + arch)
        for argv in (("clang", "-target", arch + "-apple-macos11", "-g", "-O2", "-c", src, "-o", o),
                     ("ld64.lld-14", "-arch", arch, "-platform_version", "macos", "11.0", "11.0",
                      "-undefined", "dynamic_lookup", "-execute", "-e", "_main", "-o", app, o)):
            r = run(*argv)
            if r.returncode:
                raise SystemExit("FAIL: %s: %s" % (argv[0], r.stderr))
        slices.append(app)
    fat = os.path.join(SCRATCH, "app_fat")
    run("llvm-lipo-14", "-create", *slices, "-output", fat)
    uuids = {}
    for line in run("llvm-dwarfdump-14", "--uuid", fat).stdout.splitlines():
        f = line.split()  # UUID: XXXXXXXX-XXXX-... (arch) path
        if len(f) >= 3 and f[0] == "UUID:":
            uuids[f[2].strip("()")] = f[1].replace("-", "").lower()
    db = os.path.join(SCRATCH, "db")
    s = Server(db)
    try:
        with open(fat, "rb") as f:
            st, _, js = s.upload(f.read())
        got = {im.get("arch"): im.get("build_id") for im in js.get("images", [])}
        check(st == 201 and got == uuids and len(got) == 2,
              "universal file: 201, one image per slice, arch and LC_UUID (%s vs %s)" % (got, uuids))
        check(all(im.get("format") == "macho" and im.get("id_kind") == "macho_uuid" and
                  im.get("kind") == "binary" and im.get("status") == "indexed" for im in js.get("images", [])),
              "format macho, id_kind macho_uuid, kind binary, indexed")
        for arch, u in uuids.items():
            st, _, body = s.request("GET", "/v1/images/" + u)
            check(st == 200 and json.loads(body).get("format") == "macho", "GET %s entry (%s)" % (arch, st))
        r = run("dsymutil", slices[0], "-o", slices[0] + ".dSYM")
        dw = os.path.join(slices[0] + ".dSYM", "Contents", "Resources", "DWARF", os.path.basename(slices[0]))
        if r.returncode or not os.path.exists(dw):
            raise SystemExit("FAIL: dsymutil: " + r.stderr)
        with open(dw, "rb") as f:
            st, _, js = s.upload(f.read())
        im = js.get("images", [{}])[0]
        check(st == 201 and im.get("kind") == "debug_file" and im.get("dwarf") is True and
              im.get("build_id") == uuids["arm64"] and im.get("replaced") == "index_without_dwarf",
              "the arm64 slice's dSYM DWARF file: debug_file, DWARF, replaced (%d %s)" % (st, js))
        check(tmp_uploads(db) == [], "no temp file left")
    finally:
        s.stop()


def case_bad_ids():
    db = os.path.join(SCRATCH, "db")
    s = Server(db)
    try:
        for path in ["/v1/images/../../x", "/v1/images/%2e%2e%2fx", "/v1/images/%2e%2e%2f%2e%2e%2fetc",
                     "/v1/images/abc", "/v1/images/ABCD", "/v1/images/AbCd/index", "/v1/images/a",
                     "/v1/images/" + "ab" * 33, "/v1/images/%61%62", "/v1/images/ab%2fcd",
                     "/v1/images/abcd%2findex", "/v1/images/xyz1", "/v1/images/../../x/index"]:
            st, _, body = s.request("GET", path)
            check(st == 400, "GET %s: 400 (%d %s)" % (path, st, body[:80]))
        for path in ["/v1/images/abcd", "/v1/images/abcd/index", "/v1/images/" + "ab" * 32]:
            st, _, _ = s.request("GET", path)
            check(st == 404, "GET %s: 404 (unknown)" % path)
        st, _, _ = s.request("GET", "/v1/images/abcd/other")
        check(st == 404, "GET /v1/images/abcd/other: 404")
        # the store layout: the same id rules; XX must be the id's first
        # two digits and the name end in .symdb
        for path in ["/symdb/v1/ab/../../x.symdb", "/symdb/v1/ab/%2e%2e%2fab.symdb",
                     "/symdb/v1/ab/ABCD.symdb", "/symdb/v1/ab/abc.symdb", "/symdb/v1/ab/%61bcd.symdb",
                     "/symdb/v1/ab/ab%2fcd.symdb", "/symdb/v1/ab/.symdb"]:
            st, _, body = s.request("GET", path)
            check(st == 400, "GET %s: 400 (%d %s)" % (path, st, body[:80]))
        for path in ["/symdb/v1/ab/abcd.symdb", "/symdb/v1/cd/abcd.symdb", "/symdb/v1/ab/abcd",
                     "/symdb/v1/ab/abcd.symdb.lz4", "/symdb/v1/abcd.symdb", "/symdb/v1/", "/symdb/v2/ab/abcd.symdb"]:
            st, _, _ = s.request("GET", path)
            check(st == 404, "GET %s: 404" % path)
        for ctype in (b"Content-Type: application/json\r\n", b""):
            got = raw_exchange(s, b"POST /v1/images HTTP/1.1\r\nHost: x\r\n" + ctype +
                               b"Content-Length: 4\r\n\r\n", [b"\x7fELF"])
            check(got.startswith(b"HTTP/1.1 415"), "POST with %r: 415 (%r)" % (ctype, got[:40]))
        check(not os.path.exists(os.path.join(SCRATCH, "x")), "nothing created outside")
    finally:
        s.stop()


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: images_test.py CASE")
    if not SYMDB or not SCRATCH or "/scratch/" not in SCRATCH + "/":
        raise SystemExit("SYMDB and SCRATCH (under a scratch directory) must be set")
    for t in ("gcc", "strip", "objcopy", "llvm-readelf-14", "llvm-nm-14", "llvm-symbolizer-14"):
        if not shutil.which(t):
            skip(t + " not found")
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    globals()["case_" + sys.argv[1]]()
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)


if __name__ == "__main__":
    main()
