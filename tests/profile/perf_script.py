#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perf_script.py: `symdb perf` on perf script text written here, over
fixture binaries (a PIE and a non-PIE, GCC -O2: inline chains), in the
shapes perf 6.1 prints: a header with a command name holding spaces, a
callchain (leaf first, file offsets, a blank line after), a sample without
a callchain on the header line (its command right-aligned, its address the
runtime one, placed by the mmap events), a frame perf could not map, --show-mmap-events
lines, and a line that is none of these.  The oracle is llvm-symbolizer-14
on the same addresses as virtual addresses (the offsets are mapped through
the program headers here): every stack must be the callers' then the leaf's
inline chains, outermost first, with the process name at the root; a
caller (a return address) is looked up one byte earlier, inside the call.
Also checks the summary line, --no-comm / --no-annotate / -q, progress
lines on a terminal (a pty from script(1)) and none without one, and that
text which is not perf script output is one error line.
Usage: perf_script.py SYMDB BIN... (FIXTURES' binaries); SCRATCH from env."""
import os
import random
import re
import shutil
import struct
import subprocess
import sys


def load_segments(path):
    """PT_LOAD (vaddr, offset, filesz, flags) of a little-endian ELF64."""
    with open(path, "rb") as f:
        data = f.read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segs = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            segs.append((p_vaddr, p_offset, p_filesz, p_flags))
    return segs


def functions(path):
    """(vaddr, size) of defined functions from nm."""
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    fns = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT" and int(parts[1], 16) > 8:
            fns.append((int(parts[0], 16), int(parts[1], 16)))
    return fns


def to_offset(segs, vaddr):
    for v, o, n, flags in segs:
        if flags & 1 and v <= vaddr < v + n:
            return vaddr - v + o
    return None


def llvm_chain(path, vaddrs):
    """Function names per address, innermost first (llvm-symbolizer-14)."""
    inp = "".join(f"0x{a:x}\n" for a in vaddrs)
    out = subprocess.run(["llvm-symbolizer-14", "--obj", path, "--inlines", "--functions=linkage",
                          "--demangle"], input=inp, capture_output=True, text=True,
                         check=True).stdout
    chains, cur = [], []
    lines = out.split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "":
            if cur:
                chains.append(cur)
                cur = []
            i += 1
            continue
        cur.append(lines[i])
        i += 2
    if cur:
        chains.append(cur)
    assert len(chains) == len(vaddrs), (len(chains), len(vaddrs))
    return chains


def run_folded(symdb, scratch, name, text, expect, what):
    """Writes text as NAME.txt, runs `symdb perf --no-annotate` on it and
    compares its folded stacks with expect: (the completed process, or None
    after printing the differences)."""
    inp = os.path.join(scratch, name + ".txt")
    with open(inp, "w") as f:
        f.write("\n".join(text) + "\n")
    out = os.path.join(scratch, name + ".folded")
    p = subprocess.run([symdb, "perf", "--no-annotate", inp, "-o", out], capture_output=True,
                       text=True)
    if p.returncode != 0:
        print(f"FAIL: symdb perf on {what} exited {p.returncode}: {p.stderr}")
        return None
    got = {}
    with open(out) as f:
        for line in f:
            st, _, n = line.rstrip("\n").rpartition(" ")
            got[st] = got.get(st, 0) + int(n)
    bad = [st for st in sorted(set(got) | set(expect)) if got.get(st) != expect.get(st)]
    for st in bad[:5]:
        print(f"  {what}: stack {st!r}: symdb {got.get(st)}, llvm-symbolizer-14 {expect.get(st)}")
    if bad:
        print(f"FAIL: {len(bad)} stacks of {what} differ")
        return None
    p.inp = inp
    return p


def shapes(symdb, bins, pools, scratch, rnd):
    """The other shapes perf script prints: headers of -F sets without a
    pid, a time or an event (comm,ip,dso; comm,tid,ip,dso;
    comm,time,ip,dso; ip,dso, whose header is an empty line), a command
    name holding "10/20", and perf's own inline entries (without
    --no-inline): an address with inlined functions printed once per
    function, "(inlined)" in place of the DSO, the outermost with it -- or
    without any entry naming the DSO.  Expected stacks from
    llvm-symbolizer-14 as above; a group with no DSO is "[unknown]"."""
    text, expect = [], {}
    heads = [("my prog", "my prog {t}"), ("my prog", "my prog  4242 "),
             ("my prog", "my prog 100.{k:06d}: "), ("[unknown]", ""),
             ("job 10/20", "job 10/20 4242/4242 100.{k:06d}:     1 cpu-clock: ")]
    for k in range(40):
        b = rnd.choice(bins)
        segs, pool = pools[b]
        inl = [c for c in pool if len(c[1]) > 1]
        picks = [rnd.choice(inl) for _ in range(rnd.randint(1, 3))]
        comm, head = heads[k % len(heads)]
        text.append(head.format(k=k, t=""))
        stack = [comm]
        for i, (v, ch) in enumerate(picks):
            o = to_offset(segs, v) + (0 if i == 0 else 1)
            if k % 4 == 3 and i == len(picks) - 1 and i > 0:
                # the root-most caller as perf prints __libc_start_main_impl:
                # "(inlined)" entries only
                text += [f"\t{o:16x} (inlined)"] * len(ch)
                stack.insert(1, "[unknown]")
                continue
            text += [f"\t{o:16x} (inlined)"] * (len(ch) - 1) + [f"\t{o:16x} ({b})"]
            stack[len(stack) - len(stack) + 1:1] = list(reversed(ch))
        text.append("")
        key = ";".join(stack)
        expect[key] = expect.get(key, 0) + 1
    p = run_folded(symdb, scratch, "shapes", text, expect, "the other shapes")
    if p is None:
        return 1
    nonly = sum(v for st, v in expect.items() if ";[unknown];" in st)
    if "printed by perf only as '(inlined)'" not in p.stderr or "inlined" in p.stderr.splitlines()[-1]:
        print(f"FAIL: the '(inlined)'-only frames are not reported in one line: {p.stderr!r}")
        return 1
    print(f"ok: {sum(expect.values())} samples of the other shapes ({nonly} with an "
          f"'(inlined)'-only caller), as llvm-symbolizer-14 names them")
    return 0


def main():
    symdb, bins = sys.argv[1], sys.argv[2:]
    scratch = os.environ["SCRATCH"]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    rnd = random.Random(17)
    print("seed 17")
    text, expect = [], {}
    # One mmap event per binary, as --show-mmap-events prints them: where a
    # sample without a callchain, whose address perf prints as the runtime
    # one, lies in the file.
    base = {}
    for i, b in enumerate(bins):
        base[b] = 0x55d000000000 + i * 0x10000000
        text.append(f"my prog 4242/4242 100.000000: PERF_RECORD_MMAP2 4242/4242: "
                    f"[0x{base[b]:x}(0x8000000) @ 0 fe:00 1234 0]: r-xp {b}")
    text.append("this line is not perf script output")
    pools = {}
    for b in bins:  # candidate leaves: a few offsets into every function
        segs = load_segments(b)
        cand = [f + d for f, n in functions(b) for d in (0, 3, 9, 17, 33, 60) if d < n]
        cand = [v for v in cand if to_offset(segs, v) is not None]
        chains = llvm_chain(b, cand)
        pools[b] = (segs, list(zip(cand, chains)))
    for k in range(60):
        b = rnd.choice(bins)
        segs, pool = pools[b]
        inl = [c for c in pool if len(c[1]) > 1]
        depth = rnd.randint(1, 4)
        picks = [rnd.choice(inl if inl and rnd.random() < 0.5 else pool) for _ in range(depth)]
        offs = [to_offset(segs, v) for v, _ in picks]
        # callers are return addresses: perf prints the address after the
        # call, symdb looks up one byte earlier
        stack = ["my prog"]
        for _, ch in reversed(picks):
            stack += list(reversed(ch))
        if depth == 1 and k % 2:
            # no callchain: the frame on the header line, perf 6.1's shape
            # ("%16s" command name, the runtime address)
            text.append(f"{'my prog':>16} 4242/4242 100.{k:06d}: 1 cpu-clock: "
                        f"{base[b] + offs[0]:16x} ({b})")
        else:
            text.append(f"my prog 4242/4242 100.{k:06d}:     250000 cpu-clock: ")
            text += [f"\t{(o if i == 0 else o + 1):16x} ({b})" for i, o in enumerate(offs)]
            text.append("")
        key = ";".join(stack)
        expect[key] = expect.get(key, 0) + 1
    # A child forked without exec: no mmap event of its own; its parent's
    # mapping of the file places its address.
    b = bins[0]
    segs, pool = pools[b]
    v, ch = pool[len(pool) // 2]
    text.append(f"{'my prog':>16} 4243/4243 100.999999: 1 cpu-clock: "
                f"{base[b] + to_offset(segs, v):16x} ({b})")
    key = ";".join(["my prog"] + list(reversed(ch)))
    expect[key] = expect.get(key, 0) + 1
    # A frame perf could not map: "[unknown]", and a sample of it alone.
    text += ["other 7/7 101.0:     1 cpu-clock: ", "\t               0 ([unknown])", ""]
    expect["other;[unknown]"] = 1
    p = run_folded(symdb, scratch, "in", text, expect, "the perf script text")
    if p is None:
        return 1
    inp = p.inp
    err = p.stderr.strip().splitlines()
    if len(err) != 2 or "1 line not understood" not in err[0] or \
            not re.match(r"symdb perf: \d+ samples, \d+ stacks, \d+ locations", err[1]):
        print(f"FAIL: stderr is not the skipped-line notice and the summary: {err}")
        return 1
    # --no-comm drops the root; annotations mark inline frames _[i].
    p = subprocess.run([symdb, "perf", "-q", "--no-comm", inp], capture_output=True, text=True)
    lines = p.stdout.splitlines()
    if p.returncode or "symdb perf:" in p.stderr or any(l.startswith("my prog") for l in lines) or \
            not any("_[i]" in l for l in lines):
        print(f"FAIL: --no-comm -q: rc {p.returncode}, stderr {p.stderr!r}")
        return 1
    # On a terminal (a pty from script(1)): progress lines ("\r" without
    # a newline), cleared before the summary.  Without one (above): none.
    if shutil.which("script"):
        tty_out = os.path.join(scratch, "tty.folded")
        cmd = f"'{symdb}' perf '{inp}' -o '{tty_out}'"
        p = subprocess.run(["script", "-q", "-e", "-c", cmd, "/dev/null"], capture_output=True,
                           env=dict(os.environ, TERM="dumb"))
        tty = p.stdout.decode("utf-8", "replace")  # bytes: keep the \r
        if p.returncode or not re.search(r"\rsymdb perf: (read|symbolized) ", tty) or \
                not re.search(r"\rsymdb perf: \d+ samples, ", tty):
            print(f"FAIL: no progress on a terminal: {tty!r}")
            return 1
    # A profile of another kernel (its build-id in the mmap line perf
    # record --buildid-mmap writes): kernel frames are not looked up in
    # this kernel's kallsyms, and one line says why.
    other = os.path.join(scratch, "otherkernel.txt")
    with open(other, "w") as f:
        f.write("swapper 0/0 0.000000: PERF_RECORD_MMAP2 -1/0: [0xffffffff81000000(0x12090c8) "
                "@ 0xffffffff81000000 <00112233445566778899aabbccddeeff00112233>]: ---p "
                "[kernel.kallsyms]_text\n"
                "k 1/1 1.0: 1 cpu-clock: \n\tffffffff81000130 ([kernel.kallsyms])\n\n")
    p = subprocess.run([symdb, "perf", "-q", other], capture_output=True, text=True)
    if p.returncode or "recorded on kernel 00112233445566778899aabbccddeeff00112233" not in \
            p.stderr or not re.fullmatch(r"k;\[kernel\.kallsyms\]\+0x[0-9a-f]+ 1\n", p.stdout):
        print(f"FAIL: another kernel's profile: rc {p.returncode}, {p.stdout!r} {p.stderr!r}")
        return 1
    # `perf buildid-list` pads a build-id shorter than 20 bytes (lld's 8)
    # to 40 columns: the path after the spaces is the one it names.  That
    # build-id is not the file's (a rebuilt file) and no index has it: the
    # binary's frames must not be named from the file as it is now.
    bids = os.path.join(scratch, "short.bids")
    with open(bids, "w") as f:
        f.write(f"{'8badf00ddeadbeef':<40} {bins[0]}\n")
    p = subprocess.run([symdb, "perf", "--no-build", "--no-annotate", "--build-ids", bids, inp,
                        "-o", os.path.join(scratch, "bids.folded")], capture_output=True, text=True)
    with open(os.path.join(scratch, "bids.folded")) as f:
        got_bids = f.read()
    if p.returncode or os.path.basename(bins[0]) + "+0x" not in got_bids or \
            f"1 unknown image: {bins[0]}" not in p.stderr:
        print(f"FAIL: a padded short build-id was not read: rc {p.returncode}, {p.stderr!r}")
        return 1
    # One path, two builds while perf recorded (--buildid-mmap's mmap
    # lines): each sample is asked of the build mapped when it was taken.
    # The first is the file's own build-id (answered from the file), the
    # second one no index has (answered by nothing, never by the file).
    b0 = bins[0]
    real = subprocess.run(["readelf", "-n", b0], capture_output=True, text=True).stdout
    real = re.search(r"Build ID: ([0-9a-f]+)", real).group(1)
    segs0, pool0 = pools[b0]
    leaf_v, leaf_chain = pool0[0]
    leaf_off = to_offset(segs0, leaf_v)
    swap = os.path.join(scratch, "swap.txt")
    with open(swap, "w") as f:
        for k, bid in enumerate((real, "8badf00d" * 5)):
            f.write(f"p 9/9 1.{k}: PERF_RECORD_MMAP2 9/9: [0x7f0000000000(0x100000) @ 0 "
                    f"<{bid}>]: r-xp {b0}\n"
                    f"p 9/9 2.{k}: 1 cpu-clock: \n\t{leaf_off:16x} ({b0})\n\n")
    p = subprocess.run([symdb, "perf", "-q", "--no-build", "--no-annotate", swap], capture_output=True,
                       text=True)
    lines = sorted(p.stdout.splitlines())
    want_named = "p;" + ";".join(reversed(leaf_chain)) + " 1"
    if p.returncode or len(lines) != 2 or want_named not in lines or \
            not any(re.fullmatch(r"p;" + re.escape(os.path.basename(b0)) + r"\+0x[0-9a-f]+ 1", l)
                    for l in lines):
        print(f"FAIL: one path, two builds: {lines} (want {want_named!r} and an unknown frame)")
        return 1
    # perf's build-id cache: perf record keeps a copy of every file it
    # sampled in DIR/.build-id/XX/REST/elf.  The path perf recorded now
    # holds another build: its frames are answered from the copy of the
    # recorded build (--buildid-dir; default $HOME/.debug), as perf report
    # reads it; without the copy, by build-id only (nothing here).
    moved = os.path.join(scratch, "moved-prog")
    os.symlink(bins[1], moved)  # "rebuilt": another build at the path
    cache = os.path.join(scratch, "buildid-cache")
    d = os.path.join(cache, ".build-id", real[:2], real[2:])
    os.makedirs(d)
    shutil.copy(b0, os.path.join(d, "elf"))
    rebuilt = os.path.join(scratch, "rebuilt.txt")
    with open(rebuilt, "w") as f:
        f.write(f"p 9/9 1.0: PERF_RECORD_MMAP2 9/9: [0x7f0000000000(0x100000) @ 0 "
                f"<{real}>]: r-xp {moved}\n"
                f"p 9/9 2.0: 1 cpu-clock: \n\t{leaf_off:16x} ({moved})\n\n")
    home = os.path.join(scratch, "home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, SYMDB_DIR=os.path.join(scratch, "db-rebuilt"))
    for args, want in (([], "p;moved-prog+0x"), (["--buildid-dir", cache], want_named)):
        p = subprocess.run([symdb, "perf", "-q", "--no-annotate", *args, rebuilt],
                           capture_output=True, text=True, env=env)
        if p.returncode or not p.stdout.startswith(want):
            print(f"FAIL: a rebuilt path, perf's build-id cache {args}: {p.stdout!r} "
                  f"{p.stderr!r} (want {want!r})")
            return 1
    rc = shapes(symdb, bins, pools, scratch, rnd)
    if rc:
        return rc
    # Not perf script output: one line, exit 1, no output file (README's
    # bad-inputs table).
    bad_in = os.path.join(scratch, "notperf.txt")
    with open(bad_in, "w") as f:
        f.write("hello\nworld\n")
    bad_out = os.path.join(scratch, "notperf.folded")
    p = subprocess.run([symdb, "perf", bad_in, "-o", bad_out], capture_output=True, text=True)
    want = (f"symdb: {bad_in}: no samples (is this the output of 'perf script'? "
            f"see 'symdb help perf')")
    if p.returncode != 1 or p.stderr.splitlines() != [want] or os.path.exists(bad_out):
        print(f"FAIL: not perf script output: rc {p.returncode}, stderr {p.stderr!r}")
        return 1
    print(f"ok: {sum(expect.values())} samples, {len(expect)} stacks as llvm-symbolizer-14 names them")
    return 0


sys.exit(main())
