#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Mach-O, dSYM and universal-file tests for symdb (label `macho`).

Fixtures are compiled at test time from mo_c.c, mo_cpp.cpp and mo_objc.m
with clang -target {arm64,x86_64}-apple-macos11, linked with ld64.lld-14
(executables at __TEXT 0x100000000, dylibs at __TEXT 0), given dSYMs by
dsymutil (with a `lipo` in PATH that runs llvm-lipo-14) and combined into
universal files and universal dSYMs with llvm-lipo-14.  Oracles:
llvm-symbolizer-14 (FILE:ARCH for universal files) and llvm-dwarfdump-14
--uuid; atos expectations are derived from the documented atos format.

usage: macho_test.py --symdb BIN --scratch DIR CASE [ARG]
cases: fixtures, uuid, oracle, fat, runtime, symtab, atos, symbolicate,
       synth32, fat64, scale, bad NAME
Exit status 0 pass, 1 fail, 77 skip (tools missing).
"""
import argparse
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE_SRC = os.path.join(os.path.dirname(HERE), "fixtures")  # mo_c.c, mo_cpp.cpp, mo_objc.m
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "corrupt"))  # macho_bad
ARCHES = ("arm64", "x86_64")
TOOLS = ("clang", "ld64.lld-14", "dsymutil", "llvm-lipo-14", "llvm-symbolizer-14",
         "llvm-dwarfdump-14", "llvm-otool-14")


def die(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, inp=None, env=None, check=True):
    p = subprocess.run(cmd, input=inp, capture_output=True, text=True, errors="replace",
                       env=env)
    if check and p.returncode != 0:
        die("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[:500]))
    return p


class Ctx:
    def __init__(self, symdb, scratch):
        self.symdb = symdb
        self.scratch = scratch
        self.fx = os.path.join(scratch, "fixtures")
        self.env = dict(os.environ)
        bindir = os.path.join(scratch, "bin")
        self.env["PATH"] = bindir + os.pathsep + self.env.get("PATH", "")

    def db(self, name):
        return os.path.join(self.scratch, "db-" + name)

    def sym(self, db, *args, inp=None, check=True, leak_scan=True):
        """symdb --db DB ARGS; leak_scan=False skips LeakSanitizer's exit
        scan (sanitizer builds: about half of each start) for the many runs
        of a random sweep that share their error paths."""
        env = self.env
        if not leak_scan:
            env = dict(env or os.environ)
            env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        return run([self.symdb, "--db", db] + list(args), inp=inp, check=check, env=env)

    def dwarf(self, name):
        """The DWARF file inside NAME.dSYM."""
        return os.path.join(self.fx, name + ".dSYM", "Contents", "Resources", "DWARF",
                            name)


# ---- fixtures ----------------------------------------------------------------

def need_tools():
    for t in TOOLS:
        if not shutil.which(t):
            print("SKIP: %s not found" % t)
            sys.exit(77)


def build_fixtures(c):
    """Compile, link, dsymutil and lipo every fixture once (idempotent)."""
    need_tools()
    stamp = os.path.join(c.fx, ".done")
    if os.path.exists(stamp):
        return
    os.makedirs(c.fx, exist_ok=True)
    bindir = os.path.join(c.scratch, "bin")
    os.makedirs(bindir, exist_ok=True)
    lipo = os.path.join(bindir, "lipo")
    with open(lipo, "w") as f:
        f.write('#!/bin/sh\nexec llvm-lipo-14 "$@"\n')
    os.chmod(lipo, 0o755)
    srcs = [("mo_c.c", []), ("mo_cpp.cpp", ["-nostdinc++"]), ("mo_objc.m", [])]
    for arch in ARCHES:
        objs = []
        for src, extra in srcs:
            o = os.path.join(c.fx, "%s_%s.o" % (src.split(".")[0], arch))
            run(["clang", "-target", arch + "-apple-macos11", "-g", "-O2", "-c"] + extra +
                [os.path.join(FIXTURE_SRC, src), "-o", o])
            objs.append(o)
        ld = ["ld64.lld-14", "-arch", arch, "-platform_version", "macos", "11.0", "11.0",
              "-undefined", "dynamic_lookup"]
        app = os.path.join(c.fx, "app_" + arch)
        lib = os.path.join(c.fx, "libmo_%s.dylib" % arch)
        run(ld + ["-execute", "-e", "_main", "-o", app] + objs)
        run(ld + ["-dylib", "-o", lib] + objs[1:])
        for b in (app, lib):
            run(["dsymutil", b, "-o", b + ".dSYM"], env=c.env)
    for base in ("app", "libmo"):
        sfx = ".dylib" if base == "libmo" else ""
        fat = os.path.join(c.fx, "%s_fat%s" % (base, sfx))
        run(["llvm-lipo-14", "-create"] +
            [os.path.join(c.fx, "%s_%s%s" % (base, a, sfx)) for a in ARCHES] +
            ["-output", fat])
        run(["dsymutil", fat, "-o", fat + ".dSYM"], env=c.env)
    # Symbol tables only: binaries in a directory without their dSYMs.
    strip_dir = os.path.join(c.fx, "nodsym")
    os.makedirs(strip_dir, exist_ok=True)
    for arch in ARCHES:
        for b in ("app_" + arch, "libmo_%s.dylib" % arch):
            shutil.copy(os.path.join(c.fx, b), os.path.join(strip_dir, b))
    open(stamp, "w").close()


THIN = ["app_arm64", "app_x86_64", "libmo_arm64.dylib", "libmo_x86_64.dylib"]


def text_range(path, arch=None):
    cmd = ["llvm-otool-14", "-l"] + (["-arch", arch] if arch else []) + [path]
    lines = run(cmd).stdout.split("\n")
    for i, l in enumerate(lines):
        if l.strip() == "sectname __text":
            addr = int(lines[i + 2].split()[1], 16)
            size = int(lines[i + 3].split()[1], 16)
            return addr, size
    die("no __text in " + path)


def text_base(path, arch=None):
    cmd = ["llvm-otool-14", "-l"] + (["-arch", arch] if arch else []) + [path]
    lines = run(cmd).stdout.split("\n")
    for i, l in enumerate(lines):
        if l.strip() == "segname __TEXT" and "cmd LC_SEGMENT" in lines[i - 2]:
            return int(lines[i + 1].split()[1], 16)
    die("no __TEXT in " + path)


def addresses(path, arch=None):
    lo, size = text_range(path, arch)
    return list(range(lo - 8, lo + size + 16))


def lines_of(addrs):
    return "".join("0x%x\n" % a for a in addrs)


def compare(expected, got, what):
    if expected == got:
        return 0
    el, gl = expected.split("\n"), got.split("\n")
    for i in range(min(len(el), len(gl))):
        if el[i] != gl[i]:
            print("DIFF %s at line %d:\n  llvm : %r\n  symdb: %r" % (what, i + 1, el[i], gl[i]))
            return 1
    print("DIFF %s: %d vs %d lines" % (what, len(el), len(gl)))
    return 1


STYLES = [[], ["--output-style=GNU", "-f", "-C"], ["--output-style=JSON"], ["--no-inlines"],
          ["--functions=short", "-s"]]


def build_all(c, db, inputs):
    for p in inputs:
        c.sym(db, "build", p)


# ---- cases -----------------------------------------------------------------

def case_uuid(c):
    """Every slice is indexed under its own UUID, as llvm-dwarfdump reports."""
    db = c.db("uuid")
    fat = os.path.join(c.fx, "app_fat.dSYM")
    build_all(c, db, [fat, os.path.join(c.fx, "libmo_fat.dylib")])
    listed = c.sym(db, "list").stdout
    want = 0
    for f in (c.dwarf("app_fat"), os.path.join(c.fx, "libmo_fat.dylib")):
        for line in run(["llvm-dwarfdump-14", "--uuid", f]).stdout.splitlines():
            m = re.match(r"UUID: ([0-9A-F-]+) \((\w+)\)", line)
            if not m:
                continue
            hexid = m.group(1).replace("-", "").lower()
            want += 1
            if hexid not in listed:
                die("%s %s (%s) not in symdb list:\n%s" % (f, hexid, m.group(2), listed))
            info = c.sym(db, "info", "%s:%s" % (f, m.group(2))).stdout
            if hexid not in info:
                die("symdb info %s:%s does not show %s" % (f, m.group(2), hexid))
    if want != 4:
        die("expected 4 slices from llvm-dwarfdump, saw %d" % want)
    print("uuid: 4 slices indexed under their llvm-dwarfdump UUIDs")


def case_oracle(c):
    """Every __text address of every thin dSYM, five output styles."""
    db = c.db("oracle")
    build_all(c, db, [os.path.join(c.fx, n + ".dSYM") for n in THIN])
    bad = n = 0
    for name in THIN:
        obj = c.dwarf(name)
        inp = lines_of(addresses(obj))
        for st in STYLES:
            exp = run(["llvm-symbolizer-14", "--obj", obj] + st, inp=inp).stdout
            got = c.sym(db, "query", "--obj", obj, *st, inp=inp).stdout
            bad += compare(exp, got, "%s %s" % (name, " ".join(st)))
            n += inp.count("\n")
    if bad:
        die("%d comparisons differ" % bad)
    print("oracle: %d address lookups identical to llvm-symbolizer-14" % n)


def case_fat(c):
    """Universal dSYM and binary: FILE:ARCH vs llvm-symbolizer FILE:ARCH, and
    --arch on the bundle directory."""
    db = c.db("fat")
    build_all(c, db, [os.path.join(c.fx, "app_fat.dSYM"),
                      os.path.join(c.fx, "libmo_fat.dylib.dSYM")])
    bad = n = 0
    for name in ("app_fat", "libmo_fat.dylib"):
        obj = c.dwarf(name)
        for arch in ARCHES:
            inp = lines_of(addresses(obj, arch))
            for st in STYLES:
                exp = run(["llvm-symbolizer-14", "--obj", obj + ":" + arch] + st,
                          inp=inp).stdout
                got = c.sym(db, "query", "--obj", obj + ":" + arch, *st, inp=inp).stdout
                bad += compare(exp, got, "%s:%s %s" % (name, arch, " ".join(st)))
                n += inp.count("\n")
            exp = run(["llvm-symbolizer-14", "--obj", obj, "--default-arch", arch,
                       "--output-style=JSON"], inp=inp).stdout
            got = c.sym(db, "query", "--obj", obj, "--default-arch", arch,
                        "--output-style=JSON", inp=inp).stdout
            bad += compare(exp, got, "%s --default-arch %s" % (name, arch))
            other = [a for a in ARCHES if a != arch][0]
            exp = run(["llvm-symbolizer-14", "--obj", obj + ":" + arch, "--default-arch", other],
                      inp=inp).stdout
            got = c.sym(db, "query", "--obj", obj + ":" + arch, "--default-arch", other,
                        inp=inp).stdout
            bad += compare(exp, got, "%s:%s beats --default-arch %s" % (name, arch, other))
            exp = run(["llvm-symbolizer-14", "--obj", obj + ":" + arch], inp=inp).stdout
            got = c.sym(db, "query", "--obj", os.path.join(c.fx, name + ".dSYM"),
                        "--arch", arch, inp=inp).stdout
            bad += compare(exp, got, "%s.dSYM --arch %s" % (name, arch))
            n += 2 * inp.count("\n")
    # A thin file ignores --default-arch, as llvm-symbolizer does (sanitizers
    # always pass one).
    c.sym(db, "build", os.path.join(c.fx, "app_arm64.dSYM"))
    obj = c.dwarf("app_arm64")
    inp = lines_of(addresses(obj)[:200])
    bad += compare(run(["llvm-symbolizer-14", "--obj", obj, "--default-arch", "x86_64"],
                       inp=inp).stdout,
                   c.sym(db, "query", "--obj", obj, "--default-arch", "x86_64", inp=inp).stdout,
                   "thin app_arm64 --default-arch x86_64")
    # A universal file whose slice cannot be chosen (no arch, an arch it
    # lacks, a one-slice universal file asked for another arch, a FILE:SUFFIX
    # whose suffix is no architecture: the whole string is the path): "??"
    # for each request, llvm-symbolizer-14's reason on stderr, its exit
    # status (symdb exited 2 with no answer).  JSON carries the reason.
    fat = c.dwarf("app_fat")
    one = os.path.join(c.scratch, "one_slice")
    run(["llvm-lipo-14", "-create", c.dwarf("app_arm64"), "-output", one])
    c.sym(db, "build", one)
    for args in (["--obj", fat], ["--obj", fat, "--default-arch", "ppc"],
                 ["--obj", fat + ":bogus"], ["--obj", one, "--default-arch", "x86_64"],
                 ["--obj", one], ["--obj", fat, "--output-style=JSON"],
                 ["--obj", one, "--default-arch", "arm64"]):
        want = run(["llvm-symbolizer-14"] + args, inp="0x100000000\n0x100000004\n", check=False)
        got = c.sym(db, "query", *args, inp="0x100000000\n0x100000004\n", check=False)
        if (got.returncode, got.stdout, got.stderr) != (want.returncode, want.stdout, want.stderr):
            die("%s: symdb exit %d %r %r, llvm-symbolizer-14 exit %d %r %r"
                % (" ".join(args), got.returncode, got.stdout, got.stderr, want.returncode,
                   want.stdout, want.stderr))
    # A Mach-O file without LC_UUID, which symdb does not index: "??" and
    # symdb's reason (it said llvm's "not recognized as a valid object
    # file", which is not true: llvm-symbolizer-14 reads it).
    import macho_bad  # noqa: E402 (imports this module)
    nou = os.path.join(c.scratch, "no_uuid")
    with open(nou, "wb") as f:
        f.write(macho_bad.case_no_uuid(c)[0])
    p = c.sym(db, "query", "--obj", nou, "0x100000000", check=False)
    if p.returncode != 1 or p.stdout != "??\n??:0:0\n\n" or \
            p.stderr != "symdb: %s: Mach-O image without LC_UUID\n" % nou:
        die("no LC_UUID: exit %d %r %r" % (p.returncode, p.stdout, p.stderr))
    conflict_one_line(c, db)
    bad_universal(c, db, fat)
    if bad:
        die("%d comparisons differ" % bad)
    print("fat: %d lookups identical; unchosen slices answered as llvm-symbolizer-14" % n)


def universal_of(path, thins):
    """A universal file of the thin files THINS, each slice labelled with
    its own header's cputype and cpusubtype, as llvm-lipo-14 -create lays
    them out (which refuses two of one architecture)."""
    datas = []
    for t in thins:
        with open(t, "rb") as f:
            datas.append(f.read())
    off, recs, body = 0x4000, b"", []
    for d in datas:
        cputype, cpusub = struct.unpack_from("<ii", d, 4)
        recs += struct.pack(">iiIII", cputype, cpusub, off, len(d), 14)
        body.append((off, d))
        off = (off + len(d) + 0x3fff) & ~0x3fff
    b = bytearray(off)
    head = struct.pack(">II", 0xcafebabe, len(datas)) + recs
    b[:len(head)] = head
    for o, d in body:
        b[o:o + len(d)] = d
    with open(path, "wb") as f:
        f.write(b)


def bad_universal(c, db, fat):
    """Universal files that llvm-symbolizer-14 refuses too, whose reason
    `query --no-build` gives as `build` gives it, one line, exit 1, and a
    first-sight `query` in llvm-symbolizer-14's form (its stdout, exit 0,
    one "LLVMSymbolizer: error reading file:" line) with that reason: one
    whose second slice is the first one's bytes (it printed the code's
    name, SYMDB_E_BAD_OBJECT, with --no-build, and llvm's "not recognized
    as a valid object file" on first sight), one with two x86_64 slices
    that carry one LC_UUID, the second from other contents (it printed
    advice to run `symdb build`, which then refused the file), and one
    with two x86_64 slices of two programs (it was indexed, and FILE:x86_64
    answered from the last slice)."""
    with open(fat, "rb") as f:
        b = bytearray(f.read())
    off0, size0 = struct.unpack_from(">II", b, 8 + 8)
    struct.pack_into(">II", b, 8 + 20 + 8, off0, size0)
    path = os.path.join(c.scratch, "fat_overlap")
    with open(path, "wb") as f:
        f.write(b)
    twice = os.path.join(c.scratch, "fat_twice")
    universal_of(twice, [os.path.join(c.fx, "nodsym", "app_x86_64"),
                         os.path.join(c.scratch, "app_changed")])  # (conflict_one_line's)
    # two x86_64 slices of two programs (two LC_UUIDs): symdb indexed both
    # and answered FILE:x86_64 from the last one
    builds = os.path.join(c.scratch, "fat_two_builds")
    universal_of(builds, [os.path.join(c.fx, "nodsym", "app_x86_64"),
                          os.path.join(c.fx, "nodsym", "libmo_x86_64.dylib")])
    one_arch = "slices 0 and 1 are of one architecture"
    for path, llvm_says, reason in ((path, "malformed", "overlap"),
                                    (twice, "contains two of the same architecture", one_arch),
                                    (builds, "contains two of the same architecture",
                                     one_arch)):
        llvm = run(["llvm-symbolizer-14", "--obj", path + ":x86_64", "0x100000000"],
                   check=False)
        if llvm_says not in llvm.stderr:
            die("%s: llvm-symbolizer-14 reads it: %r" % (path, llvm.stderr))
        fresh = c.db("fat_bad_fresh")
        shutil.rmtree(fresh, ignore_errors=True)
        built = c.sym(db, "build", path, check=False)
        if built.returncode != 1 or reason not in built.stderr or \
                len(built.stderr.splitlines()) != 1:
            die("%s: build exit %d %r" % (path, built.returncode, built.stderr))
        got = c.sym(db, "query", "--no-build", "--obj", path + ":x86_64", "0x100000000",
                    check=False)
        if (got.returncode, got.stderr) != (1, built.stderr):
            die("%s: build exit 1 %r; query --no-build exit %d %r"
                % (path, built.stderr, got.returncode, got.stderr))
        got = c.sym(fresh, "query", "--obj", path + ":x86_64", "0x100000000", check=False)
        err = got.stderr.splitlines()
        if (got.returncode, got.stdout) != (llvm.returncode, llvm.stdout) or len(err) != 1 \
                or not err[0].startswith("LLVMSymbolizer: error reading file: ") \
                or reason not in err[0]:
            die("%s: llvm-symbolizer-14 exit %d %r; first-sight query exit %d %r %r"
                % (path, llvm.returncode, llvm.stdout, got.returncode, got.stdout, got.stderr))


def conflict_one_line(c, db):
    """A thin file whose LC_UUID is indexed from other contents (one byte of
    __text changed): one verdict, the conflict on stderr, as for ELF (stdout
    said "skipped ... already indexed" besides)."""
    app = os.path.join(c.fx, "nodsym", "app_x86_64")  # (no dSYM beside it)
    other = os.path.join(c.scratch, "app_changed")
    shutil.copy(app, other)
    lc = run(["llvm-otool-14", "-l", app]).stdout.split("\n")
    at = lc.index([x for x in lc if x.split() == ["sectname", "__text"]][0])
    off = int([x for x in lc[at:] if x.split()[:1] == ["offset"]][0].split()[1])
    with open(other, "r+b") as f:
        f.seek(off)
        byte = f.read(1)
        f.seek(off)
        f.write(bytes([byte[0] ^ 0xff]))
    c.sym(db, "build", "--force", app)
    p = c.sym(db, "build", other, check=False)
    err = p.stderr.splitlines()
    if p.returncode != 1 or p.stdout != "" or len(err) != 1 or \
            "UUID" not in err[0] or "already indexed from different contents" not in err[0]:
        die("conflict: exit %d stdout %r stderr %r" % (p.returncode, p.stdout, p.stderr))


def case_fat_lipo(c):
    """Which slice of a universal file symdb answers with, checked apart from
    case_fat: llvm-lipo-14 -thin cuts each slice out and llvm-symbolizer-14
    reads only that thin copy, while symdb gets the universal file (indexed
    whole) with --default-arch ARCH, --arch ARCH or FILE:ARCH.  Binaries
    (symbol tables: copies without their .dSYM) and dSYMs (DWARF), in LLVM and
    GNU styles (JSON names the module, which differs by construction)."""
    bad = n = 0
    thin_dir = os.path.join(c.scratch, "fat_lipo")
    os.makedirs(thin_dir, exist_ok=True)
    for kind in ("binary", "dsym"):
        db = c.db("fat_lipo-" + kind)
        shutil.rmtree(db, ignore_errors=True)
        for name in ("app_fat", "libmo_fat.dylib"):
            if kind == "binary":  # a copy with no .dSYM beside it: symbol tables only
                fat = os.path.join(thin_dir, name)
                shutil.copyfile(os.path.join(c.fx, name), fat)
            else:
                fat = c.dwarf(name)
            c.sym(db, "build", fat)
            for arch in ARCHES:
                thin = os.path.join(thin_dir, "%s.%s.%s" % (name, kind, arch))
                run(["llvm-lipo-14", fat, "-thin", arch, "-output", thin])
                inp = lines_of(addresses(thin))
                for st in ([], ["--output-style=GNU"]):
                    exp = run(["llvm-symbolizer-14", "--obj", thin] + st, inp=inp).stdout
                    for how in (["--obj", fat, "--default-arch", arch], ["--obj", fat, "--arch", arch],
                                ["--obj", fat + ":" + arch]):
                        got = c.sym(db, "query", *how, *st, inp=inp).stdout
                        bad += compare(exp, got, "%s %s %s" % (kind, " ".join(how[2:]), " ".join(st)))
                        n += inp.count("\n")
    if bad:
        die("%d comparisons differ" % bad)
    print("fat_lipo: %d lookups identical to llvm-symbolizer-14 on the thin slices" % n)


def case_runtime(c):
    """Runtime addresses with a random load address give the vaddr answers."""
    db = c.db("runtime")
    build_all(c, db, [os.path.join(c.fx, n + ".dSYM") for n in THIN])
    rnd = random.Random(4)
    bad = 0
    for name in THIN:
        obj = c.dwarf(name)
        base = text_base(obj)
        load = rnd.randrange(0x100000000, 0x200000000) & ~0x3fff
        addrs = addresses(obj)
        exp = c.sym(db, "query", "--obj", obj, inp=lines_of(addrs)).stdout
        rt = [a - base + load for a in addrs]
        got = c.sym(db, "query", "--obj", obj, "--addr-kind", "runtime",
                    "--load-address", "0x%x" % load, inp=lines_of(rt)).stdout
        bad += compare(exp, got, "%s load 0x%x" % (name, load))
    if bad:
        die("runtime addresses differ")
    print("runtime: 4 images, random load addresses, identical")


def case_symtab(c):
    """Binaries without their dSYM: symbol tables only, vs llvm-symbolizer."""
    db = c.db("symtab")
    d = os.path.join(c.fx, "nodsym")
    bad = n = 0
    for name in THIN:
        obj = os.path.join(d, name)
        c.sym(db, "build", obj)
        inp = lines_of(addresses(obj) + [0x100008008, 0x100008010, 0x0, 0x10])
        for st in STYLES[:4]:
            exp = run(["llvm-symbolizer-14", "--obj", obj] + st, inp=inp).stdout
            got = c.sym(db, "query", "--obj", obj, *st, inp=inp).stdout
            bad += compare(exp, got, "%s %s" % (name, " ".join(st)))
            n += inp.count("\n")
    # The dSYM indexed after its binary replaces the symbol-table-only index.
    c.sym(db, "build", os.path.join(c.fx, "app_arm64.dSYM"))
    obj = c.dwarf("app_arm64")
    inp = lines_of(addresses(obj))
    bad += compare(run(["llvm-symbolizer-14", "--obj", obj], inp=inp).stdout,
                   c.sym(db, "query", "--obj", obj, inp=inp).stdout, "dSYM after binary")
    if bad:
        die("%d comparisons differ" % bad)
    print("symtab: %d lookups identical; dSYM upgrades a symbol-table-only index" % n)


def atos_expect(frames, image, addr, sym, inline):
    """The documented atos format from llvm-symbolizer's frames.

    frames: [(function, file, line)] innermost first (llvm-symbolizer -i -C
    with --functions=linkage); sym: (name, start) from llvm-symbolizer's
    symbol-table answer (JSON StartAddress of the outermost frame)."""
    out = []
    if frames[-1][0] in ("??", "") and not sym:
        return ["0x%x" % addr]
    chosen = frames if inline else frames[-1:]
    for i, (fn, path, line) in enumerate(chosen):
        if line:
            out.append("%s (in %s) (%s:%d)" % (fn, image, os.path.basename(path), line))
        else:
            out.append("%s (in %s) + %d" % (fn, image, addr - sym[1]))
    return out


def llvm_frames(obj, addrs):
    p = run(["llvm-symbolizer-14", "--obj", obj, "--output-style=JSON", "-i", "-C"],
            inp=lines_of(addrs))
    res = []
    for line in p.stdout.splitlines():
        j = json.loads(line)
        fr = [(f["FunctionName"], f["FileName"], f["Line"]) for f in j["Symbol"]]
        start = j["Symbol"][-1].get("StartAddress", "")
        res.append((fr, int(start, 16) if start else None))
    return res


def case_atos(c):
    """--output-style=atos: golden lines from the source, then every address
    against the documented format applied to llvm-symbolizer's frames."""
    db = c.db("atos")
    build_all(c, db, [os.path.join(c.fx, n + ".dSYM") for n in THIN])
    obj = c.dwarf("app_arm64")
    nm = run(["llvm-nm-14", obj]).stdout
    sym = {}
    for l in nm.splitlines():
        m = re.match(r"([0-9a-f]+) \w (.*)$", l)
        if m:
            sym[m.group(2)] = int(m.group(1), 16)
    # Golden: written from mo_objc.m / mo_c.c line numbers and atos(1).
    golden = [
        (sym["+[Counter scaled:by:]"], "+[Counter scaled:by:] (in app_arm64) (mo_objc.m:14)"),
        (sym["-[Counter bump:]"], "-[Counter bump:] (in app_arm64) (mo_objc.m:18)"),
        (sym["_objc_entry"] + 4, "objc_entry (in app_arm64) (mo_objc.m:25)"),
        (sym["__ZN3geo4walkEPKNS_5PointEi"],
         "geo::walk(geo::Point const*, int) (in app_arm64) (mo_cpp.cpp:13)"),
        (sym["_counter"], "counter (in app_arm64) + 0"),
        (sym["_counter"] + 2, "counter (in app_arm64) + 2"),
        (0x10, "0x10"),
    ]
    load = 0x104a8c000
    for addr, want in golden:
        rt = addr - 0x100000000 + load
        got = c.sym(db, "query", "--obj", obj, "--output-style=atos", "--addr-kind", "runtime",
                    "--load-address", "0x%x" % load, "0x%x" % rt).stdout.rstrip("\n")
        want = want.replace("0x10", "0x%x" % rt) if want == "0x10" else want
        if got != want:
            die("atos golden 0x%x: want %r got %r" % (addr, want, got))
    # Golden inline chain (atos -i): mix() inlined into compute() at mo_c.c:22,
    # its body at mo_c.c:8; plain atos prints only the outermost frame.
    lo, size = text_range(obj)
    hit = None
    for a, (frames, _s) in zip(range(sym["_compute"], sym["_compute"] + 0x80, 4),
                               llvm_frames(obj, range(sym["_compute"], sym["_compute"] + 0x80, 4))):
        if [f[0] for f in frames] == ["mix", "compute"]:
            hit = a
            break
    if hit is None:
        die("no address of compute() with mix() inlined")
    got = c.sym(db, "query", "--obj", obj, "--output-style=atos", "-i", "0x%x" % hit).stdout
    if got != "mix (in app_arm64) (mo_c.c:8)\ncompute (in app_arm64) (mo_c.c:22)\n":
        die("atos -i golden: %r" % got)
    got = c.sym(db, "query", "--obj", obj, "--output-style=atos", "0x%x" % hit).stdout
    if got != "compute (in app_arm64) (mo_c.c:22)\n":
        die("atos golden (outermost only): %r" % got)
    # Symbol-table fallback: "+ offset" from the binary without its dSYM.
    stripped = os.path.join(c.fx, "nodsym", "app_arm64")
    dbs = c.db("atos-symtab")
    c.sym(dbs, "build", stripped)
    got = c.sym(dbs, "query", "--obj", stripped, "--output-style=atos",
                "0x%x" % (sym["_compute"] + 8)).stdout
    if got != "compute (in app_arm64) + 8\n":
        die("atos symtab: %r" % got)
    # Every address, with and without -i.
    bad = n = 0
    for name in THIN:
        obj = c.dwarf(name)
        image = name
        addrs = addresses(obj)
        fr = llvm_frames(obj, addrs)
        for inline in (0, 1):
            exp = []
            for a, (frames, start) in zip(addrs, fr):
                exp += atos_expect(frames, image, a, (None, start) if start is not None
                                   else None, inline)
            got = c.sym(db, "query", "--obj", obj, "--output-style=atos",
                        *(["-i"] if inline else []), inp=lines_of(addrs)).stdout
            bad += compare("\n".join(exp) + "\n", got, "atos %s -i=%d" % (name, inline))
            n += len(addrs)
    if bad:
        die("%d atos comparisons differ" % bad)
    print("atos: %d golden lines, %d addresses in the documented format" % (len(golden) + 4, n))


