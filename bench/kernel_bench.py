#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""kernel_bench.py: kernel addresses per second, `symdb query --kernel` against
a kallsyms binary-search baseline (bench/kallsyms_baseline.c, compiled here
with -O2), on the same addresses, into the same kind of sink (a file), with
byte-identical answers (checked).

usage: bench/kernel_bench.py --symdb BUILD/tools/symdb [--runs 5] [--n 1000000]
                             [--kallsyms /proc/kallsyms] [--work DIR]

Addresses: --n samples (fixed seed) of the kernel image's t/T symbols of
kallsyms, uniform over symbols, each at an offset below min(gap to the next
address, 256): profile-like, every one named.  Each run times, in rotating
order, both programs on the --n addresses and on an empty input (what
reading and sorting kallsyms costs); CPU = user + sys from wait4's rusage
(bench/rusage.py).  Addresses per second = n / (CPU with n - CPU with none),
the per-address rate without the start-up, and n / CPU overall.  Prints a
markdown table of medians with min-max and the 1-minute load average.
"""
import argparse
import os
import random
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))


def load():
    return float(open("/proc/loadavg").read().split()[0])


def timed(work, cmd, inp, out):
    res = os.path.join(work, "rusage")
    with open(inp) as i, open(out, "w") as o:
        subprocess.run([sys.executable, os.path.join(here, "rusage.py"), res, "--"] + cmd,
                       stdin=i, stdout=o, check=True)
    wall, user, sys_, rss = open(res).read().split()
    return float(wall), float(user) + float(sys_), int(rss)


def med(xs, scale=1000.0, fmt="%.0f"):
    xs = [x * scale for x in xs]
    return "%s (%s-%s)" % (fmt % statistics.median(xs), fmt % min(xs), fmt % max(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symdb", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--kallsyms", default="/proc/kallsyms")
    ap.add_argument("--work", default="/tmp/symdb-kernel-bench")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    base = os.path.join(a.work, "kallsyms_baseline")
    subprocess.run(["cc", "-O2", "-o", base, os.path.join(here, "kallsyms_baseline.c")],
                   check=True)
    rows = [l.split() for l in open(a.kallsyms)]
    addrs = sorted({int(r[0], 16) for r in rows if len(r) >= 3})
    nxt = dict(zip(addrs, addrs[1:]))
    syms = sorted({int(r[0], 16) for r in rows if len(r) == 3 and r[1] in "tT"} & set(nxt))
    rnd = random.Random(15)
    inp, empty = os.path.join(a.work, "addrs"), os.path.join(a.work, "empty")
    with open(inp, "w") as f:
        for _ in range(a.n):
            s = rnd.choice(syms)
            f.write("0x%x\n" % (s + rnd.randrange(min(nxt[s] - s, 256))))
    open(empty, "w").close()
    env_db = os.path.join(a.work, "db")
    ways = {
        "symdb query --kernel --kallsyms-only": [a.symdb, "query", "--db", env_db, "--kernel",
                                                 "--kallsyms-only", "--kallsyms", a.kallsyms],
        "kallsyms_baseline.c (-O2)": [base, a.kallsyms],
    }
    names = list(ways)
    got = {w: {"n": [], "0": []} for w in names}
    loads = []
    for r in range(a.runs + 1):  # run 0 warms the page cache, untimed
        order = names[r % 2:] + names[:r % 2]
        for w in order:
            loads.append(load())
            t = timed(a.work, ways[w], inp, os.path.join(a.work, "out-" + str(names.index(w))))
            z = timed(a.work, ways[w], empty, os.devnull)
            if r:
                got[w]["n"].append(t)
                got[w]["0"].append(z)
    same = open(os.path.join(a.work, "out-0"), "rb").read() == \
        open(os.path.join(a.work, "out-1"), "rb").read()
    print("| way | addresses | wall ms | CPU ms | CPU ms, empty input | addresses/s (per-address CPU) | addresses/s (all CPU) | max RSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for w in names:
        tn, t0 = got[w]["n"], got[w]["0"]
        per = [a.n / max(x[1] - y[1], 1e-6) for x, y in zip(tn, t0)]
        tot = [a.n / x[1] for x in tn]
        print("| %s | %d | %s | %s | %s | %s | %s | %d |" % (
            w, a.n, med([x[0] for x in tn]), med([x[1] for x in tn]), med([x[1] for x in t0]),
            med(per, 1e-6, "%.1fM"), med(tot, 1e-6, "%.1fM"),
            statistics.median(x[2] for x in tn) // 1024))
    print()
    print("runs: %d timed (+1 warm-up); answers byte-identical: %s; load average (1 min) "
          "before each run: median %.2f (%.2f-%.2f); kallsyms: %d lines, %d t/T symbols sampled"
          % (a.runs, "yes" if same else "NO", statistics.median(loads), min(loads), max(loads),
             len(rows), len(syms)))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
