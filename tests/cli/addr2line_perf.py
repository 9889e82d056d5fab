#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The checks of addr2line_perf.sh, after both perf runs.

Every address perf asked about (the wrappers' logs) is answered by GNU
addr2line, symdb addr2line, llvm-addr2line-14 and llvm-symbolizer-14
(-a -i -f, linkage names).  Where GNU and symdb differ, symdb must equal both
llvm tools and GNU's answer must fall in a class of tests/KNOWN_DIFFERENCES.md
section "GNU addr2line under perf" (classes A-E):
  A   no line:    GNU ':?' or '??:?' where llvm has '??:0' (a symbol, no line row),
                  or 'crtstuff.c:?' where llvm has 'crtstuff.c:0' (the symbol's
                  STT_FILE name, no line row)
  B   no function: GNU '??' as the outermost name where llvm names the
                  symbol before the address (a PLT stub after _init)
  C   discriminator: GNU prints an inlined call's DW_AT_GNU_discriminator on
                  the caller's line, llvm does not (perf drops discriminators)
  D   outermost name: GNU the DWARF name, llvm the symbol table's
                  (foo.isra.0, foo.cold, an alias)
  E   file name:  GNU names another file of the unit on the same line number
                  (binutils 2.40 misreads GCC 12's DWARF 5 file tables); the
                  llvm file is confirmed by eu-addr2line, an independent reader
Any other difference fails.  Then every line where the perf texts differ
must be explained by such an address: perf script's by its ip, perf report's
by the words that differ (GNU's from GNU's answer, symdb's from llvm's).
"""
import glob
import os
import re
import subprocess
import sys

S = sys.argv[1]
A2L = os.path.join(S, "symdb-bin", "addr2line")
HEX = re.compile(rb"^ *(?:0[xX])?([0-9a-fA-F]+)$")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def requests():
    """file -> the addresses perf sent for it (both runs)."""
    out = {}
    for args in glob.glob(os.path.join(S, "*", "req.*.args")):
        f = open(args).read().strip()
        m = re.match(r"^-e (.*) -i -f$", f)
        if not m:
            fail("perf ran addr2line %r" % f)
        for line in open(args[:-5], "rb").read().split(b"\n"):
            h = HEX.match(line)
            if h:
                out.setdefault(m.group(1), set()).add(int(h.group(1), 16))
    return out


def answers(cmd, addrs, fmt="%x\n"):
    """addr -> answer lines, split at the -a header lines."""
    text = "".join(fmt % a for a in addrs).encode()
    p = subprocess.run(cmd, input=text, capture_output=True, timeout=600)
    res, cur = {}, None
    for line in p.stdout.decode(errors="replace").split("\n"):
        m = re.match(r"^0x([0-9a-f]+)$", line)
        if m:
            cur = int(m.group(1), 16)
            res[cur] = []
        elif cur is not None and line:
            res[cur].append(line)
    if set(res) != set(addrs):
        fail("%s: %d answers for %d addresses" % (cmd[0], len(res), len(addrs)))
    return res


def classify(gnu, llvm):
    """'4a', '4b', or None (not a documented class)."""
    if len(gnu) != len(llvm):
        return None
    kinds = set()
    for i, (g, l) in enumerate(zip(gnu, llvm)):
        if g == l:
            continue
        if i % 2 == 0:
            if i != len(gnu) - 2 or l == "??":
                return None  # an inlined frame's name, or llvm has none
            kinds.add("B" if g == "??" else "D")  # the outermost name
            continue
        if re.sub(r" \(discriminator \d+\)$", "", g) == re.sub(r" \(discriminator \d+\)$", "", l):
            kinds.add("C")  # a discriminator only: perf drops them
            continue
        gf, _, gl = g.rpartition(":")
        lf, _, ll = l.rpartition(":")
        if l == "??:0" and gl == "?" and gf in ("", "??"):
            kinds.add("A")
        elif gl == "?" and ll == "0" and gf == lf:
            kinds.add("A")  # the STT_FILE name (crtstuff.c), no line row
        elif gl == ll and gf != lf and gf not in ("", "??"):
            kinds.add("E")
        else:
            return None
    return "+".join(sorted(kinds)) if kinds else None


def eu_confirms(f, a, llvm, gnu):
    """Class E: every file:line where llvm and GNU differ is one that
    eu-addr2line (elfutils' own DWARF reader) also gives for the address."""
    p = subprocess.run(["eu-addr2line", "-e", f, "-i", "0x%x" % a], capture_output=True,
                       timeout=600)
    eu = set()
    for line in p.stdout.decode(errors="replace").split("\n"):
        m = re.match(r"^(.*?):(\d+)(?::\d+)?$", line)  # FILE:LINE[:COLUMN]
        if m:
            eu.add("%s:%s" % (os.path.basename(m.group(1)), m.group(2)))
    for i in range(1, len(llvm), 2):
        if llvm[i] != gnu[i]:
            fl, _, n = llvm[i].rpartition(":")
            if "%s:%s" % (os.path.basename(fl), n.split(" ")[0]) not in eu:
                return False
    return True


def main():
    reqs = requests()
    if not reqs:
        fail("no requests logged")
    diff = {}  # addr -> (file, gnu answer, symdb answer, class)
    total = 0
    for f, addrs in sorted(reqs.items()):
        addrs = sorted(addrs)
        total += len(addrs)
        gnu = answers(["addr2line", "-e", f, "-a", "-i", "-f"], addrs)
        mine = answers([A2L, "-e", f, "-a", "-i", "-f"], addrs)
        llvm = answers(["llvm-addr2line-14", "-e", f, "-a", "-i", "-f"], addrs)
        sym = answers(["llvm-symbolizer-14", "--obj=" + f, "--output-style=GNU", "-a", "-i",
                       "-f", "--no-demangle"], addrs, "0x%x\n")
        for a in addrs:
            if gnu[a] == mine[a]:
                continue
            if mine[a] != llvm[a] or mine[a] != sym[a]:
                fail("%s 0x%x: symdb %r, llvm-addr2line-14 %r, llvm-symbolizer-14 %r (GNU %r)" %
                     (f, a, mine[a], llvm[a], sym[a], gnu[a]))
            cls = classify(gnu[a], llvm[a])
            if not cls:
                fail("%s 0x%x: GNU %r vs llvm %r is no documented class" % (f, a, gnu[a], llvm[a]))
            if "E" in cls and not eu_confirms(f, a, llvm[a], gnu[a]):
                fail("%s 0x%x: GNU %r vs llvm %r: eu-addr2line does not confirm llvm's file" %
                     (f, a, gnu[a], llvm[a]))
            diff[a] = (f, gnu[a], mine[a], cls)
    classes = {}
    for a, (f, g, m, c) in sorted(diff.items()):
        if c not in classes:
            print("-- class %s, e.g. %s 0x%x: GNU %r, symdb and llvm %r" % (c, f, a, g, m))
        classes[c] = classes.get(c, 0) + 1
    print("-- %d addresses in %d files; GNU and symdb differ at %d: %s, each as llvm-symbolizer-14"
          % (total, len(reqs), len(diff), classes or "none"))
    check_text("script", diff, script_key)
    check_text("report", diff, report_key)


def words(line):
    return set(line.split())


def explained(gline, mline, diff, key):
    gw, mw = words(gline) - words(mline), words(mline) - words(gline)
    for a, (f, g, m, c) in diff.items():
        if key(gline, mline, a, g, m, gw, mw):
            return True
    return False


def srclines(answer):
    """The file:line words perf prints for an answer: basename:line."""
    out = set()
    for i, l in enumerate(answer):
        if i % 2 == 1:
            f, _, n = l.rpartition(":")
            out.add("%s:%s" % (os.path.basename(f), n if n != "?" else "0"))
            out.add("%s:%s" % (f, n if n != "?" else "0"))
    return out


def script_key(gline, mline, a, g, m, gw, mw):
    return True  # paired with the ip line below


def sym_offset(w, m):
    """perf report prints SYM+OFFSET as the srcline of an answer without a
    file (??:0): w is that, for answer m (class A: GNU prints ':?' there,
    which perf shows as ':0')."""
    return len(m) >= 2 and m[1] == "??:0" and re.fullmatch(re.escape(m[0]) + r"\+(0x)?[0-9a-f]+", w)


def report_key(gline, mline, a, g, m, gw, mw):
    return all(any(w.endswith(s) or s.endswith(w) for s in srclines(g)) for w in gw) and \
        all(any(w.endswith(s) or s.endswith(w) or w.endswith("[%x]" % a) for s in srclines(m))
            or sym_offset(w, m) for w in mw)


def ip_before(gnu, i):
    """The address of the ip line above GNU's line i ("\t ADDR SYM"), or None."""
    words = gnu[i - 1].split() if i else []
    try:
        return int(words[0], 16) if words else None
    except ValueError:
        return None


def no_srcline(gnu, i, line, diff):
    """perf script prints no srcline line at all for binutils' `??:?` (class
    A with file `??`: perf takes it as no answer and has no fallback), where
    it prints `DSO[ADDR]` for llvm's `??:0`: symdb's one extra line, before
    GNU's line i, right after the ip line of such an address."""
    a = ip_before(gnu, i)
    if a not in diff or "A" not in diff[a][3] or diff[a][1][-1] != "??:?":
        return False
    return line.strip().endswith("[%x]" % a)


def explained_line(what, gnu, i, g, m, diff, key):
    """Whether GNU's line i, g, and symdb's m in its place differ only
    where binutils is wrong."""
    if what == "script":
        # the ip line, then the srcline line: the address is the ip's
        return ip_before(gnu, i) in diff
    return explained(g, m, diff, key)


def check_text(what, diff, key):
    """The two perf texts, walked in step (linear: difflib took minutes on
    perf script's 80,000 lines): a line that differs must be one symdb
    answers where binutils is wrong, or symdb's one extra srcline line
    (no_srcline); anything else fails where it is."""
    gnu = [l for l in open(os.path.join(S, "gnu." + what)).read().split("\n")
           if not l.startswith("# (Tip:")]
    mine = [l for l in open(os.path.join(S, "mine." + what)).read().split("\n")
            if not l.startswith("# (Tip:")]
    i = j = n = 0
    while i < len(gnu) and j < len(mine):
        g, m = gnu[i], mine[j]
        if g == m:
            i += 1
            j += 1
            continue
        n += 1
        if what == "script" and j + 1 < len(mine) and mine[j + 1] == g and \
                no_srcline(gnu, i, m, diff):
            j += 1
            continue
        if not explained_line(what, gnu, i, g, m, diff, key):
            if gnu[i + 1:i + 2] == mine[j + 1:j + 2]:
                pass  # one line changed: the message below
            elif mine[j + 1:j + 2] == [g]:
                fail("perf %s: symdb has an extra line %d, %r, before GNU's line %d" %
                     (what, j + 1, m, i + 1))
            elif gnu[i + 1:i + 2] == [m]:
                fail("perf %s: symdb lacks GNU's line %d, %r (symdb line %d)" %
                     (what, i + 1, g, j + 1))
            fail("perf %s line %d: GNU %r, symdb %r (symdb line %d): no documented difference "
                 "explains it" % (what, i + 1, g, m, j + 1))
        i += 1
        j += 1
    if i < len(gnu) or j < len(mine):
        fail("perf %s: lines %d- (GNU) and %d- (symdb) do not pair up: %r vs %r" %
             (what, i + 1, j + 1, gnu[i:i + 3], mine[j:j + 3]))
    print("-- perf %s: %d lines, %d differ, each at an address where binutils is wrong" %
          (what, len(gnu), n))


main()