def case_api(c):
    """tests/unit/test_macho_api.c against the universal fixtures."""
    exe = os.environ.get("SYMDB_MACHO_API")
    if not exe:
        die("SYMDB_MACHO_API is not set")
    fat = c.dwarf("app_fat")
    ids = {}
    for line in run(["llvm-dwarfdump-14", "--uuid", fat]).stdout.splitlines():
        m = re.match(r"UUID: ([0-9A-F-]+) \((\w+)\)", line)
        ids[m.group(2)] = m.group(1).replace("-", "").lower()
    db = c.db("api")
    p = run([exe, db, fat, os.path.join(c.fx, "app_fat.dSYM"),
             os.path.join(c.fx, "libmo_arm64.dylib"), ids["x86_64"], ids["arm64"]],
            check=False)
    if p.returncode != 0:
        die("test_macho_api: %s" % p.stderr)
    print("api: symdb_file_uuids, builder nimages, resolve per slice")


def case_first_sight(c):
    """`symdb query` indexes a Mach-O file its database lacks on first sight,
    as it does an ELF file (it said "not indexed; run 'symdb build FILE'
    first" and answered ??): thin binaries with their dSYM beside them and
    without (symbol table only), universal files by FILE:ARCH with their
    universal dSYM, .dSYM bundles; and a thin or universal binary first
    queried before dsymutil ran takes its dSYM at the next query once it
    is made.  Every answer as llvm-symbolizer-14's, nothing on stderr."""
    bad = n = 0
    # (the copies without dSYM and the universal files' slices have the thin
    # files' LC_UUIDs: each set gets its own database, so that each is first
    # seen, and one with the DWARF does not answer the copies with lines)
    sets = [("first_sight_nodsym", [(os.path.join(c.fx, "nodsym", name), None) for name in THIN]),
            ("first_sight_fat", [(os.path.join(c.fx, name), arch)
                                 for name in ("app_fat", "libmo_fat.dylib") for arch in ARCHES]),
            ("first_sight", [(os.path.join(c.fx, name), None) for name in THIN])]

    def same(obj, arch, what, oracle=None, flag=False):
        """symdb query --obj OBJ:ARCH (flag: --obj OBJ --arch ARCH) against
        llvm-symbolizer-14 --obj ORACLE:ARCH (--default-arch ARCH), ORACLE
        being OBJ unless given, in LLVM and JSON styles."""
        oracle = oracle or obj
        spec = obj + ":" + arch if arch and not flag else obj
        inp = lines_of(addresses(oracle, arch)[::7])
        k = 0
        for st in ([], ["--output-style=JSON"]):
            want = ["--obj", oracle + ":" + arch if arch and not flag else oracle]
            want += ["--default-arch", arch] if flag else []
            exp = run(["llvm-symbolizer-14"] + want + st, inp=inp).stdout
            if oracle != obj:  # JSON's ModuleName: the object as named
                exp = exp.replace(json.dumps(oracle)[1:-1], json.dumps(obj)[1:-1])
            got = c.sym(db, "query", "--obj", spec, *(["--arch", arch] if flag else []), *st,
                        inp=inp)
            if got.stderr:
                die("%s %s: stderr %r" % (what, spec, got.stderr))
            k += compare(exp, got.stdout, "%s %s %s" % (what, spec, " ".join(st)))
        return k, 2 * inp.count("\n")

    for name, objs in sets:
        db = c.db(name)
        shutil.rmtree(db, ignore_errors=True)
        for obj, arch in objs:
            k, m = same(obj, arch, "first sight")
            bad, n = bad + k, n + m
        listed = c.sym(db, "list").stdout
        if len(listed.splitlines()) != 4:
            die("%s: expected 4 images listed after first sight, got:\n%s" % (name, listed))
    # .dSYM bundles named as the object (thin; universal by --arch, whose
    # other slice is indexed already, and by BUNDLE:ARCH), which `symdb
    # build BUNDLE` indexes (query said "not indexed; run 'symdb build
    # BUNDLE' first").  llvm-symbolizer-14 reads no directory ("Is a
    # directory"): the oracle reads the bundle's DWARF file, as symdb does.
    db = c.db("first_sight_dsym")
    shutil.rmtree(db, ignore_errors=True)
    for name, arch, flag in (("app_arm64", None, False), ("app_fat", "x86_64", True),
                             ("libmo_fat.dylib", "arm64", False)):
        k, m = same(os.path.join(c.fx, name + ".dSYM"), arch, "first sight of a bundle",
                    oracle=c.dwarf(name), flag=flag)
        bad, n = bad + k, n + m
    listed = c.sym(db, "list").stdout
    if len(listed.splitlines()) != 4:
        die("first_sight_dsym: expected 4 images listed after first sight, got:\n" + listed)
    # A thin and a universal binary first queried before dsymutil ran (a
    # universal one kept its symbol-table-only index after: ?? for lines).
    late = os.path.join(c.scratch, "late")
    shutil.rmtree(late, ignore_errors=True)
    os.makedirs(late)
    for name, arches in (("app_arm64", [None]), ("app_fat", ARCHES)):
        app = os.path.join(late, name)
        shutil.copy(os.path.join(c.fx, name), app)
        db = c.db("first_sight_late_" + name)
        shutil.rmtree(db, ignore_errors=True)
        before = {}
        for arch in arches:
            k, m = same(app, arch, "before dsymutil")
            bad, n = bad + k, n + m
            before[arch] = c.sym(db, "query", "--obj", app + (":" + arch if arch else ""),
                                 inp=lines_of(addresses(app, arch)[::7])).stdout
        run(["dsymutil", app], env=c.env)
        for arch in arches:
            k, m = same(app, arch, "after dsymutil")
            bad, n = bad + k, n + m
            after = c.sym(db, "query", "--obj", app + (":" + arch if arch else ""),
                          inp=lines_of(addresses(app, arch)[::7])).stdout
            if before[arch] == after or ".c:" not in after:
                die("%s:%s: the dSYM made after the first query brought no line" % (name, arch))
    if bad:
        die("%d comparisons differ" % bad)
    print("first_sight: %d lookups identical to llvm-symbolizer-14, all indexed by query" % n)


