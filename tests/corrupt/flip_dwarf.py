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
    db, f = os.path.join(work, "db"), os.path.join(work, "flipped")
    addrs = "".join("0x%x\n" % a for a in range(0x1000, 0x1600, 5))
    failures = 0
    for it in range(n):
        _, orig = rng.choice(bases)
        data = bytearray(orig)
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
        open(f, "wb").write(data)
        steps = [[symdb, "--db", db, "build", "--force", f], [symdb, "--db", db, "query", "--obj", f]]
        for cmd in steps:
            try:
                r = subprocess.run(cmd, input=addrs, capture_output=True, text=True,
                                   errors="replace", timeout=60)
            except subprocess.TimeoutExpired:
                r = None
            if r is None or bad(r):
                failures += 1
                keep = os.path.join(work, "fail%d" % it)
                open(keep, "wb").write(data)
                print("FAIL iteration %d (%s): %s" % (it, cmd[3], "timeout" if r is None
                                                      else r.stderr[-800:]))
                break
            if r.returncode != 0:
                break  # a refused build: nothing to query
    print("flip_dwarf: %d iterations, %d failures" % (n, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
