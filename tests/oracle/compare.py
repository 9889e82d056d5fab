#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Oracle harness: `symdb query` must print exactly what llvm-symbolizer-14 prints.

For each binary given, this picks addresses from the binary's own ELF tables
(every symbol's start, middle, last byte and one-past-the-end, the byte before
it, the middle of every gap between symbols, addresses before the first and
after the last symbol, plus N random addresses inside the loadable segments
drawn with a fixed, printed seed), indexes the binary with `symdb build` into a
scratch database, feeds the same addresses (in a shuffled order, so the CLI's
sort-and-permute is exercised) to `symdb query --obj BIN` and to
`llvm-symbolizer-14 --obj BIN`, and requires byte-identical output in every
requested style.  On a mismatch it reruns both with --print-address, splits the
output per address and prints the first 20 differing addresses side by side.

The ELF reader here is deliberately independent of symdb's (plain struct
unpacking, ELF gABI "Sections" and "Program Header" chapters), so an indexer bug
cannot hide itself by also choosing the addresses.  Python standard library only.
In the sanitizer lane (SYMDB_TEST_SANITIZED set by CMake) llvm-symbolizer-14
is not run: symdb's run of the same requests must succeed without a sanitizer
report, and the plain lane made the comparison.
"""

import argparse
import glob
import os
import random
import re
import shutil
import struct
import subprocess
import sys

PT_LOAD = 1
PF_X = 1
SHT_SYMTAB = 2
SHT_DYNSYM = 11
SHN_UNDEF = 0
SHN_LORESERVE = 0xFF00


class Elf:
    """The parts of an ELF file the address picker needs."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF":
            raise ValueError("%s: not an ELF file" % path)
        self.is64 = d[4] == 2
        self.end = "<" if d[5] == 1 else ">"
        self.loads = []    # (vaddr, memsz, flags, offset, filesz)
        self.symbols = []  # (value, size) of defined symbols, in table order
        self._read_headers()

    def _unpack(self, fmt, off):
        return struct.unpack_from(self.end + fmt, self.data, off)

    def _read_headers(self):
        if self.is64:
            (_, _, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize,
             shnum, _) = self._unpack("HHIQQQIHHHHHH", 16)
        else:
            (_, _, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize,
             shnum, _) = self._unpack("HHIIIIIHHHHHH", 16)
        for i in range(phnum):
            off = phoff + i * phentsize
            if self.is64:
                p_type, p_flags, p_off, vaddr, _, filesz, memsz, _ = self._unpack("IIQQQQQQ", off)
            else:
                p_type, p_off, vaddr, _, filesz, memsz, p_flags, _ = self._unpack("IIIIIIII", off)
            if p_type == PT_LOAD:
                self.loads.append((vaddr, memsz, p_flags, p_off, filesz))
        sections = []
        for i in range(shnum if shoff else 0):
            off = shoff + i * shentsize
            if self.is64:
                _, sh_type, _, _, s_off, s_size, link, _, _, entsize = \
                    self._unpack("IIQQQQIIQQ", off)
            else:
                _, sh_type, _, _, s_off, s_size, link, _, _, entsize = \
                    self._unpack("IIIIIIIIII", off)
            sections.append((sh_type, s_off, s_size, entsize))
        # llvm-symbolizer uses .symtab when it has a symbol besides the null
        # one, else .dynsym (LLVM ObjectFile::symbols / computeSymbolSizes).
        for want in (SHT_SYMTAB, SHT_DYNSYM):
            tabs = [s for s in sections if s[0] == want and s[3] and s[2] > s[3]]
            if tabs:
                self._read_symbols(tabs[0])
                break

    def _read_symbols(self, sec):
        _, off, size, entsize = sec
        for i in range(1, size // entsize):
            o = off + i * entsize
            if self.is64:
                _, info, _, shndx, value, sz = self._unpack("IBBHQQ", o)
            else:
                _, value, sz, info, _, shndx = self._unpack("IIIBBH", o)
            # NOTYPE, OBJECT, FUNC, GNU_IFUNC (SPEC §7.2)
            if shndx != SHN_UNDEF and shndx < SHN_LORESERVE and (info & 0xF) in (0, 1, 2, 10):
                self.symbols.append((value, sz))


def pick_addresses(elf, nrandom, limit, rng, exhaustive=0):
    """Return the addresses to ask about, in a shuffled order, ~5 % repeated."""
    mask = (1 << 64) - 1 if elf.is64 else (1 << 32) - 1
    picked = set()
    spans = sorted(set(elf.symbols))
    for start, size in spans:
        for a in (start - 1, start, start + size // 2, start + size - 1, start + size):
            picked.add(a)
    # gaps between one symbol's end and the next symbol's start
    for (s0, z0), (s1, _) in zip(spans, spans[1:]):
        if s0 + z0 < s1:
            picked.add((s0 + z0 + s1) // 2)
    if spans:
        first = spans[0][0]
        last = max(s + z for s, z in spans)
        picked.update((0, 1, first - 16, first - 1, last, last + 1, last + 0x1000))
    segs = [(v, m) for v, m, fl, _, _ in elf.loads if fl & PF_X] or \
           [(v, m) for v, m, _, _, _ in elf.loads]
    for v, m, _, _, _ in elf.loads:
        picked.update((v - 1, v, v + m - 1, v + m))
    symbolic = sorted(a for a in picked if 0 <= a <= mask)
    if limit and len(symbolic) > limit - nrandom:
        symbolic = rng.sample(symbolic, max(0, limit - nrandom))
    picked = set(symbolic)
    total = sum(m for _, m in segs)
    if total <= exhaustive:
        # small image: every address of its executable segments
        for v, m in segs:
            picked.update(range(v, v + m))
    # With a cap, draw until the set holds exactly `limit` addresses (random
    # draws can repeat); without one, draw `nrandom` times.
    want = limit if limit else len(picked) + nrandom
    tries = 0
    while total and len(picked) < want and tries < 4 * want:
        tries += 1
        if not limit and tries > nrandom:
            break
        r = rng.randrange(total)
        for v, m in segs:
            if r < m:
                picked.add(v + r)
                break
            r -= m
    out = sorted(picked)
    # about 5 % repeats, so equal neighbours after sorting are exercised
    out += rng.sample(out, len(out) // 20)
    rng.shuffle(out)
    return out


LOAD_ADDRESS = 0x7f1234500000


def translate(elf, addrs, kind):
    """Express vaddrs as `kind` (SPEC §10).  Returns (symdb inputs, the vaddrs
    llvm-symbolizer gets); addresses the kind cannot express are dropped."""
    if kind == "vaddr":
        return addrs, addrs
    base = min(v for v, _, _, _, _ in elf.loads)
    ins, outs = [], []
    for a in addrs:
        if a < base:
            continue
        if kind == "offset":
            ins.append(a - base)
        elif kind == "runtime":
            ins.append(a - base + LOAD_ADDRESS)
        elif kind == "fileoff":
            seg = [(v, o) for v, _, _, o, fs in elf.loads if v <= a < v + fs]
            if not seg:
                continue
            f = a - seg[0][0] + seg[0][1]
            # the reverse mapping of SPEC §10: first segment in Vaddr order
            # whose file range holds f (which may not be the one we came from)
            v, o = [(v, o) for v, _, _, o, fs in sorted(elf.loads) if o <= f < o + fs][0]
            ins.append(f)
            a = f - o + v
        outs.append(a)
    return ins, outs


def run(cmd, stdin_bytes, env=None):
    p = subprocess.run(cmd, input=stdin_bytes, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=1800)
    return p.returncode, p.stdout, p.stderr


def split_by_address(out):
    """Split --print-address output into one chunk per input address."""
    chunks, cur = [], None
    for line in out.decode("utf-8", "replace").split("\n"):
        if line.startswith("0x") and all(c in "0123456789abcdef" for c in line[2:]):
            if cur is not None:
                chunks.append(cur)
            cur = [line]
        elif cur is not None:
            cur.append(line)
    if cur is not None:
        chunks.append(cur)
    return chunks


def explain(args, binary, style_args, stdin_bytes, env, llvm_stdin):
    """Rerun with --print-address and show the first 20 differing addresses."""
    if "--output-style=JSON" in style_args:  # one line per address already
        a = run([args.symdb, "query", "--obj", binary] + style_args + args.symdb_arg,
                stdin_bytes, env)[1]
        b = run([args.llvm, "--obj", binary] + style_args + args.llvm_arg, llvm_stdin)[1]
        ca = [[x] for x in a.decode("utf-8", "replace").splitlines()]
        cb = [[y] for y in b.decode("utf-8", "replace").splitlines()]
        # key = the "Address" field; ModuleName (the long path) is left out
        ca = [[c[0][:c[0].find('","')], re.sub(r'"ModuleName":"[^"]*",', "", c[0])] for c in ca]
        cb = [[c[0][:c[0].find('","')], re.sub(r'"ModuleName":"[^"]*",', "", c[0])] for c in cb]
    else:
        a = run([args.symdb, "query", "--obj", binary, "-a"] + style_args + args.symdb_arg,
                stdin_bytes, env)[1]
        b = run([args.llvm, "--obj", binary, "-a"] + style_args + args.llvm_arg, llvm_stdin)[1]
        ca, cb = split_by_address(a), split_by_address(b)
    shown = 0
    for i in range(max(len(ca), len(cb))):
        x = ca[i] if i < len(ca) else ["<missing>"]
        y = cb[i] if i < len(cb) else ["<missing>"]
        if x[1:] != y[1:]:
            print("  --- address %s (symdb input %s)" % (y[0] if y else "?", x[0] if x else "?"))
            print("      expected (llvm-symbolizer-14): %r" % "\n".join(y[1:]))
            print("      got      (symdb query)       : %r" % "\n".join(x[1:]))
            shown += 1
            if shown == 20:
                break
    if shown == 0:
        print("  (outputs differ only outside per-address blocks; first bytes:)")
        print("      expected: %r" % b[:300])
        print("      got     : %r" % a[:300])
    if len(ca) != len(cb):
        print("  address blocks: symdb %d, llvm-symbolizer %d" % (len(ca), len(cb)))


SANITIZER_MARKS = (b"AddressSanitizer", b"LeakSanitizer", b"runtime error:",
                   b"UndefinedBehaviorSanitizer")


def sanitized_check(binary, what, n, rc, out, err):
    """The sanitizer lane (SYMDB_TEST_SANITIZED): the plain lane compared
    these answers with llvm-symbolizer-14; here symdb's run must succeed and
    print answers, without a sanitizer report."""
    marks = [m.decode() for m in SANITIZER_MARKS if m in err]
    if rc != 0 or marks or not out:
        print("FAIL %s style %s: symdb exit %d, %d bytes%s: %s"
              % (binary, what, rc, len(out), ", " + marks[0] if marks else "",
                 err.decode(errors="replace")[-1500:]))
        return False
    print("ok   %s style %s: %d addresses answered, no sanitizer report (compared with "
          "llvm-symbolizer-14 in the plain lane)" % (binary, what, n))
    return True


def compare_binary(args, binary, env):
    seed = args.seed
    rng = random.Random(seed)
    elf = Elf(binary)
    mine_in, llvm_in = translate(elf, pick_addresses(elf, args.random, args.limit, rng,
                                                args.exhaustive),
                                 args.addr_kind)
    build = [args.symdb, "build"] + args.build_arg + [binary]
    rc, out, err = run(build, b"", env)
    if not elf.symbols and rc == 0 and b"(no symbols and no debug information" not in out:
        # An ELF with no symbols at all (e.g. a stripped executable whose
        # .dynsym holds only imports) is indexed all the same, and says so;
        # its answers are compared below like any other's (llvm-symbolizer
        # reads it as a valid object that knows no address).
        print("FAIL %s: no symbols: `symdb build` should say so: %r" % (binary, out[:300]))
        return False
    if rc != 0:
        print("FAIL %s: `%s` exited %d: %s" % (binary, " ".join(build), rc,
                                              err.decode(errors="replace").strip()))
        return False
    kind_args = []
    if args.addr_kind != "vaddr":
        kind_args = ["--addr-kind", args.addr_kind]
        if args.addr_kind == "runtime":
            kind_args += ["--load-address", "0x%x" % LOAD_ADDRESS]
    ok = True
    styles = [(s, len(mine_in)) for s in args.styles.split(",") if s]
    if args.json:
        styles.append(("JSON", min(args.json, len(mine_in))))
    for style, n in styles:
        sin = "".join("0x%x\n" % a for a in mine_in[:n]).encode()
        lin = "".join("0x%x\n" % a for a in llvm_in[:n]).encode()
        style_args = ["--output-style=" + style] + args.query_arg
        what = " ".join([style] + args.query_arg + kind_args)
        rc, mine, err = run([args.symdb, "query", "--obj", binary] + kind_args + style_args +
                            args.symdb_arg, sin, env)
        if os.environ.get("SYMDB_TEST_SANITIZED"):
            ok &= sanitized_check(binary, what, n, rc, mine, err)
            continue
        lrc, theirs, lerr = run([args.llvm, "--obj", binary] + style_args + args.llvm_arg, lin)
        if lrc != 0:
            print("ERROR %s: llvm-symbolizer exited %d: %s" % (binary, lrc, lerr.decode()))
            return False
        if rc != 0 or mine != theirs:
            ok = False
            print("FAIL %s style %s: symdb exit %d, %d vs %d bytes (seed %d)"
                  % (binary, what, rc, len(mine), len(theirs), seed))
            if err:
                print("  symdb stderr: %s" % err.decode(errors="replace").strip()[:500])
            explain(args, binary, kind_args + style_args, sin, env, lin)
        else:
            print("ok   %s style %s: %d addresses identical (seed %d)"
                  % (binary, what, n, seed))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--symdb", required=True, help="path of the symdb CLI")
    ap.add_argument("--llvm", default="llvm-symbolizer-14")
    ap.add_argument("--scratch", required=True, help="scratch dir (database lives here)")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--random", type=int, default=2000, help="random addresses per binary")
    ap.add_argument("--exhaustive", type=int, default=0, metavar="BYTES",
                    help="use every address of the executable segments when they "
                         "total at most BYTES")
    ap.add_argument("--limit", type=int, default=0, help="cap on addresses per binary")
    ap.add_argument("--styles", default="LLVM,GNU")
    ap.add_argument("--json", type=int, default=500, help="JSON on the first N addresses")
    ap.add_argument("--addr-kind", default="vaddr",
                    choices=("vaddr", "offset", "fileoff", "runtime"),
                    help="give symdb the addresses in this convention (SPEC §10); "
                         "llvm-symbolizer always gets the vaddrs")
    ap.add_argument("--build-arg", action="append", default=[])
    ap.add_argument("--query-arg", action="append", default=[])
    ap.add_argument("--symdb-arg", action="append", default=[],
                    help="an argument for symdb query only (--no-build)")
    ap.add_argument("--llvm-arg", action="append", default=[])
    ap.add_argument("binaries", nargs="+", help="files, or glob patterns expanded here")
    args = ap.parse_args()
    expanded = []
    for b in args.binaries:
        expanded += sorted(glob.glob(b)) if any(c in b for c in "*?[") else [b]
    if not expanded:
        print("no binaries match %s" % " ".join(args.binaries))
        return 1
    args.binaries = expanded

    for tool in (args.llvm, "strip"):
        if not shutil.which(tool):
            print("SKIP: %s not found" % tool)
            return 77
    os.makedirs(args.scratch, exist_ok=True)
    env = dict(os.environ)
    print("symdb oracle compare: seed %d, %d random addresses per binary, databases under %s"
          % (args.seed, args.random, args.scratch))
    failed = []
    for i, b in enumerate(args.binaries):
        # One database per binary: a .symtab and a .dynsym copy of one program
        # share a build-id, so in one database the second would be "already
        # indexed" and answered from the first one's tables.
        env["SYMDB_DIR"] = os.path.join(os.path.abspath(args.scratch),
                                        "db%d-%s" % (i, os.path.basename(b)))
        shutil.rmtree(env["SYMDB_DIR"], ignore_errors=True)
        if not compare_binary(args, b, env):
            failed.append(b)
    print("%d of %d binaries identical" % (len(args.binaries) - len(failed), len(args.binaries)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
