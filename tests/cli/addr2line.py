#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""symdb addr2line against its oracles (tests/cli/addr2line*.sh run it).

  oracle  every combination of -a -f -i -C -p -s over many addresses of
          DWARF fixtures and libpython: stdin and argument answers byte for
          byte those of llvm-addr2line-14; lines that are not addresses
          (perf's ',' end marker, junk, symbol names) answered as GNU
          addr2line (binutils) answers them; GNU's option errors.
  pipe    a client that writes one request (perf 6.1's 'ADDR\\n,\\n') and
          reads its whole answer before writing the next, with a timeout on
          every read: no request may block.

In the sanitizer lane (SYMDB_TEST_SANITIZED set by CMake) the option-set sweep
of `oracle` runs symdb alone (each answer must exit 0 with one answer per
address and no sanitizer report): the plain lane compared the same runs with
llvm-addr2line-14.  The non-address lines go to symdb there only in streams,
two per option set (after real addresses, answer lines counted against GNU's,
and alone), not one process per line compared with GNU's answer as in the
plain lane.  Everything else is compared in both lanes.

Usage: addr2line.py MODE SYMDB SCRATCH FILE...  (the database is $SYMDB_DIR)
"""
import itertools
import os
import random
import select
import subprocess
import sys
import time

MODE, SYMDB, SCRATCH = sys.argv[1], sys.argv[2], sys.argv[3]
FILES = [f for f in sys.argv[4:] if os.path.isfile(f)]
LLVM = "llvm-addr2line-14"
GNU = "addr2line"
TIMEOUT = 120


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def a2l_cmd():
    """symdb run under the name addr2line, through a symlink."""
    d = os.path.join(SCRATCH, "bin")
    os.makedirs(d, exist_ok=True)
    link = os.path.join(d, "addr2line")
    if not os.path.islink(link):
        os.symlink(SYMDB, link)
    return link


def run(cmd, text=None):
    p = subprocess.run(cmd, input=text, capture_output=True, timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def functions(path):
    """Start addresses of the defined functions (llvm-nm-14)."""
    out = subprocess.run(["llvm-nm-14", "--defined-only", "-n", path],
                         capture_output=True, text=True).stdout
    starts = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] in "tTwW":
            starts.add(int(f[0], 16))
    return sorted(starts)


def addresses(path, n, rng):
    """n addresses: function starts and points inside functions."""
    starts = functions(path)
    if not starts:
        return []
    picks = rng.sample(starts, min(len(starts), n // 2))
    out = []
    for s in picks:
        out.append(s)
        out.append(s + rng.choice([1, 2, 4, 7, 16, 33, 64, 130]))
    return out[:n]


def spell(a, rng):
    """An address line as GNU and llvm-addr2line both read it."""
    return rng.choice(["%x" % a, "0x%x" % a, "%016x" % a, "0X%X" % a, " %x" % a,
                       "%x trailing words" % a])


def compare_addresses(a2l, files, rng):
    combos = [c for r in range(0, 7) for c in itertools.combinations("afiCps", r)]
    checked = 0
    for path in files:
        addrs = addresses(path, 400 if "libpython" in path else 160, rng)
        if not addrs:
            fail("%s: no functions found" % path)
        lines = "".join(spell(a, rng) + "\n" for a in addrs).encode()
        for combo in combos:
            opts = ["-" + "".join(combo)] if combo else []
            mine = run([a2l, "-e", path] + opts, lines)
            if SANITIZED:
                sanitized_check(path, opts, mine, len(addrs))
                checked += len(addrs)
                continue
            ref = run([LLVM, "-e", path] + opts, lines)
            if mine[0] != 0 or mine[1] != ref[1]:
                diff_lines(path, opts, mine, ref)
            checked += len(addrs)
        # addresses as arguments, a few combinations
        args = ["%x" % a for a in addrs[:40]]
        for opts in ([], ["-f", "-i"], ["-a", "-p", "-f", "-C", "-s"]):
            mine = run([a2l, "-e", path] + opts + args)
            ref = run([LLVM, "-e", path] + opts + args)
            if mine[0] != 0 or mine[1] != ref[1]:
                diff_lines(path, opts + ["(arguments)"], mine, ref)
        print("-- %s: %d addresses x %d option sets %s" %
              (path, len(addrs), len(combos),
               "answered, no sanitizer report" if SANITIZED else "identical to " + LLVM))
    return checked


SANITIZED = bool(os.environ.get("SYMDB_TEST_SANITIZED"))
SANITIZER_MARKS = (b"AddressSanitizer", b"LeakSanitizer", b"runtime error:",
                   b"UndefinedBehaviorSanitizer")


def sanitized_check(path, opts, mine, n):
    """The sanitizer lane: exit 0, no sanitizer report, and at least one
    line an address (what the plain lane compared byte for byte)."""
    marks = [m for m in SANITIZER_MARKS if m in mine[2]]
    if mine[0] != 0 or marks or len(mine[1].splitlines()) < n:
        fail("%s %s: exit %d, %d lines for %d addresses: %r" %
             (path, " ".join(opts), mine[0], len(mine[1].splitlines()), n, mine[2][-800:]))


def diff_lines(path, opts, mine, ref):
    a = mine[1].decode(errors="replace").splitlines()
    b = ref[1].decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(itertools.zip_longest(a, b)):
        if x != y:
            fail("%s %s: line %d: symdb %r, %s %r (exit %d, stderr %r)" %
                 (path, " ".join(opts), i + 1, x, LLVM, y, mine[0], mine[2][:300]))
    fail("%s %s: exit %d, stderr %r" % (path, " ".join(opts), mine[0], mine[2][:300]))


# Lines that are not addresses for llvm-addr2line-14 (it echoes them); GNU
# reads each as an address of its own (hex prefix, symbol[+offset], or 0).
NON_ADDRESS = [",", "", "zz", "12zz", "-1", "+10", "++12", "x12", "0x", "0x0x12",
               "\t%(hex)s", "%(hex)s,2", "%(fn)s", "%(fn)s+4", " %(fn)s+0x10",
               "nosuch_symbol", "nosuch_symbol+4", "CODE %(hex)s", "DATA %(hex)s",
               "f+2", "-1+2", "%(hex)s+1", "0x%(fn)s+4", "%(fn)s +4", "%(fn)s+-4", "%(fn)s++4",
               "%(fn)s+ 4", "%(fn)s\t+4", "abcz", "%(fn)s 4",
               "10000000000000000", "fffffffffffffffff"]


def compare_non_addresses(a2l, path, rng):
    """GNU's answers on a small C fixture (one unit: binutils' file names are
    right there), interleaved with addresses."""
    starts = functions(path)
    names = subprocess.run(["llvm-nm-14", "--defined-only", path], capture_output=True,
                           text=True).stdout.split("\n")
    fn = next((l.split()[2] for l in names if len(l.split()) == 3 and l.split()[1] == "T"
               and not l.split()[2].startswith("_")), None)
    if not fn:
        fail("%s: no global function" % path)
    hexa = "%x" % starts[len(starts) // 2]
    lines = [l % {"hex": hexa, "fn": fn} for l in NON_ADDRESS]
    for opts in ([], ["-f"], ["-i", "-f"], ["-a"], ["-a", "-f"], ["-p", "-f"], ["-a", "-p", "-f"],
                 ["-a", "-p"], ["-p"]):
        # One process per line and option set (288 of symdb, as many of
        # GNU's) in the plain lane only; the stream below feeds symdb the
        # same lines in both lanes.
        for line in ([] if SANITIZED else lines):
            text = (line + "\n").encode()
            mine = run([a2l, "-e", path] + opts, text)
            ref = run([GNU, "-e", path] + opts, text)
            if mine[0] != 0 or mine[1] != ref[1]:
                fail("%s %s: line %r: symdb %r, GNU %r (stderr %r)" %
                     (path, " ".join(opts), line, mine[1], ref[1], mine[2][:300]))
        # the same lines in one stream after a real address, as perf sends them
        text = "".join("%s\n%s\n" % (hexa, l) for l in lines).encode()
        mine = run([a2l, "-e", path] + opts, text)
        gnu = run([GNU, "-e", path] + opts, text)
        if mine[1].count(b"\n") != gnu[1].count(b"\n"):
            fail("%s %s: a stream of mixed lines: %d answer lines, GNU %d" %
                 (path, " ".join(opts), mine[1].count(b"\n"), gnu[1].count(b"\n")))
        sanitized_check(path, opts, mine, 0) # exit 0, no sanitizer report
        if SANITIZED:
            # and the lines alone, each odd one first of its kind to be read
            # somewhere (the plain lane ran each one alone, against GNU's)
            alone = run([a2l, "-e", path] + opts, "".join(l + "\n" for l in lines).encode())
            sanitized_check(path, opts + ["(odd lines alone)"], alone, 0)
    print("-- %s: %d non-address lines x 9 option sets %s" %
          (path, len(lines), "in two streams each (after addresses: answer lines counted as GNU's; alone)" if SANITIZED
           else "answered as GNU addr2line"))


def compare_cli(a2l, path):
    """GNU's command line: errors, help and version shapes, -j."""
    for opts in (["-x"], ["--demangle=nosuch"], ["--no-such-option"]):
        mine = run([a2l, "-e", path] + opts + ["0"])
        ref = run([GNU, "-e", path] + opts + ["0"])
        if mine[0] != ref[0] or mine[2].splitlines()[:1] != ref[2].splitlines()[:1]:
            fail("%s: exit %d %r, GNU exit %d %r" % (" ".join(opts), mine[0], mine[2][:200],
                                                     ref[0], ref[2][:200]))
    mine, ref = run([a2l, "-e", "/nonexistent/a2l"]), run([GNU, "-e", "/nonexistent/a2l"])
    if (mine[0], mine[2]) != (ref[0], ref[2]):
        fail("missing file: %r vs GNU %r" % (mine[2], ref[2]))
    for opt in ("-h", "--help", "-H"):
        mine, ref = run([a2l, opt]), run([GNU, opt])
        if mine[0] != 0 or mine[1].split(b"\n")[0] != ref[1].split(b"\n")[0]:
            fail("%s: exit %d, first line %r" % (opt, mine[0], mine[1][:80]))
    for opt in ("-v", "--version", "-V"):
        mine = run([a2l, opt])
        if mine[0] != 0 or not mine[1].startswith(b"addr2line ("):
            fail("%s: exit %d, %r" % (opt, mine[0], mine[1][:80]))
    # long forms and ignored options give the same answers as the short ones
    a = "%x" % functions(path)[0]
    short = run([a2l, "-e", path, "-a", "-f", "-i", "-C", "-p", "-s", a])
    long_ = run([a2l, "--exe=" + path, "--addresses", "--functions", "--inlines",
                 "--demangle=gnu-v3", "--pretty-print", "--basenames", "-b", "elf64-x86-64",
                 "-r", "-R", "--target=elf64-x86-64", a])
    if short != long_:
        fail("long options: %r vs %r" % (long_, short))
    # -j SECTION: offsets into the section, as GNU reads them
    sec = subprocess.run(["llvm-readelf-14", "-S", "-W", path], capture_output=True,
                         text=True).stdout
    text_addr = next(int(l.split()[l.split().index(".text") + 2], 16)
                     for l in sec.splitlines() if " .text " in l)
    a = "%x" % next(f for f in functions(path) if f > text_addr)
    off = "%x" % (int(a, 16) - text_addr)
    mine = run([a2l, "-e", path, "-f", "-j", ".text", off])
    ref = run([LLVM, "-e", path, "-f", a])
    if mine[1] != ref[1]:
        fail("-j .text %s: %r, llvm-addr2line-14 at %s: %r" % (off, mine[1], a, ref[1]))
    mine, ref = run([a2l, "-e", path, "-j", ".nosuch", "0"]), run([GNU, "-e", path, "-j", ".nosuch", "0"])
    if (mine[0], mine[2]) != (ref[0], ref[2]):
        fail("-j .nosuch: %r vs GNU %r" % (mine[2], ref[2]))
    check_section(a2l, path, sec, text_addr, a)
    check_demangle_styles(a2l)
    # @FILE: the words of FILE (quotes, a nested @FILE), as both oracles read them
    inner, outer = os.path.join(SCRATCH, "inner.rsp"), os.path.join(SCRATCH, "outer.rsp")
    with open(inner, "w") as f:
        f.write("-i\n'-a'\n")
    with open(outer, "w") as f:
        f.write('-f "-e" %s\n@%s\n' % (path, inner))
    mine, ref = run([a2l, "@" + outer, a]), run([LLVM, "@" + outer, a])
    if mine != ref or not ref[1].startswith(b"0x"):
        fail("@FILE: %r, llvm-addr2line-14 %r" % (mine, ref))
    print("-- command line: GNU's errors, help, long forms, -j, @FILE, demangling styles")


def check_demangle_styles(a2l):
    """-C and --demangle=STYLE in any order: GNU keeps the last style named,
    and "none" demangles nothing (the function line against binutils')."""
    src, exe = os.path.join(SCRATCH, "styles.cc"), os.path.join(SCRATCH, "styles")
    with open(src, "w") as f:
        f.write("__attribute__((noinline)) int run(int x) { return x * 3; }\n"
                "int main(int c, char **) { return run(c); }\n")
    subprocess.run(["g++", "-g", "-O2", "-o", exe, src], check=True)
    addr = "%x" % next(a for a, n in ((int(l.split()[0], 16), l.split()[-1]) for l in
                                     subprocess.run(["llvm-nm-14", exe], capture_output=True,
                                                    text=True).stdout.splitlines()
                                     if len(l.split()) == 3) if n == "_Z3runi")
    for opts in (["-C"], ["--demangle=none"], ["-C", "--demangle=none"], ["--demangle=none", "-C"],
                 ["--demangle=none", "--demangle=auto"], []):
        mine = run([a2l, "-e", exe, "-f"] + opts + [addr])[1].split(b"\n")[0]
        gnu = run([GNU, "-e", exe, "-f"] + opts + [addr])[1].split(b"\n")[0]
        if mine != gnu:
            fail("-f %s: function %r, GNU %r" % (" ".join(opts), mine, gnu))


def check_section(a2l, path, sec, text_addr, a):
    """-j as GNU reads it where llvm-addr2line-14 has no -j: the -a header is
    the offset, zero-padded; an offset past the section's end, or into a
    section that is not loaded, is not found; the symbol table is no section
    of BFD's; a relocatable object's sections (all at 0, one answer per
    address in the index) are refused rather than answered from another
    section."""
    text_size = next(int(l.split()[l.split().index(".text") + 4], 16)
                     for l in sec.splitlines() if " .text " in l)
    off = "%x" % (int(a, 16) - text_addr)
    past = ["%x" % text_size, "%x" % (text_size + 0x10000)]
    mine = run([a2l, "-e", path, "-a", "-j", ".text", off] + past)
    gnu = run([GNU, "-e", path, "-a", "-j", ".text", off] + past)
    body = run([LLVM, "-e", path, a])[1].split(b"\n")[0]
    want = gnu[1].split(b"\n")
    want[1] = body # the found offset's file:line is llvm's (class 6)
    if mine[0] != 0 or mine[1].split(b"\n") != want:
        fail("-a -j .text %s %s: %r, want GNU's headers and not-found answers %r" %
             (off, " ".join(past), mine[1], b"\n".join(want)))
    for name in (".comment", ".symtab", ".shstrtab"):
        if (" %s " % name) not in sec:
            continue
        mine, gnu = run([a2l, "-e", path, "-j", name, "0"]), run([GNU, "-e", path, "-j", name, "0"])
        if (mine[0], mine[1], mine[2]) != (gnu[0], gnu[1], gnu[2]):
            fail("-j %s 0: %r vs GNU %r" % (name, mine, gnu))
    # ld --emit-relocs keeps .rela.text, a relocation section of the main
    # symbol table: no section to BFD; .rela.dyn (of .dynsym) is one
    emit = os.path.join(SCRATCH, "emit-relocs")
    with open(emit + ".c", "w") as f:
        f.write("int main(void) { return 0; }\n")
    subprocess.run(["gcc", "-g", "-Wl,--emit-relocs", "-o", emit, emit + ".c"], check=True)
    for name in (".rela.text", ".rela.dyn"):
        mine, gnu = run([a2l, "-e", emit, "-j", name, "0"]), run([GNU, "-e", emit, "-j", name, "0"])
        if (mine[0], mine[1], mine[2]) != (gnu[0], gnu[1], gnu[2]):
            fail("-j %s 0 (--emit-relocs): %r vs GNU %r" % (name, mine, gnu))
    obj = os.path.join(SCRATCH, "sections.o")
    src = obj[:-2] + ".c"
    with open(src, "w") as f:
        f.write("int table[4] = {1, 2, 3, 4};\n"
                "__attribute__((noinline)) int early(int x) { return table[x & 3]; }\n"
                "__attribute__((section(\".init.text\"))) int late(int x) { return early(x) + 1; }\n")
    subprocess.run(["gcc", "-g", "-O2", "-c", "-o", obj, src], check=True)
    gnu = run([GNU, "-e", obj, "-f", "-j", ".init.text", "0"])
    if gnu[1].split(b"\n")[0] != b"late":
        fail("binutils answers -j .init.text 0 of %s with %r, not late" % (obj, gnu[1]))
    for name in (".text", ".init.text"):
        mine = run([a2l, "-e", obj, "-f", "-j", name, "0"])
        if mine[0] != 1 or mine[1] or b"relocatable object" not in mine[2]:
            fail("-j %s of a relocatable object: exit %d, %r %r (refused: the index has "
                 "one answer per address for all its sections)" % (name, mine[0], mine[1], mine[2]))


def read_lines(p, buf, n, timeout):
    """n lines of p's output, failing when one takes longer than timeout."""
    lines = []
    while len(lines) < n:
        deadline = time.time() + timeout
        while b"\n" not in buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([p.stdout], [], [], left)[0]:
                fail("no answer within %d s; got %r so far" % (timeout, lines))
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                fail("end of output; got %r" % lines)
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        lines.append(line)
    return lines, buf


def pipe(a2l, path, rng):
    addrs = addresses(path, 300, rng)
    # llvm-addr2line-14's answer to each address: it echoes the ','
    # after each, which splits its output per request
    text = "".join("%016x\n,\n" % a for a in addrs).encode()
    ref = run([LLVM, "-e", path, "-i", "-f"], text)[1].split(b"\n,\n")
    if len(ref) != len(addrs) + 1:
        fail("llvm-addr2line-14 gave %d answers for %d addresses" % (len(ref) - 1, len(addrs)))
    p = subprocess.Popen([a2l, "-e", path, "-i", "-f"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    buf = b""
    for i, a in enumerate(addrs):
        p.stdin.write(b"%016x\n,\n" % a)
        p.stdin.flush()
        want = ref[i].lstrip(b"\n").split(b"\n") + [b"??", b"??:0"]
        got, buf = read_lines(p, buf, len(want), 20)
        if got != want:
            fail("%s: request %d (%x): %r, want llvm-addr2line-14's %r then GNU's ??/??:0" %
                 (path, i, a, got, want))
    p.stdin.close()
    rc = p.wait(timeout=20)
    rest = p.stdout.read()
    if rc != 0 or buf or rest:
        fail("exit %d, %r left over" % (rc, (buf + rest)[:100]))
    print("-- %s: %d requests, each answered before the next was written" % (path, len(addrs)))


def main():
    rng = random.Random(13)
    a2l = a2l_cmd()
    for f in FILES:
        rc, _, err = run([SYMDB, "build", f])
        if rc != 0:
            fail("symdb build %s: %r" % (f, err))
    if MODE == "oracle":
        n = compare_addresses(a2l, FILES, rng)
        compare_non_addresses(a2l, FILES[0], rng)
        compare_cli(a2l, FILES[0])
        print("-- %d answers %s" % (n, "checked" if SANITIZED else "identical"))
    else:
        for f in FILES:
            pipe(a2l, f, rng)


main()
