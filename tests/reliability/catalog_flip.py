# SPDX-License-Identifier: MIT
"""catalog_flip.py: one flipped byte anywhere in the B-tree pages of a
catalog's data.mdb (SPEC §12.1, "Catalog tree check").  LMDB reads its pages
without checking them: such a byte made list, query, verify, rm and even
reindex die of SIGSEGV or SIGBUS, abort on an assertion, corrupt a writer's
heap, or list the same entries for ever (about 190 of the commands a sweep
of 75 offsets ran).  For each flip (a sample of the non-zero bytes of pages
2 and up, each XOR 0xff or 0x01, by a fixed seed) every command must end by
itself within the time limit with an exit code in 0..4 (never a signal) and
at most one line on stderr; a query that exits 0 must answer as
llvm-symbolizer-14 (from the catalog, or a private index after one warning
line); a list that names other images (a key byte flipped with its order
kept: a valid catalog, LMDB keeps no checksums) must make verify fail; and
`symdb reindex` must leave a catalog on which query answers again.

usage: catalog_flip.py SYMDB SCRATCH FIXTURE [FLIPS]
"""
import os
import random
import shutil
import subprocess
import sys

TIMEOUT = 20


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                              timeout=TIMEOUT, **kw)
    except subprocess.TimeoutExpired:
        return None


def main():
    symdb, scratch, fixture = sys.argv[1:4]
    flips = int(sys.argv[4]) if len(sys.argv) > 4 else 120
    base = os.path.join(scratch, "base")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    # six images: copies of one program with other build-ids (catalog
    # records of every kind: images, names, paths, used)
    with open(fixture, "rb") as f:
        exe = f.read()
    head = b"\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0"  # a 20-byte NT_GNU_BUILD_ID
    note = exe.find(head)
    if note < 0 or exe.count(head) != 1:
        fail("%s has no single 20-byte build-id note" % fixture)
    note += len(head)
    progs = []
    for i in range(6):
        p = os.path.join(scratch, "prog%d" % i)
        with open(p, "wb") as f:
            f.write(exe[:note] + bytes([i + 1]) * 20 + exe[note + 20:])
        os.chmod(p, 0o755)
        progs.append(p)
    r = run([symdb, "--db", base, "build", "-q"] + progs)
    if r is None or r.returncode != 0:
        fail("build: %s" % (r.stderr if r else "timeout"))
    addr = "0x%x" % next(int(line.split()[0], 16) for line in subprocess.run(
        ["llvm-nm-14", "--defined-only", progs[0]], capture_output=True, text=True,
        check=True).stdout.splitlines() if line.split()[1:2] in (["T"], ["t"]))
    want_q = subprocess.run(["llvm-symbolizer-14", "--obj", progs[0], addr],
                            capture_output=True, text=True, check=True).stdout
    want_list = sorted(line.split()[0] for line in run(
        [symdb, "--db", base, "list"]).stdout.splitlines())
    uuid = want_list[0]
    data = open(os.path.join(base, "catalog", "data.mdb"), "rb").read()
    psize = 4096
    # Where LMDB's trust matters most: each page's header (number, flags,
    # lower, upper) and its node offsets, then a sample of the rest (node
    # headers, keys, data) by a fixed seed.
    structural, rest = [], []
    for pg in range(2, len(data) // psize):
        at = pg * psize
        lower = int.from_bytes(data[at + 12:at + 14], "little")
        lower = lower if 16 <= lower <= psize else 16
        structural += [o for o in range(at, at + lower) if o % psize not in (8, 9)]
        rest += [o for o in range(at + lower, at + psize) if data[o]]
    rnd = random.Random(20261128)
    sample = structural + rnd.sample(rest, min(len(rest), max(0, flips - len(structural))))
    sample = sample[:max(flips, 1)]
    bad = []
    work = os.path.join(scratch, "w")
    for n, off in enumerate(sample):
        x = 0xff if n % 2 == 0 else 0x01
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(base, work, symlinks=True)
        with open(os.path.join(work, "catalog", "data.mdb"), "r+b") as f:
            f.seek(off)
            f.write(bytes([data[off] ^ x]))
        what = "byte %d (page %d +%d) ^0x%02x" % (off, off // psize, off % psize, x)
        listed_other = False
        for cmd in (["list"], ["query", "--no-build", "--obj", progs[0], addr],
                    ["query", "--obj", progs[0], addr], ["verify"], ["info", uuid],
                    ["rm", progs[5]], ["build", progs[5]], ["reindex"]):
            r = run([symdb, "--db", work] + cmd)
            c = " ".join(cmd[:1])
            if r is None:
                bad.append("%s: %s: no end within %d s" % (what, c, TIMEOUT))
                break
            err = [line for line in r.stderr.splitlines() if line]
            if r.returncode < 0 or r.returncode > 4:
                bad.append("%s: %s: exit %d %r" % (what, c, r.returncode, r.stderr[-300:]))
                break
            if len(err) > 1 and not (cmd[0] == "query" and "warning" in err[0]):
                bad.append("%s: %s: %d lines on stderr: %r" % (what, c, len(err), err[:3]))
            if r.returncode == 0 and cmd[0] == "list":
                # A flipped byte of a key, its order kept, is a valid
                # catalog that names another image (LMDB keeps no
                # checksums): verify must find it.
                got = sorted(line.split()[0] for line in r.stdout.splitlines())
                listed_other = got != want_list
            if cmd[0] == "verify" and listed_other and r.returncode == 0:
                bad.append("%s: list named other images and verify found nothing" % what)
            if r.returncode == 0 and cmd[0] == "query" and r.stdout != want_q:
                bad.append("%s: %s exit 0 with %r, llvm-symbolizer-14 %r"
                           % (what, " ".join(cmd), r.stdout, want_q))
        else:
            # after reindex: the catalog answers again
            # (a schema record naming a newer version is refused, never
            # replaced: a newer symdb's catalog is not damage)
            r = run([symdb, "--db", work, "query", "--no-build", "--obj", progs[1], addr])
            if r is None or (r.returncode != 0 and "catalog schema" not in r.stderr):
                bad.append("%s: query after reindex: %s" % (what, r.stderr if r else "timeout"))
        if len(bad) >= 10:
            break
    for b in bad:
        print(b)
    if bad:
        fail("%d flips of %d went wrong" % (len(bad), len(sample)))
    print("ok: %d flipped bytes, 8 commands each, every one ended by itself" % len(sample))


if __name__ == "__main__":
    main()
