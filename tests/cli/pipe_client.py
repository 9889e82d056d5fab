#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pipe_client.py: drive a symbolizer as ASan, pprof and perf do: write ONE
request, read its whole answer, then write the next; every read has a
deadline, so a symbolizer that does not answer fails the test instead of
hanging it.  The same requests go to llvm-symbolizer-14 (the oracle) and to
symdb, and each answer, the stderr of the whole run and the exit status must
be the same bytes.

  pipe_client.py REQUESTS -- ORACLE_CMD... -- SYMDB_CMD...

REQUESTS holds one request per line; a line "SUBST A B" (first) makes the
oracle get path B where symdb gets path A (and B is replaced back by A in
the oracle's answers): a FIFO, which llvm-symbolizer-14 would open and wait
on for a writer, is asked of it as a text file.

How much of an answer to read: the oracle's answer ends with an empty line
(LLVM style), a newline (JSON), or, for GNU style whose frame count is not
in the text, when nothing more comes for IDLE seconds; symdb's answer is
then read to exactly the oracle's length within DEADLINE seconds (first
sight may index a library meanwhile).
"""
import os
import select
import subprocess
import sys
import time

# llvm-symbolizer-14 writes each answer with one write() (it flushes once
# per request: 46 requests, 46 writes of at most 383 bytes here), so the idle
# time only has to tell one GNU answer from the next; 0.5 s was 23 s of
# waiting a run.
IDLE = 0.1
DEADLINE = 120.0


def read_until(proc, done, deadline, idle=None):
    """Read proc's stdout until done(buf) or idle seconds pass with data."""
    buf = b""
    end = time.monotonic() + deadline
    fd = proc.stdout.fileno()
    while not done(buf):
        left = end - time.monotonic()
        if left <= 0:
            return buf, "timed out after %.0f s" % deadline
        wait = min(left, idle) if idle and buf else left
        r, _, _ = select.select([fd], [], [], wait)
        if not r:
            if idle and buf:
                return buf, None
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return buf, "end of output (the symbolizer exited: %s)" % proc.poll()
        buf += chunk
    return buf, None


def answer_end(style):
    if style == "JSON":
        return lambda b: b.endswith(b"\n")
    if style == "LLVM":
        return lambda b: b.endswith(b"\n\n")
    return lambda b: False  # GNU: by idleness


def main():
    argv = sys.argv[1:]
    reqfile = argv[0]
    i = argv.index("--", 1)
    j = argv.index("--", i + 1)
    oracle_cmd, symdb_cmd = argv[i + 1:j], argv[j + 1:]
    style = "LLVM"
    for a in oracle_cmd:
        if a.startswith("--output-style="):
            style = a.split("=", 1)[1]
    lines = open(reqfile, "rb").read().splitlines()
    subst = []
    while lines and lines[0].startswith(b"SUBST "):
        _, a, b = lines.pop(0).split(b" ")
        subst.append((a, b))
    env = dict(os.environ)
    oracle = subprocess.Popen(oracle_cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
    symdb = subprocess.Popen(symdb_cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    failures = 0
    for n, line in enumerate(lines, 1):
        oline = line
        for a, b in subst:
            oline = oline.replace(a, b)
        oracle.stdin.write(oline + b"\n")
        oracle.stdin.flush()
        want, err = read_until(oracle, answer_end(style), DEADLINE,
                               IDLE if style == "GNU" else None)
        if err:
            sys.exit("FAIL: the oracle on request %d (%r): %s" % (n, line, err))
        for a, b in subst:
            want = want.replace(b, a)
        symdb.stdin.write(line + b"\n")
        symdb.stdin.flush()
        got, err = read_until(symdb, lambda buf: len(buf) >= len(want), DEADLINE)
        if err:
            sys.exit("FAIL: request %d (%r): %s; got %r, expected %r" % (n, line, err, got, want))
        if got != want:
            print("FAIL: request %d (%r): got %r, expected %r" % (n, line, got, want))
            failures += 1
    oracle.stdin.close()
    symdb.stdin.close()
    # Nothing more may come: an extra line would be read as the next answer.
    rest, _ = read_until(symdb, lambda b: False, 10.0, 0.01)
    orest = oracle.stdout.read()
    if rest != orest:
        print("FAIL: after the last answer: got %r, expected %r" % (rest, orest))
        failures += 1
    oerr = oracle.stderr.read()
    serr = symdb.stderr.read()
    for a, b in subst:
        oerr = oerr.replace(b, a)
    orc, src = oracle.wait(), symdb.wait()
    if serr != oerr:
        print("FAIL: stderr: got %r, expected %r" % (serr, oerr))
        failures += 1
    if orc != src:
        print("FAIL: exit status %d, expected %d" % (src, orc))
        failures += 1
    if failures:
        sys.exit("FAIL: %d of %d requests or checks differ" % (failures, len(lines)))
    print("PASS %s: %d requests, one at a time, as llvm-symbolizer-14 answers them" %
          (style, len(lines)))


if __name__ == "__main__":
    main()
