#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dwarf_dies.py SYMDB SCRATCH: DIEs that cannot be walked, in a unit whose
line table is intact.  A C program (an inlined helper, libc calls) compiled
-O2 -g as DWARF 4 and 5; each case patches one value:
  sibling_self   a DW_AT_sibling naming its own DIE (libdwarf's sibling
                 step then gives the DIE back: the indexer looped until its
                 120 s limit)
  sibling_back   a DW_AT_sibling naming an earlier DIE (the unit's first)
  bad_form       an abbreviation's DW_FORM made 0x7f, which does not exist
Each must index within seconds (--timeout 20) as partial (symdb info:
PARTIAL, one unit skipped), and `symdb query --no-inlines` must print what
`llvm-symbolizer-14 --no-inlines` prints for the start and middle of every
function: LLVM reads .debug_line apart from the DIEs (and ignores
DW_AT_sibling), so file:line survives there; --no-inlines because LLVM
still walks the DIEs that symdb skips.  Before, sibling_self hung and the
others answered ??:0 (the unit's lines dropped).
Offsets come from llvm-dwarfdump-14 -v; each patch is checked by reading
the patched file back with it."""
import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import patch_elf  # noqa: E402  (section: a section's file offset and size)

SRC = r'''
#include <stdio.h>
#include <stdlib.h>
static inline int sq(int v) { return v * v; }
__attribute__((noinline)) int foo(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }
__attribute__((noinline)) long bar(const char *s) { return strtol(s, NULL, 10) + foo((int)*s); }
int main(int argc, char **argv) { printf("%d %ld\n", foo(argc), bar(argv[0])); return 0; }
'''


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def uleb(b, i):
    v = shift = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return v, i


def dies_with_sibling(path):
    """(DIE offset, next DIE offset, sibling value) of each DIE that has a
    DW_AT_sibling, section offsets, from llvm-dwarfdump -v."""
    out = run(["llvm-dwarfdump-14", "--debug-info", "-v", path], check=True).stdout
    dies, cur = [], None
    offs = []
    for line in out.splitlines():
        m = re.match(r"^0x([0-9a-f]+):\s+(DW_TAG_\w+|NULL)", line)
        if m:
            offs.append(int(m.group(1), 16))
            cur = offs[-1]
            continue
        m = re.search(r"DW_AT_sibling \[DW_FORM_ref4\]\s+\(cu \+ 0x([0-9a-f]+)", line)
        if m and cur is not None:
            dies.append([cur, None, int(m.group(1), 16)])
    for d in dies:
        later = [o for o in offs if o > d[0]]
        d[1] = later[0] if later else None
    return [tuple(d) for d in dies if d[1] is not None]


def patch_sibling(src, dst, to):
    """Sets the first DW_AT_sibling (ref4) to `to` (a function of the DIE's
    unit-relative offset); returns a description."""
    data = bytearray(open(src, "rb").read())
    start, _ = patch_elf.section(data, ".debug_info")
    for die, nxt, val in dies_with_sibling(src):
        raw = struct.pack("<I", val)
        body = bytes(data[start + die:start + nxt])
        if body.count(raw) != 1:
            continue  # ambiguous: another DIE
        rel = die - 0  # units start at 0 in these single-unit programs
        new = to(rel)
        at = start + die + body.index(raw)
        data[at:at + 4] = struct.pack("<I", new)
        open(dst, "wb").write(data)
        got = [v for d, _, v in dies_with_sibling(dst) if d == die]
        if got != [new]:
            raise SystemExit(f"patch of DIE 0x{die:x} not read back: {got}")
        return f"DIE 0x{die:x}: DW_AT_sibling 0x{val:x} -> 0x{new:x}"
    raise SystemExit("no DW_AT_sibling to patch")


def patch_form(src, dst):
    """Makes the form of the first DW_AT_name/DW_FORM_strp pair of an
    abbreviation with children 0x7f (no such form)."""
    data = bytearray(open(src, "rb").read())
    start, size = patch_elf.section(data, ".debug_abbrev")
    b = bytes(data[start:start + size])
    i = 0
    while i < len(b):
        code, i = uleb(b, i)
        if code == 0:
            continue
        tag, i = uleb(b, i)
        i += 1  # children
        while True:
            at_pos = i
            attr, i = uleb(b, i)
            form_pos = i
            form, i = uleb(b, i)
            if form == 0x21:  # DW_FORM_implicit_const carries a value
                _, i = uleb(b, i)
            if attr == 0 and form == 0:
                break
            if tag == 0x2E and attr == 0x03 and form == 0x0E and i - form_pos == 1:
                data[start + form_pos] = 0x7F
                open(dst, "wb").write(data)
                return f"abbreviation {code} (subprogram): DW_AT_name form 0x0e -> 0x7f"
            del at_pos
    raise SystemExit("no subprogram abbreviation with a DW_FORM_strp name")


def functions(path):
    out = run(["nm", "-S", "--defined-only", path], check=True).stdout
    addrs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT":
            a, n = int(f[0], 16), int(f[1], 16)
            addrs += [a, a + n // 2]
    return sorted(set(addrs))


def main():
    symdb, scratch = sys.argv[1], sys.argv[2]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    with open(os.path.join(scratch, "p.c"), "w") as f:
        f.write(SRC)
    fails = 0
    for ver in (4, 5):
        base = os.path.join(scratch, f"base{ver}")
        run(["gcc", "-O2", "-g", f"-gdwarf-{ver}", "-o", base, os.path.join(scratch, "p.c")],
            check=True)
        cases = {
            "sibling_self": lambda s, d: patch_sibling(s, d, lambda rel: rel),
            "sibling_back": lambda s, d: patch_sibling(s, d, lambda rel: 0xB if ver == 4 else 0xC),
            "bad_form": patch_form,
        }
        addrs = functions(base)
        inp = "".join(f"0x{a:x}\n" for a in addrs)
        for name, fn in cases.items():
            bad = os.path.join(scratch, f"{name}.dw{ver}")
            what = fn(base, bad)
            db = os.path.join(scratch, f"db.{name}.{ver}")
            try:
                p = run([symdb, "--db", db, "build", "--timeout", "20", bad], timeout=60)
            except subprocess.TimeoutExpired:
                print(f"FAIL {name} DWARF {ver}: build did not end within 60 s ({what})")
                fails += 1
                continue
            if p.returncode != 0:
                print(f"FAIL {name} DWARF {ver}: build exit {p.returncode}: {p.stderr.strip()}")
                fails += 1
                continue
            info = run([symdb, "--db", db, "info", bad]).stdout
            if "PARTIAL" not in info:
                print(f"FAIL {name} DWARF {ver}: not flagged PARTIAL ({what})")
                fails += 1
            got = run([symdb, "--db", db, "query", "--no-build", "--no-inlines", "--obj", bad],
                      input=inp).stdout
            want = run(["llvm-symbolizer-14", "--no-inlines", "--obj", bad], input=inp).stdout
            if got != want:
                print(f"FAIL {name} DWARF {ver}: answers differ from llvm-symbolizer-14 ({what})")
                for g, w in zip(got.splitlines(), want.splitlines()):
                    if g != w:
                        print(f"  symdb {g!r}, llvm {w!r}")
                        break
                fails += 1
                continue
            print(f"ok   {name} DWARF {ver}: {what}; {len(addrs)} addresses as llvm-symbolizer-14")
    return 1 if fails else 0


sys.exit(main())
