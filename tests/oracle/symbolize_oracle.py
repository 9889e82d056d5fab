#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""symbolize_oracle.py - symdb_symbolize() against llvm-symbolizer-14 on one unsorted
batch over many images.

The batch mixes fixture binaries (with DWARF: inline chains), the system
libc.so.6 (DWARF from its libc6-dbg file, found by build-id) and the pyenv
libpython3.11.so.1.0, names images by path and by build-id hex, expresses
addresses as vaddrs, offsets, file offsets and runtime addresses, and adds
requests that cannot be answered: an image that is not indexed, a path that
does not exist, a file offset outside every segment.  sym_driver prints the
results of one symdb_symbolize() call in LLVM style; every answerable
request must print exactly what llvm-symbolizer-14 prints for the same
binary and vaddr, except where `symdb query` (the CLI, one image at a time,
sorted by nothing but itself) prints the same thing as the driver: those are
differences of the index (tests/KNOWN_DIFFERENCES.md), not of the batch
pipeline, and they are counted and capped.  The others must print their
status.  Exit 77 when a real library or its debug file is missing.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare import Elf, pick_addresses, translate, LOAD_ADDRESS  # noqa: E402

LLVM = "llvm-symbolizer-14"
KINDS = ("vaddr", "offset", "fileoff", "runtime")


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    return None