CASES = {"api": case_api, "uuid": case_uuid, "oracle": case_oracle, "fat": case_fat, "fat_lipo": case_fat_lipo,
         "runtime": case_runtime,
         "symtab": case_symtab, "atos": case_atos, "first_sight": case_first_sight}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symdb", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("case")
    ap.add_argument("arg", nargs="?")
    a = ap.parse_args()
    c = Ctx(os.path.abspath(a.symdb), os.path.abspath(a.scratch))
    os.makedirs(c.scratch, exist_ok=True)
    build_fixtures(c)
    if a.case == "fixtures":
        print("fixtures built in " + c.fx)
        return
    if a.case == "bad":
        import macho_bad
        macho_bad.run_case(c, a.arg)
        return
    if a.case == "scale":
        import macho_scale
        macho_scale.run_case(c, a.arg)
        return
    if a.case == "fat64":
        import macho_synth
        macho_synth.run_fat64(c, a.arg)
        return
    if a.case == "synth32":
        import macho_synth
        macho_synth.run_case(c, a.arg)
        return
    if a.case == "symbolicate":
        import macho_crash
        macho_crash.run_case(c, a.arg)
        return
    for d in [c.db(a.case), c.db(a.case + "-symtab")]:
        shutil.rmtree(d, ignore_errors=True)
    CASES[a.case](c)


if __name__ == "__main__":
    main()
