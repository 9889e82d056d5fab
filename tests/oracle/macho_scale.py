# SPDX-License-Identifier: MIT
"""A larger generated Mach-O program (imported by macho_test.py): 24 C and
C++ units of 60 functions each, with static and always_inline helpers,
templates, namespaces and cross-unit calls, linked for arm64 and x86_64,
dSYM'd, and compared with llvm-symbolizer-14 on 20000 random __text
addresses per architecture (and the whole symbol table's starts)."""
import hashlib
import os
import random
import shutil

import macho_test as mt

UNITS, FUNCS = 24, 60


def c_unit(u, rnd):
    out = ["/* generated */", "extern int sink%d;" % u, "int sink%d;" % u]
    for f in range(FUNCS):
        out.append("static inline __attribute__((always_inline)) int in%d_%d(int x)"
                   " { return x * %d + sink%d; }" % (u, f, rnd.randrange(3, 99), u))
    for f in range(FUNCS):
        body = " ".join("s += in%d_%d(s + %d);" % (u, rnd.randrange(FUNCS), i)
                        for i in range(rnd.randrange(1, 6)))
        call = ("s += f%d_%d(s);" % ((u + 1) % UNITS, f)) if f % 7 == 0 else ""
        out.append("int f%d_%d(int a);" % ((u + 1) % UNITS, f))
        out.append("__attribute__((noinline)) int f%d_%d(int a)\n{\n\tint s = a;\n"
                   "\tfor (int i = 0; i < a; i++) {\n\t\t%s\n\t}\n\t%s\n\treturn s;\n}"
                   % (u, f, body, call))
    return "\n".join(out) + "\n"


def cpp_unit(u, rnd):
    out = ["// generated", "namespace n%d {" % u,
           "template <typename T> struct Box { T v; __attribute__((noinline)) T get(T k)"
           " const { return v * k + %d; } };" % u]
    for f in range(FUNCS):
        out.append("inline int h%d(int x) { Box<int> b{x}; return b.get(%d) + x; }"
                   % (f, rnd.randrange(2, 50)))
        out.append("__attribute__((noinline)) long g%d(long a) { long s = a; for (int i = 0;"
                   " i < a; i++) s += h%d(i) + Box<long>{a}.get(i); return s; }"
                   % (f, f))
    out.append("}")
    out.append('extern "C" long cpp_unit%d(long a) { return n%d::g0(a) + n%d::g1(a); }'
               % (u, u, u))
    return "\n".join(out) + "\n"


def build(c, d):
    """Compile the program into D, unless D holds it from this generator
    already (the stamp is this file's hash: D may be another build tree's,
    tests/oracle/CMakeLists.txt)."""
    with open(__file__, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    stamp = os.path.join(d, ".done")
    if os.path.exists(stamp) and open(stamp).read() == digest:
        return d
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    rnd = random.Random(11)
    srcs = []
    for u in range(UNITS):
        cpp = u % 3 == 2
        p = os.path.join(d, "u%d.%s" % (u, "cpp" if cpp else "c"))
        with open(p, "w") as f:
            f.write(cpp_unit(u, rnd) if cpp else c_unit(u, rnd))
        srcs.append(p)
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write("int f0_0(int);\nint main(int c, char **v) { (void)v; return f0_0(c); }\n")
    srcs.append(os.path.join(d, "main.c"))
    for arch in mt.ARCHES:
        objs = []
        for s in srcs:
            o = s + "." + arch + ".o"
            mt.run(["clang", "-target", arch + "-apple-macos11", "-g", "-O2", "-c",
                    "-nostdinc++", s, "-o", o])
            objs.append(o)
        exe = os.path.join(d, "scale_" + arch)
        mt.run(["ld64.lld-14", "-arch", arch, "-platform_version", "macos", "11.0", "11.0",
                "-undefined", "dynamic_lookup", "-execute", "-e", "_main", "-o", exe] + objs)
        mt.run(["dsymutil", exe, "-o", exe + ".dSYM"], env=c.env)
    with open(stamp, "w") as f:
        f.write(digest)
    return d


def run_case(c, arg):
    d = build(c, arg or os.path.join(c.fx, "scale"))
    db = c.db("scale")
    shutil.rmtree(db, ignore_errors=True)
    bad = n = 0
    rnd = random.Random(5)
    for arch in mt.ARCHES:
        c.sym(db, "build", os.path.join(d, "scale_%s.dSYM" % arch))
        obj = os.path.join(d, "scale_%s.dSYM" % arch, "Contents", "Resources", "DWARF",
                           "scale_" + arch)
        lo, size = mt.text_range(obj)
        addrs = sorted(rnd.randrange(lo, lo + size) for _ in range(20000))
        nm = mt.run(["llvm-nm-14", "--defined-only", obj]).stdout.split("\n")
        addrs += [int(l.split()[0], 16) for l in nm if len(l.split()) >= 3]
        inp = mt.lines_of(addrs)
        for st in (mt.STYLES[0], mt.STYLES[2]):
            exp = mt.run(["llvm-symbolizer-14", "--obj", obj] + st, inp=inp).stdout
            got = c.sym(db, "query", "--obj", obj, *st, inp=inp).stdout
            bad += mt.compare(exp, got, "scale %s %s" % (arch, " ".join(st)))
            n += len(addrs)
    if bad:
        mt.die("%d comparisons differ" % bad)
    print("scale: %d units x 2 archs, %d lookups identical to llvm-symbolizer-14"
          % (UNITS + 1, n))