def real_libraries():
    """(path, label) of libc and libpython, or exit 77 when one is missing."""
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    d = subprocess.run([sys.executable, "-c",
                        'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")'],
                       stdout=subprocess.PIPE, text=True).stdout.strip()
    libpy = os.path.join(d, "libpython3.11.so.1.0")
    for p in (libc, libpy):
        if not os.path.isfile(p):
            print("symbolize_oracle.py: %s not found; skipping" % p)
            sys.exit(77)
    bid = build_id(libc) or ""
    if not os.path.isfile("/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])):
        print("symbolize_oracle.py: libc6-dbg is not installed; skipping")
        sys.exit(77)
    return [libc, libpy]


def split_chunks(text):
    """One chunk per request: its lines up to the blank line that ends it."""
    chunks, cur = [], []
    for line in text.split("\n"):
        if line == "":
            if cur:
                chunks.append("\n".join(cur))
            cur = []
        else:
            cur.append(line)
    return chunks


def run(cmd, data):
    p = subprocess.run(cmd, input=data.encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit("symbolize_oracle.py: %s failed (%d): %s" % (cmd[0], p.returncode,
                                                    p.stderr.decode(errors="replace")))
    return p.stdout.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symdb", required=True)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--fixtures", required=True, help="the fixtures' full/ directory")
    ap.add_argument("--per-image", type=int, default=300)
    ap.add_argument("--per-real", type=int, default=1500)
    ap.add_argument("--max-known", type=float, default=0.005,
                    help="largest share of index differences tolerated")
    ap.add_argument("--seed", type=int, default=20261125)
    a = ap.parse_args()
    if not shutil.which(LLVM):
        print("symbolize_oracle.py: %s not found; skipping" % LLVM)
        sys.exit(77)
    real = real_libraries()
    fixtures = [os.path.join(a.fixtures, n) for n in
                ("c_gcc_O2_pie", "cpp_g++_O2_rdyn", "lib_gcc_O2.so", "c_clang_O2_nopie")]
    missing = [f for f in fixtures if not os.path.isfile(f)]
    if missing:
        sys.exit("symbolize_oracle.py: fixtures missing: %s" % missing)
    not_indexed = os.path.join(a.fixtures, "c_gcc_O0_pie")
    indexed = fixtures + real

    shutil.rmtree(a.scratch, ignore_errors=True)
    os.makedirs(a.scratch)
    db = os.path.join(a.scratch, "db")
    for img in indexed:
        p = subprocess.run([a.symdb, "--db", db, "build", img], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if p.returncode != 0:
            sys.exit("symbolize_oracle.py: symdb build %s failed:\n%s" % (img, p.stdout.decode()))

    rng = random.Random(a.seed)
    reqs = []  # (driver line, image, vaddr or None, expected marker or None)
    for img in indexed + [not_indexed]:
        elf = Elf(img)
        n = a.per_real if img in real else a.per_image
        addrs = pick_addresses(elf, n // 2, n, rng)
        bid = build_id(img)
        for v in addrs:
            kind = rng.choice(KINDS)
            ins, outs = translate(elf, [v], kind)
            if not ins:
                kind, ins, outs = "vaddr", [v], [v]
            ref = "hex %s" % bid if bid and rng.random() < 0.3 else "path %s" % img
            line = "%s %s 0x%x" % (ref, kind, ins[0])
            if kind == "runtime":
                line += " 0x%x" % LOAD_ADDRESS
            if img == not_indexed:
                reqs.append((line, img, None, "NOT_INDEXED"))
            elif outs[0] == 0xFFFFFFFFFFFFFFFF:
                reqs.append((line, img, None, "OUT_OF_RANGE"))
            else:
                reqs.append((line, img, outs[0], None))
    for k in range(20):
        img = rng.choice(fixtures)
        reqs.append(("path %s fileoff 0x%x" % (img, 0x7fff00000000 + k), img, None,
                     "OUT_OF_RANGE"))
        reqs.append(("path %s.nonexistent vaddr 0x%x" % (img, 0x1000 + k), img, None,
                     "NO_IMAGE"))
        reqs.append(("hex %s vaddr 0x%x" % ("ab" * 20, 0x1000 + k), img, None, "NOT_INDEXED"))
    rng.shuffle(reqs)

    batch = "".join(r[0] + "\n" for r in reqs)
    got = split_chunks(run([a.driver, db], batch))
    if len(got) != len(reqs):
        sys.exit("symbolize_oracle.py: %d results for %d requests" % (len(got), len(reqs)))
    # The same batch with results in resolution order, put back by the driver.
    if split_chunks(run([a.driver, db, "--order"], batch)) != got:
        print("results in resolution order (SYMDB_SYMBOLIZE_ORDER) differ from input order")
        return 1
    if split_chunks(run([a.driver, db, "--stream"], batch)) != got:
        print("results streamed chunk by chunk (SYMDB_SYMBOLIZE_STREAM) differ")
        return 1
    asked = [r for r in reqs if r[3] is None]
    want = split_chunks(run([LLVM], "".join("%s 0x%x\n" % (r[1], r[2]) for r in asked)))
    if len(want) != len(asked):
        sys.exit("symbolize_oracle.py: llvm-symbolizer gave %d answers for %d" % (len(want), len(asked)))
    # The CLI on each image alone, for the differences of the index.
    cli = {}
    for img in indexed:
        vs = sorted({r[2] for r in asked if r[1] == img})
        out = split_chunks(run([a.symdb, "--db", db, "query", "--obj", img],
                               "".join("0x%x\n" % v for v in vs)))
        cli.update({(img, v): o for v, o in zip(vs, out)})

    bad = known = 0
    wi = 0
    kinds = {}
    for r, g in zip(reqs, got):
        if r[3] is not None:
            kinds[r[3]] = kinds.get(r[3], 0) + 1
            if g != r[3]:
                bad += 1
                if bad <= 10:
                    print("MISMATCH %s: want %s, got:\n%s\n" % (r[0], r[3], g))
            continue
        w = want[wi]
        wi += 1
        if g == w:
            continue
        if g == cli.get((r[1], r[2])):
            known += 1
            continue
        bad += 1
        if bad <= 10:
            print("MISMATCH %s (vaddr 0x%x)\n--- llvm-symbolizer\n%s\n--- symdb_symbolize\n%s\n"
                  "--- symdb query\n%s\n" % (r[0], r[2], w, g, cli.get((r[1], r[2]))))
    print("%d requests over %d images: %d answered (%d as the CLI, not as llvm: index "
          "differences), statuses %s, %d wrong" % (len(reqs), len(indexed) + 1, len(asked),
                                                   known, kinds, bad))
    if known > a.max_known * len(asked):
        print("too many index differences")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
