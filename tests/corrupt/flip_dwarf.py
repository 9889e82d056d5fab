#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""flip_dwarf.py SYMDB SCRATCH [N] [SEED]: byte-flipping sweep over the
debug sections of freshly compiled fixtures (gcc and clang, C and C++,
DWARF 4 and 5).  Each damaged copy is built and queried; any exit status
other than 0/1, a sanitizer report or a timeout is a failure.  This is how
the libdwarf dwarf_load_rnglists double free was found; seeded, so a
failure reproduces."""
import os
import random
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from patch_elf import section  # noqa: E402

SECTIONS = [".debug_info", ".debug_line", ".debug_abbrev", ".debug_rnglists",
            ".debug_aranges", ".debug_str", ".debug_line_str", ".debug_ranges",
            ".debug_addr", ".debug_str_offsets"]


def build_bases(here, work):
    """One base per compiler and DWARF version; every one must build."""
    bases = []
    for cc, src, flags, name in [
            ("gcc", "dw_inline.c", "-gdwarf-5", "g5"), ("gcc", "dw_inline.c", "-gdwarf-4", "g4"),
            ("clang", "dw_inline.c", "-gdwarf-5", "c5"), ("g++", "dw_cxx.cpp", "-gdwarf-5", "gx5"),
            ("clang++", "dw_cxx.cpp", "-gdwarf-5", "cx5")]:
        out = os.path.join(work, name)
        if subprocess.run([cc, "-O2", "-g", flags, os.path.join(here, src), "-o", out]).returncode != 0:
            raise SystemExit("flip_dwarf.py: %s cannot compile %s" % (cc, src))
        bases.append(out)
    return bases


def bad(r):
    return r.returncode not in (0, 1) or "runtime error" in r.stderr or "Sanitizer" in r.stderr


def run(cmd, inp, timeout):
    """cmd's CompletedProcess, or None on a timeout."""
    try:
        return subprocess.run(cmd, input=inp, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def check_batch(symdb, db, paths, addrs):
    """Every copy of PATHS built by one `symdb build` and the built ones
    queried by one `symdb query` ('"FILE" ADDR' lines): None when neither
    crashed, reported a sanitizer error or timed out, and each refused copy
    got one line naming it, else what went wrong.  (A process per copy and
    step was most of this test's time in the sanitizer lane: some 64 ms a
    start there.)"""
    timeout = 60 + 10 * len(paths)  # a hang ends here, not at ctest's limit
    r = run([symdb, "--db", db, "build", "--force"] + paths, "", timeout)
    if r is None or bad(r):
        return "build: %s" % ("timeout" if r is None else r.stderr[-800:])
    # "indexed UUID FILE ..." / "skipped UUID FILE ...", in argument order
    built = [line.split()[2] for line in r.stdout.splitlines()
             if line.startswith(("indexed ", "skipped ")) and len(line.split()) > 2]
    refused = [p for p in paths if p not in built]
    errs = r.stderr.splitlines()
    for p in refused:
        n = sum(e.startswith("symdb: %s: " % p) for e in errs)
        if n != 1:
            return "build: %s refused with %d lines naming it: %s" % (p, n, r.stderr[-800:])
    if not built:
        return None
    inp = "".join('"%s" %s' % (p, a) for p in built for a in addrs.splitlines(True))
    r = run([symdb, "--db", db, "query"], inp, timeout)
    if r is None or bad(r):
        return "query: %s" % ("timeout" if r is None else r.stderr[-800:])
    return None


def main():
    symdb, work = sys.argv[1], sys.argv[2]
    for tool in ("gcc", "g++", "clang", "clang++"):
        if not shutil.which(tool):
            print("SKIP: %s not found" % tool)
            return 77
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 7)
    os.makedirs(work, exist_ok=True)
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
    bases = [(b, open(b, "rb").read()) for b in build_bases(here, work)]
    db = os.path.join(work, "db")
    addrs = "".join("0x%x\n" % a for a in range(0x1000, 0x1600, 5))
    failures = 0
    batch = 10
    for first in range(0, n, batch):
        paths = []
        for it in range(first, min(n, first + batch)):
            paths.append(os.path.join(work, "flipped%d" % it))
            open(paths[-1], "wb").write(damaged(rng, bases, it))
        why = check_batch(symdb, db, paths, addrs)
        if not why:
            continue
        # something went wrong: each copy alone, to name the one(s) at fault
        named = 0
        for path in paths:
            alone = check_batch(symdb, db, [path], addrs)
            if alone:
                named += 1
                print("FAIL %s (kept) %s" % (path, alone))
        if not named:
            print("FAIL %s..%s: the batch failed, no copy alone did: %s"
                  % (paths[0], paths[-1], why))
        failures += max(named, 1)
    if not failures:  # a failure keeps every copy, to reproduce it
        for it in range(n):
            os.unlink(os.path.join(work, "flipped%d" % it))
    print("flip_dwarf: %d damaged copies, built and queried %d at a time, %d failures"
          % (n, batch, failures))
    return 1 if failures else 0


def damaged(rng, bases, it):
    """Copy IT: a random base with a build-id of its own (copies built
    together would otherwise replace each other's image, and a query of one
    would read another's index) and 1 to 8 bytes of its debug sections
    changed."""
    _, orig = rng.choice(bases)
    data = bytearray(orig)
    off, size = section(data, ".note.gnu.build-id")
    # Elf_Nhdr (12 bytes), "GNU\0", then the id: its first 4 bytes the copy's
    struct.pack_into("<I", data, off + 16, it)
    secs = []
    for s in SECTIONS:
        try:
            off, size = section(data, s)
            if size:
                secs.append((off, size))
        except SystemExit:
            pass
    for _ in range(rng.randint(1, 8)):
        off, size = rng.choice(secs)
        data[off + rng.randrange(size)] = rng.choice([0, 0xff, 0x7f, 0x80, rng.randrange(256)])
    return bytes(data)


if __name__ == "__main__":
    sys.exit(main())
