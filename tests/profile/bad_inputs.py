#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile inputs to `symdb pprof` and `symdb perf` (profiles come from
agents over the network): each gives one line naming the input and the
reason, or the documented tolerant behaviour; never a crash, a hang (every
run has a timeout) or a partial output file.  The profiles are hand-encoded
protobuf (profile.proto's field numbers), so nothing here comes from symdb.

usage: bad_inputs.py SYMDB   (SCRATCH and SYMDB_DIR in the environment)
"""
import gzip
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

SYMDB = sys.argv[1]
SCRATCH = os.environ["SCRATCH"]
T0 = time.monotonic()
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(args, timeout=60):
    try:
        p = subprocess.run([SYMDB] + args, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, b"", b"(timed out)"
    return p.returncode, p.stdout, p.stderr


# ---- protobuf encoding -------------------------------------------------------

def varint(v):
    v &= (1 << 64) - 1  # negative int64: ten bytes, as protobuf writes it
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def fv(field, v):
    return varint(field << 3) + varint(v)


def fb(field, data):
    return varint(field << 3 | 2) + varint(len(data)) + data


def packed(field, vals):
    return fb(field, b"".join(varint(v) for v in vals))


def profile(strings=("", "samples", "count", "/nonexistent/libx.so", "main"),
            samples=((1, [1]),), locations=((1, 1, 0x1010, [1]),),
            functions=((1, 4),), mappings=((1, 0x1000, 0x2000, 3),),
            sample_type=(1, 2)):
    """samples: (value, [location ids]); locations: (id, mapping, address,
    [function ids]); functions: (id, name index); mappings: (id, start,
    limit, filename index)."""
    m = fb(1, fv(1, sample_type[0]) + fv(2, sample_type[1]))
    for value, locs in samples:
        m += fb(2, packed(1, locs) + packed(2, [value]))
    for mid, start, limit, fname in mappings:
        m += fb(3, fv(1, mid) + fv(2, start) + fv(3, limit) + fv(5, fname))
    for lid, mid, addr, funcs in locations:
        body = fv(1, lid) + fv(2, mid) + fv(3, addr)
        for f in funcs:
            body += fb(4, fv(1, f) + fv(2, 7))
        m += fb(4, body)
    for fid, name in functions:
        m += fb(5, fv(1, fid) + fv(2, name))
    for s in strings:
        m += fb(6, s.encode())
    return m


def write(name, data):
    path = os.path.join(SCRATCH, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def pprof_refused(name, data_or_path, want):
    """symdb pprof on the input: exit 1, exactly one stderr line, the
    expected one, and no output file."""
    path = data_or_path if isinstance(data_or_path, str) else write(name, data_or_path)
    out = os.path.join(SCRATCH, name + ".out.pb.gz")
    svg = os.path.join(SCRATCH, name + ".svg")
    rc, _, err = run(["pprof", path, "-o", out, "--svg", svg])
    expect = ("symdb: %s: %s\n" % (path, want)).encode()
    check(rc == 1 and err == expect,
          "pprof %s: %r (got rc %s, %r)" % (name, expect, rc, err[:300]))
    check(not os.path.exists(out) and not os.path.exists(svg), "pprof %s: no output file" % name)


def pprof_accepted(name, data, what):
    path = write(name, data)
    out = os.path.join(SCRATCH, name + ".out.pb.gz")
    svg = os.path.join(SCRATCH, name + ".svg")
    rc, _, err = run(["pprof", path, "-o", out, "--svg", svg])
    ok = rc == 0 and os.path.exists(out) and os.path.exists(svg)
    if ok:
        with open(out, "rb") as f:
            ok = f.read(2) == b"\x1f\x8b"
        ET.parse(svg)  # well-formed XML or an exception
    check(ok, "pprof %s: %s (rc %s, %r)" % (name, what, rc, err[:300]))


def test_pprof():
    good = profile()
    pprof_accepted("raw", good, "a plain (not gzip'd) protobuf is read")
    pprof_accepted("gz", gzip.compress(good), "a gzip'd one too")
    big = (1 << 63) - 1
    pprof_accepted("values", profile(samples=((big, [1]), (big, [1]), (-5, [1]), (-big, [1]))),
                   "huge and negative sample values (negative ones are not drawn)")
    pprof_refused("overflow", profile(samples=((big, [1]), (big, [1]), (big, [1]))),
                  "the sample values add up past 2^64-1 (no flame graph)")
    big64 = (1 << 64) - 1
    pprof_accepted("nofunctions", profile(
        strings=("", "samples", "count", "/usr/bin/true"), functions=(),
        mappings=((1, big64, big64, 3), (2, 0x5000, 0x1000, 3)),
        locations=((1, 1, big64, []), (2, 2, 0x10, []), (3, 2, big64, []), (4, 0, 0, []))),
        "unsymbolized (no functions), odd mapping bounds and addresses")
    pprof_refused("empty", b"", "empty file")
    d = os.path.join(SCRATCH, "adir")
    os.makedirs(d, exist_ok=True)
    pprof_refused("dir", d, "Is a directory")
    pprof_refused("text", b"hello, this is not a profile\n",
                  "not a pprof profile (protobuf decoding failed)")
    pprof_refused("truncgz", gzip.compress(good)[:-12], "truncated gzip stream")
    pprof_refused("badgz", b"\x1f\x8b\x08\x00" + b"\xff" * 64, "gzip: invalid block type")
    pprof_refused("nofunc", profile(functions=((2, 4),)),
                  "location 1 names function 1, which the profile does not have")
    pprof_refused("noloc", profile(samples=((1, [1, 9]),)),
                  "sample 0 names location 9, which the profile does not have")
    pprof_refused("locid0", profile(samples=((1, [0]),)),
                  "sample 0 names location 0, which the profile does not have")
    pprof_refused("nomap", profile(locations=((1, 5, 0x1010, [1]),)),
                  "location 1 names mapping 5, which the profile does not have")
    pprof_refused("duploc", profile(locations=((1, 1, 0x1010, [1]), (1, 1, 0x1020, [1]))),
                  "two locations have id 1")
    pprof_refused("dupfunc", profile(functions=((1, 4), (1, 4))), "two functions have id 1")
    pprof_refused("dupmap", profile(mappings=((1, 0x1000, 0x2000, 3), (1, 0, 1, 3))),
                  "two mappings have id 1")
    pprof_refused("strhigh", profile(functions=((1, 99),)),
                  "a string index is outside the string table (5 strings)")
    pprof_refused("strneg", profile(functions=((1, -1),)),
                  "a string index is outside the string table (5 strings)")
    pprof_refused("str0", profile(strings=("x", "samples")),
                  "the string table does not start with \"\"")
    pprof_refused("nvalues", profile(sample_type=(1, 2)) + fb(2, packed(1, [1]) + packed(2, [1, 2])),
                  "sample 1 has 2 values for 1 sample types")
    # A gzip bomb: 600 members of 1 MiB of zeros each (600 KiB on disk).
    member = gzip.compress(b"\0" * (1 << 20))
    pprof_refused("bomb", member * 600, "gzip: larger than 512 MiB uncompressed")
    # A decoding bomb: 8 MiB of empty samples (2 bytes each, 88 decoded).
    pprof_refused("manysamples", b"\x12\x00" * (4 << 20),
                  "needs more than 320 MiB of memory decoded (8 MiB of protobuf; "
                  "the limit is 64 MiB + 32 times its size)")
    # A failing --svg publishes no profile either.
    path = write("good", gzip.compress(good))
    out = os.path.join(SCRATCH, "good.out.pb.gz")
    rc, _, err = run(["pprof", path, "-o", out, "--svg", os.path.join(SCRATCH, "nodir", "x.svg")])
    check(rc == 1 and not os.path.exists(out) and err.count(b"\n") == 1
          and not [n for n in os.listdir(SCRATCH) if ".pb.gz." in n],
          "pprof: an unwritable --svg leaves no -o file (%s %r)" % (rc, err))
    # A FIFO as the input is read like a pipe.
    fifo = os.path.join(SCRATCH, "in.fifo")
    os.mkfifo(fifo)
    gz = gzip.compress(good)

    def feed():
        with open(fifo, "wb") as f:
            f.write(gz)
    t = threading.Thread(target=feed, daemon=True)
    t.start()
    out = os.path.join(SCRATCH, "fifo.out.pb.gz")
    rc, _, err = run(["pprof", fifo, "-o", out], timeout=30)
    check(rc == 0 and os.path.exists(out), "pprof FIFO input read like a pipe (%s %r)" % (rc, err))


# ---- perf script text --------------------------------------------------------

def sample(comm, frames):
    head = "%s 1234/1234 [000] 100.000001:     250000 cpu-clock: \n" % comm
    return head + "".join("\t    %x %s (%s)\n" % (a, s, d) for a, s, d in frames) + "\n"


def perf_run(name, text, extra=()):
    path = write(name + ".txt", text if isinstance(text, bytes) else text.encode("latin-1"))
    out = os.path.join(SCRATCH, name + ".folded")
    svg = os.path.join(SCRATCH, name + ".svg")
    rc, _, err = run(["perf", path, "-o", out, "--svg", svg, "--perf-map-dir", SCRATCH] + list(extra),
                     timeout=60)
    return path, out, svg, rc, err


def test_perf():
    # Garbage, NUL bytes, control characters and ';' in names, a 10 MB line.
    evil = "py;th\x01on\x1b[31m<&>\""
    text = ("garbage line\n\x00\x00\x00\n" + sample(evil, [(0x1234, "f", "/nonexistent/a;b<&>\x1b.so")])
            + "x" * (10 << 20) + "\n" + sample("ok", [(0x10, "g", "[unknown]")]))
    path, out, svg, rc, err = perf_run("garbage", text)
    lines = err.decode("latin-1").splitlines()
    check(rc == 0 and len(lines) == 2 and lines[0] ==
          "symdb: %s: 3 lines not understood, skipped (first: line 1)" % path,
          "perf garbage: the skipped lines counted in one line (%s %r)" % (rc, err[:300]))
    folded = open(out, "rb").read() if rc == 0 else b""
    rows = folded.decode("latin-1").splitlines()
    check(len(rows) == 2 and all(r.count(" ") >= 1 for r in rows),
          "perf garbage: two stacks, one a line (%r)" % folded[:300])
    check(b"\x1b" not in err and b"a;b<&>\\x1b.so" in err,
          "perf garbage: a control byte in a DSO path escaped in the summary line (%r)" % err[-100:])
    check(b"\x01" not in folded and b"\x1b" not in folded and b"\\x01" in folded,
          "perf garbage: control bytes escaped as \\xNN in folded text")
    check(all(";" not in r.rsplit(" ", 1)[0].split(";")[0] for r in rows)
          and any(r.startswith("py:th") for r in rows),
          "perf garbage: ';' in a name becomes ':' (the separator stays one)")
    try:
        ET.parse(svg)
        check(True, "perf garbage: the SVG is well-formed XML")
    except Exception as e:  # noqa: BLE001
        check(False, "perf garbage: the SVG is well-formed XML (%s)" % e)

    # Periods that add up past 2^64 (the weights would wrap).
    text = "".join(sample("p", [(0x10, "g", "[unknown]")]).replace(" 250000 ", " %d " % p)
                   for p in ((1 << 64) - 1, (1 << 64) - 1))
    path, out, svg, rc, err = perf_run("periods", text, ["--period"])
    check(rc == 1 and err == ("symdb: %s: the sample periods add up past 2^64-1\n" % path).encode()
          and not os.path.exists(out), "perf: periods past 2^64 refused (%s %r)" % (rc, err))

    # 100,000 frames in one stack.
    deep = sample("deep", [(0x1000 + i, "f", "/nonexistent/deep.so") for i in range(100000)])
    path, out, svg, rc, err = perf_run("deep", deep)
    depth = open(out).read().split(" ")[0].count(";") + 1 if rc == 0 else 0
    check(rc == 0 and depth >= 100000, "perf 100,000 frames: folded (depth %d, %r)" % (depth, err[:200]))

    # DSO paths that are a FIFO (a library and a perf map) and /dev/zero:
    # neither opened blocking nor read forever.
    fifo = os.path.join(SCRATCH, "lib.so")
    jit = os.path.join(SCRATCH, "perf-4321.map")
    for f in (fifo, jit):
        if os.path.exists(f):
            os.unlink(f)
        os.mkfifo(f)
    text = sample("fifo", [(0x1000, "f", fifo), (0x2000, "g", "/dev/zero"), (0x3000, "h", jit)])
    t = time.monotonic()
    path, out, svg, rc, err = perf_run("fifo", text)
    check(rc == 0 and os.path.exists(out),
          "perf DSO FIFO, /dev/zero, FIFO perf map: answered unknown, no hang "
          "(%s, %.1f s, %r)" % (rc, time.monotonic() - t, err[:300]))

    # /dev/zero as the input: lines without end, skipped without growing.
    # Bounded by head -c: 8 MiB of zeros through a pipe.
    p = subprocess.run("head -c 8388608 /dev/zero | '%s' perf - -o '%s'" %
                       (SYMDB, os.path.join(SCRATCH, "zero.folded")), shell=True,
                       capture_output=True, timeout=60)
    check(p.returncode == 1 and p.stderr ==
          b"symdb: -: no samples (is this the output of 'perf script'? see 'symdb help perf')\n"
          and not os.path.exists(os.path.join(SCRATCH, "zero.folded")),
          "perf 8 MiB of NUL bytes without a newline: no samples (%r)" % p.stderr[:300])

    # A failing --svg leaves no folded output behind.
    good = sample("ok", [(0x10, "g", "[unknown]")])
    out = os.path.join(SCRATCH, "partial.folded")
    path = write("partial.txt", good.encode())
    rc, _, err = run(["perf", path, "-o", out, "--svg", os.path.join(SCRATCH, "nodir", "x.svg")])
    check(rc == 1 and not os.path.exists(out) and err.count(b"\n") == 1,
          "perf: an unwritable --svg leaves no folded file (%s %r)" % (rc, err))
    leftovers = [n for n in os.listdir(SCRATCH) if ".folded." in n or ".svg." in n]
    check(not leftovers, "perf: no temporary files left (%s)" % leftovers)

    # The input a directory.
    d = os.path.join(SCRATCH, "adir")
    os.makedirs(d, exist_ok=True)
    rc, _, err = run(["perf", d, "-o", os.path.join(SCRATCH, "d.folded")])
    check(rc == 1 and err == ("symdb: %s: Is a directory\n" % d).encode(),
          "perf: a directory as the input (%s %r)" % (rc, err))


def main():
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    test_pprof()
    test_perf()
    print("wall time %.1f s" % (time.monotonic() - T0))
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
