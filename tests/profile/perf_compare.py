#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare the leaf functions of `symdb perf` folded stacks with
`perf report --no-children --sort sym -n` (perf's own symbols) by sample
weight.  Usage: perf_compare.py [--aliases FILE] FOLDED REPORT MIN_PERCENT

The leaf function of a folded stack is its last frame that is not an inline
frame ("_[i]"): perf names a sample by the symbol-table symbol covering its
address, which is the outermost function of the inline chain there, while
symdb's innermost frame may be a function inlined into it.  "_[k]"/"_[j]"
suffixes are dropped.  A frame symdb could not name ("MODULE+0xOFF",
"[unknown]") and an address perf could not ("0x...") are both "unknown".
Agreement = sum over names of min(symdb weight, perf weight) / total.

--aliases FILE (before the other arguments): lines "IMAGE ADDRESS NAME" of
the function symbols of the profiled images; names of one function (several
symbols at one address: memcpy and memmove variants, read and __read) count
as one name.  perf picks among them by its own rules (choose_best_symbol),
symdb by llvm-symbolizer's, and which of two aliases a sample is named by
says nothing about whether it was placed in the right function.

With --jit (REPORT from `perf report --sort dso,sym`), only JIT code: the
samples perf names from a perf map ("[JIT] tid N") against symdb's "_[j]"
leaves; agreement = sum of min / perf's JIT weight."""
import re
import sys
from collections import Counter


def leaf(stack):
    frames = stack.split(";")
    while len(frames) > 1 and frames[-1].endswith("_[i]"):
        frames.pop()
    f = frames[-1]
    for suf in ("_[k]", "_[j]"):
        if f.endswith(suf):
            f = f[: -len(suf)]
    if f == "[unknown]" or re.search(r"\+0x[0-9a-f]+$", f):
        return "[unknown]"
    return f


def read_folded(path, jit=False):
    w = Counter()
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if jit and not stack.endswith("_[j]"):
                continue
            w[leaf(stack)] += int(n)
    return w


def read_report_jit(path):
    w = Counter()
    pat = re.compile(r"^\s*[\d.]+%\s+(\d+)\s+(.*?)\s+\[(.)\]\s+(.*?)\s*$")
    with open(path) as f:
        for line in f:
            m = pat.match(line)
            if m and not line.startswith("#") and m.group(2).startswith("[JIT]"):
                w[m.group(4)] += int(m.group(1))
    return w


def main_jit(folded, report, need):
    s, p = read_folded(folded, jit=True), read_report_jit(report)
    tp = sum(p.values())
    if tp == 0:
        print("perf report names no JIT sample")
        return 1
    agree = sum(min(s[k], p[k]) for k in s)
    pct = 100.0 * agree / tp
    print(f"{tp} JIT samples (perf): {pct:.2f}% agree by function ({sum(s.values())} in symdb)")
    for k in sorted(set(s) | set(p), key=lambda k: -abs(p[k] - s[k]))[:8]:
        if p[k] != s[k]:
            print(f"  {k}: perf {p[k]}, symdb {s[k]}")
    return 0 if pct >= need else 1


def read_report(path):
    w = Counter()
    pat = re.compile(r"^\s*[\d.]+%\s+(\d+)\s+\[(.)\]\s+(.*?)\s*$")
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = pat.match(line)
            if not m:
                continue
            name = m.group(3)
            if re.fullmatch(r"0x[0-9a-f]+", name):
                name = "[unknown]"
            w[name] += int(m.group(1))
    return w


def read_aliases(path):
    """name -> the smallest name of its alias group (union over images)."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    at = {}
    with open(path) as f:
        for line in f:
            img, addr, name = line.split()
            first = at.setdefault((img, addr), name)
            a, b = find(first), find(name)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {n: find(n) for n in parent}


def canon(w, aliases):
    out = Counter()
    for k, v in w.items():
        out[aliases.get(k, k)] += v
    return out


def main():
    aliases = {}
    if sys.argv[1] == "--aliases":
        aliases = read_aliases(sys.argv[2])
        del sys.argv[1:3]
    if sys.argv[1] == "--jit":
        return main_jit(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    folded, report, need = sys.argv[1], sys.argv[2], float(sys.argv[3])
    s, p = canon(read_folded(folded), aliases), canon(read_report(report), aliases)
    ts, tp = sum(s.values()), sum(p.values())
    if ts != tp or ts == 0:
        print(f"sample totals differ: symdb {ts}, perf report {tp}")
        return 1
    agree = sum(min(s[k], p[k]) for k in s)
    pct = 100.0 * agree / ts
    named = sum(min(s[k], p[k]) for k in s if k != "[unknown]")
    pnamed = tp - p["[unknown]"]
    print(f"{ts} samples: {pct:.2f}% of the weight agrees by leaf function "
          f"({named}/{pnamed} of the samples perf named; unknown: symdb {s['[unknown]']}, "
          f"perf {p['[unknown]']})")
    diffs = sorted(((p[k] - s[k], k) for k in set(s) | set(p) if p[k] != s[k]),
                   key=lambda t: -abs(t[0]))
    for d, k in diffs[:12]:
        print(f"  {k}: perf {p[k]}, symdb {s[k]}")
    return 0 if pct >= need else 1


sys.exit(main())
