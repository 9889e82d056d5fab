#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_addrs.py: deterministic, seeded address sets for the symdb benchmark.
#
# For one binary it writes, into OUTDIR, one file per (kind, size, order):
#   NAME.KIND.SIZE.ORDER.txt   one "0x%x" virtual address per line
# KIND is
#   uniform  - uniform over the executable sections (.text, .plt, .init ...):
#              lands mostly in big functions and in code with no symbol;
#   profile  - what a sampling profiler sends: functions drawn with a Zipf
#              skew (s = 1.1, hot set in a seeded random order), and inside a
#              function one of a few fixed "hot PCs" (up to 8, seeded by the
#              function), so the set has many exact repeats;
#   starts   - function entry addresses, functions drawn uniformly.
# ORDER is "unsorted" (generation order) or "sorted" (the same multiset,
# ascending).  Same seed, same binary -> byte-identical files.
#
# Functions come from `llvm-nm-14 --defined-only -S` (types T/t/W/w, size > 0,
# one per address) of SYMFILE, which defaults to the binary; pass the separate
# debug file for a stripped library whose .symtab lives there (libc6-dbg).
import argparse
import bisect
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elfinfo  # noqa: E402

ZIPF_S = 1.1
HOT_PCS = 8


def functions(symfile, nm):
    """Sorted [(start, size)] of defined function symbols, one per start."""
    out = subprocess.run([nm, "--defined-only", "-S", symfile], check=True,
                         capture_output=True, text=True).stdout
    seen = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[2] not in ("T", "t", "W", "w"):
            continue
        start, size = int(parts[0], 16), int(parts[1], 16)
        if size > 0 and size > seen.get(start, 0):
            seen[start] = size
    return sorted(seen.items())


def gen_uniform(rng, ranges, n):
    sizes = [e - s for s, e in ranges]
    cum, total = [], 0
    for sz in sizes:
        total += sz
        cum.append(total)
    out = []
    for _ in range(n):
        x = rng.randrange(total)
        i = bisect.bisect_right(cum, x)
        base = cum[i - 1] if i else 0
        out.append(ranges[i][0] + (x - base))
    return out


def gen_profile(rng, funcs, n, seed):
    order = list(range(len(funcs)))
    rng.shuffle(order)  # which functions are hot: seeded, not address order
    weights = [1.0 / (rank + 1) ** ZIPF_S for rank in range(len(order))]
    picks = rng.choices(order, weights=weights, k=n)
    hot = {}
    out = []
    for fi in picks:
        pcs = hot.get(fi)
        if pcs is None:
            start, size = funcs[fi]
            frng = random.Random(seed * 1000003 + fi)
            pcs = [start + frng.randrange(size) for _ in range(min(HOT_PCS, size))]
            hot[fi] = pcs
        out.append(pcs[rng.randrange(len(pcs))])
    return out


def gen_starts(rng, funcs, n):
    return [funcs[rng.randrange(len(funcs))][0] for _ in range(n)]


def write(path, addrs):
    with open(path, "w") as f:
        f.write("".join("0x%x\n" % a for a in addrs))


def main():
    ap = argparse.ArgumentParser(description="deterministic address sets for the symdb benchmark")
    ap.add_argument("binary")
    ap.add_argument("outdir")
    ap.add_argument("--name", help="file name prefix (default: basename)")
    ap.add_argument("--symfile", help="file to read function symbols from")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--sizes", default="1000,100000,1000000")
    ap.add_argument("--kinds", default="uniform,profile,starts")
    ap.add_argument("--nm", default="llvm-nm-14")
    a = ap.parse_args()

    name = a.name or os.path.basename(a.binary)
    funcs = functions(a.symfile or a.binary, a.nm)
    if not funcs:
        sys.exit(f"gen_addrs.py: {a.symfile or a.binary}: no function symbols")
    ranges = elfinfo.Elf(a.binary).exec_ranges()
    os.makedirs(a.outdir, exist_ok=True)
    for kind in a.kinds.split(","):
        for size in (int(s) for s in a.sizes.split(",")):
            # One stream per (kind, size) so adding a size never shifts another.
            rng = random.Random(f"{a.seed}/{kind}/{size}")
            if kind == "uniform":
                addrs = gen_uniform(rng, ranges, size)
            elif kind == "profile":
                addrs = gen_profile(rng, funcs, size, a.seed)
            elif kind == "starts":
                addrs = gen_starts(rng, funcs, size)
            else:
                sys.exit(f"gen_addrs.py: unknown kind {kind}")
            base = os.path.join(a.outdir, f"{name}.{kind}.{size}")
            write(base + ".unsorted.txt", addrs)
            write(base + ".sorted.txt", sorted(addrs))
    print(f"{name}: {len(funcs)} functions, {len(ranges)} executable sections")


if __name__ == "__main__":
    main()
