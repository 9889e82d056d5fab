#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The golden compatibility check: checked-in index files must stay readable
and the indexer must keep writing them byte for byte.

For each golden set (NAME.elf, NAME.symdb of format 1.1, NAME-1.2.symdb of
format 1.2, NAME-2.0.symdb of format 2.0) in this directory:
 1. `symdb info` must accept the checked-in file (a reader of today opening
    a file written by the format it pins);
 2. for the files of the current format version, `symdb build` of NAME.elf
    into a scratch database must write exactly the checked-in bytes; any
    difference means the indexer's output changed and SPEC.md's version
    (§1, §15) must be considered before regenerating;
 3. for every address from 16 below the first symbol to 16 past the end of
    the last one, `symdb query --obj NAME.elf` (on today's index),
    `symdb query` on a database into which the checked-in file itself was
    imported (so every older format version stays answered),
    spec_reader.py (written from SPEC.md alone) on the checked-in file and
    `llvm-symbolizer-14 --obj NAME.elf` must print the same bytes.

usage: check.py --symdb PATH --scratch DIR [--symbolizer PATH]
"""

import argparse
import filecmp
import glob
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import spec_reader  # noqa: E402

# ELF name, checked-in index, extra `symdb build` arguments, and whether
# today's indexer must write that index byte for byte (only the files of
# the current format version; older ones stay, to be read, README.md)
GOLDEN = (("minimal", "minimal.symdb", ["--no-dwarf"], False),
          ("dwarf", "dwarf.symdb", [], False),
          ("minimal", "minimal-1.2.symdb", ["--no-dwarf"], False),
          ("dwarf", "dwarf-1.2.symdb", [], False),
          ("minimal", "minimal-2.0.symdb", ["--no-dwarf"], True),
          ("dwarf", "dwarf-2.0.symdb", [], True))


def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("FAIL: %s exited %d: %s" % (" ".join(cmd), p.returncode,
                                                      p.stderr.strip()))
    return p.stdout


def imported_answers(args, golden, symdb_file, elf, stdin):
    """`symdb query` on a database holding the checked-in file itself,
    published unchanged by `symdb import` (which verifies it in full): so a
    file of every older format version stays answered."""
    db = os.path.join(args.scratch, symdb_file + "-imported-db")
    shutil.rmtree(db, ignore_errors=True)
    run([args.symdb, "--db", db, "import", "-q", golden])
    stored = glob.glob(os.path.join(db, "images", "*", "*.symdb"))
    if len(stored) != 1 or not filecmp.cmp(stored[0], golden, shallow=False):
        raise SystemExit("FAIL: symdb import did not store %s unchanged" % golden)
    return run([args.symdb, "--db", db, "query", "--obj", elf], stdin)


def first_difference(a, b):
    al, bl = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return "line %d: %r vs %r" % (i + 1, x, y)
    return "lengths %d vs %d lines" % (len(al), len(bl))


def check_one(args, name, symdb_file, build_args, writes):
    elf = os.path.join(HERE, name + ".elf")
    golden = os.path.join(HERE, symdb_file)
    db = os.path.join(args.scratch, symdb_file + "-db")
    shutil.rmtree(db, ignore_errors=True)

    run([args.symdb, "info", golden])

    run([args.symdb, "--db", db, "build"] + build_args + [elf])
    ix = spec_reader.Index(golden)
    built = glob.glob(os.path.join(db, "images", "*", "*.symdb"))
    if len(built) != 1:
        raise SystemExit("FAIL: %s: expected one index file in %s, found %d"
                         % (name, db, len(built)))
    built = built[0]
    if writes and not filecmp.cmp(built, golden, shallow=False):
        raise SystemExit(
            "FAIL: %s: the indexer no longer writes the checked-in bytes of %s "
            "(fresh build: %s). The format output changed: consider SPEC.md's "
            "version (§1, §15) and read tests/golden/README.md before "
            "regenerating." % (name, golden, built))

    lo = max(ix.sym_addrs[0] + ix.base - 16, 0)
    hi = ix.sym_addrs[-1] + ix.base + max(ix.symbols[-1][0], 1) + 16
    addrs = ["0x%x" % a for a in range(lo, hi)]
    stdin = "\n".join(addrs) + "\n"
    ours = run([args.symdb, "--db", db, "query", "--obj", elf], stdin)
    mine = imported_answers(args, golden, symdb_file, elf, stdin)
    spec = "".join(spec_reader.format_llvm(ix.lookup(int(a, 16))) for a in addrs)
    oracle = run([args.symbolizer, "--obj", elf], stdin)
    for label, text in (("symdb query", ours), ("symdb query on " + symdb_file, mine),
                        ("spec_reader.py", spec)):
        if text != oracle:
            raise SystemExit("FAIL: %s: %s differs from %s: %s" % (
                name, label, args.symbolizer, first_difference(text, oracle)))
    print("ok %s: format %d.%d, %d bytes, %d addresses 0x%x..0x%x identical "
          "(symdb query on a fresh index and on the file, spec_reader.py, llvm-symbolizer), "
          "checksums %s" % (
              symdb_file, ix.major, ix.minor, len(ix.data), len(addrs), lo, hi - 1,
              "verified" if ix.checksums_verified else "NOT verified"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symdb", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--symbolizer", default="llvm-symbolizer-14")
    args = ap.parse_args()
    if not shutil.which(args.symbolizer):
        print("SKIP: %s not found" % args.symbolizer)
        return 77
    os.makedirs(args.scratch, exist_ok=True)
    for name, symdb_file, build_args, writes in GOLDEN:  # every one is checked in
        check_one(args, name, symdb_file, build_args, writes)
    if not spec_reader.Index(os.path.join(HERE, GOLDEN[0][1])).checksums_verified:
        print("SKIP: libxxhash cannot be loaded from Python: spec_reader.py did not verify "
              "the checksums (everything else passed)")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
