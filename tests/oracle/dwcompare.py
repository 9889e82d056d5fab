#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dwcompare.py - symdb query vs llvm-symbolizer-14, address by address.

Builds BIN (--obj; given more than once, every binary in one build and one
run of each tool per style, with 'FILE ADDR' requests, each binary's
identical fraction reported on its own) into a scratch database, picks addresses (every byte of every
executable section, or a seeded sample: half uniform over the executable
sections, half skewed towards a Zipf-ranked set of "hot" functions), runs
both tools once over the whole list in the requested output style with
--print-address, splits both outputs per address and counts the addresses
whose text differs.  Fails when the identical fraction of any style is
below --min-rate (default 1.0: every address identical).
The oracle is always llvm-symbolizer-14; nothing here is copied from symdb.
In the sanitizer lane (SYMDB_TEST_SANITIZED set, tests/oracle/CMakeLists.txt)
the oracle is not run: the plain lane compared the same fixtures with it, and
what this lane adds is symdb's own run under ASan+UBSan, which must answer
every address without a sanitizer report, in the first style given only (the
other styles format the same frames, under the sanitizers in oracle.*), or in
every style given with --sanitized-all-styles (dwarf_fixtures.sh: inline
chains, --verbose and source context in each printer).
"""
import argparse
import bisect
import itertools
import os
import random
import re
import shutil
import struct
import subprocess
import sys

LLVM = "llvm-symbolizer-14"
ADDR_LINE = re.compile(r"^0x[0-9a-f]+$")


def exec_sections(path):
    """(addr, size) of every SHF_EXECINSTR section with file contents."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise SystemExit(f"{path}: not ELF")
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
        fmt = end + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x2E)
        fmt = end + "IIIIIIIIII"
    out = []
    for i in range(shnum):
        f = struct.unpack_from(fmt, data, shoff + i * shentsize)
        sh_type, flags, addr, size = f[1], f[2], f[3], f[5]
        if flags & 0x4 and sh_type == 1 and size:  # SHF_EXECINSTR, PROGBITS
            out.append((addr, size))
    return out


def functions(path):
    """(start, size) of sized function symbols, for the hot-function skew."""
    out = ""
    for dyn in ([], ["-D"]):
        r = subprocess.run(["llvm-nm-14", "-S", "--defined-only"] + dyn + [path],
                           capture_output=True, text=True)
        out += r.stdout
    funcs = set()
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 4 and p[2] in "tTwW":
            size = int(p[1], 16)
            if size:
                funcs.add((int(p[0], 16), size))
    return sorted(funcs)


def pick_addresses(path, sample, seed):
    secs = exec_sections(path)
    if not sample:
        # sections of an object file all start at 0: each address once
        return sorted({a for lo, n in secs for a in range(lo, lo + n)})
    rng = random.Random(seed)
    total = sum(n for _, n in secs)
    starts, acc = [], 0
    for _, n in secs:
        starts.append(acc)
        acc += n
    addrs = set()
    for _ in range(sample // 2):
        k = rng.randrange(total)
        i = bisect.bisect_right(starts, k) - 1
        addrs.add(secs[i][0] + k - starts[i])
    funcs = functions(path)
    rng.shuffle(funcs)
    hot = funcs[:2000]
    # The cumulative weights once: choices(hot, weights) sums all 2000 on
    # every call (15 s of a 100k sample); cum_weights draws the same picks.
    cum = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(hot))))
    while hot and len(addrs) < sample:
        lo, n = rng.choices(hot, cum_weights=cum)[0]
        addrs.add(lo + rng.randrange(n))
    return sorted(addrs)


def split_blocks(text):
    blocks, cur = [], None
    for line in text.splitlines():
        if ADDR_LINE.match(line):
            cur = [line]
            blocks.append(cur)
        elif cur is not None:
            cur.append(line)
        else:
            blocks.append([line])
    return ["\n".join(b).rstrip("\n") for b in blocks]


FILE_ONLY = re.compile(r"^(.*?)(:0(:0)?)$")


JSON_STT_FILE = re.compile(r'"FileName":"[^"]+"(,"FunctionName":"[^"]*","Line":0,)')


def stt_file_only(w, g):
    """llvm printed NAME:0[:0] where symdb printed ??:0[:0], nothing else
    (JSON: "FileName":"NAME" against "FileName":"" on a line-0 frame)."""
    if w.startswith("{") and w != g:
        return JSON_STT_FILE.sub(r'"FileName":""\1', w) == g
    wl, gl = w.split("\n"), g.split("\n")
    if len(wl) != len(gl):
        return False
    diff = False
    for x, y in zip(wl, gl):
        if x == y:
            continue
        mx, my = FILE_ONLY.match(x), FILE_ONLY.match(y)
        if not (mx and my and my.group(1) == "??" and mx.group(2) == my.group(2)):
            return False
        diff = True
    return diff


def run_text(cmd, inp):
    r = subprocess.run(cmd, input=inp, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.stderr.write(r.stderr)
        raise SystemExit(f"{cmd[0]} failed with {r.returncode}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symdb", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--obj", required=True, action="append",
                    help="the binary; given more than once, one build and one run of each "
                         "tool per style cover them all, with 'FILE ADDR' requests")
    ap.add_argument("--oracle-obj", help="binary llvm-symbolizer reads (e.g. an uncompressed copy)")
    ap.add_argument("--style", default="LLVM",
                    help="output style, or a comma-separated list (one build for all)")
    ap.add_argument("--sample-others", type=int, default=0,
                    help="styles after the first: an even spread of N of the addresses")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-rate", type=float, default=1.0)
    ap.add_argument("--build-arg", action="append", default=[])
    ap.add_argument("--llvm-arg", action="append", default=[])
    ap.add_argument("--query-arg", action="append", default=[])
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("--sanitized-all-styles", action="store_true",
                    help="in the sanitizer lane, run symdb in every style given, not the first")
    ap.add_argument("--no-build", action="store_true",
                    help="query the database as it is (the caller built it)")
    ap.add_argument("--addr-obj",
                    help="take the addresses from this file's executable sections "
                         "(a debug file has none: its stripped binary)")
    ap.add_argument("--ignore-stt-file", action="store_true",
                    help="do not count differences that are only the STT_FILE "
                         "file-name fallback of symbol-table frames (not DWARF)")
    a = ap.parse_args()
    for tool in (LLVM, "llvm-nm-14"):
        if not shutil.which(tool):
            print("SKIP: %s not found" % tool)
            return 77

    if len(a.obj) > 1 and (a.oracle_obj or a.addr_obj):
        raise SystemExit("dwcompare.py: --oracle-obj and --addr-obj take one --obj")
    if not a.no_build:
        b = subprocess.run([a.symdb, "--db", a.db, "build", "--force"] + a.build_arg + a.obj,
                           capture_output=True, text=True)
        if b.returncode != 0:
            sys.stderr.write(b.stdout + b.stderr)
            raise SystemExit("symdb build failed")
    reqs = []  # (binary, address), binary by binary
    for obj in a.obj:
        addrs = pick_addresses(a.addr_obj or obj, a.sample, a.seed)
        if not addrs:  # nothing compared is no pass
            raise SystemExit(f"{obj}: no executable section, no address to compare")
        reqs += [(obj, x) for x in addrs]
    ok = True
    styles = a.style.split(",")
    if os.environ.get("SYMDB_TEST_SANITIZED") and not a.sanitized_all_styles:
        styles = styles[:1]
    for k, style in enumerate(styles):
        subset = reqs
        if k and a.sample_others and a.sample_others < len(reqs):
            step = len(reqs) / a.sample_others  # an even spread of the same sample
            subset = [reqs[int(i * step)] for i in range(a.sample_others)]
        ok &= compare_style(a, style, subset)
    return 0 if ok else 1


SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer", "runtime error:",
                   "UndefinedBehaviorSanitizer")


def requests(a, reqs):
    """The command line's --obj and stdin for REQS: one binary by --obj and
    bare addresses, several by 'FILE ADDR' lines."""
    if len(a.obj) == 1:
        return ["--obj", a.obj[0]], "".join("0x%x\n" % x for _, x in reqs)
    # quoted: both tools take '"FILE" ADDR', and a path may hold a space
    return [], "".join('"%s" 0x%x\n' % r for r in reqs)


def name(a):
    return a.obj[0] if len(a.obj) == 1 else "%d binaries (%s ...)" % (len(a.obj), a.obj[0])


def sanitized_run(a, style, reqs):
    """The sanitizer lane: symdb alone over REQS in STYLE; True when it
    answered every address (one block each) without a sanitizer report."""
    obj, inp = requests(a, reqs)
    cmd = [a.symdb, "--db", a.db, "query"] + obj + ["--output-style=" + style,
                                                    "--print-address"] + a.query_arg
    r = subprocess.run(cmd, input=inp, capture_output=True, text=True)
    marks = [m for m in SANITIZER_MARKS if m in r.stderr]
    n = len(split_blocks(r.stdout))
    if r.returncode not in (0, 1) or marks or n != len(reqs):
        print(f"FAIL: {name(a)} [{style}]: exit {r.returncode}, {n} of {len(reqs)} answers"
              f"{', ' + marks[0] if marks else ''}\n{r.stderr[-2000:]}")
        return False
    print(f"{name(a)} [{style}]: {n} addresses answered, no sanitizer report "
          "(compared with llvm-symbolizer-14 in the plain lane)")
    return True


def compare_style(a, style, reqs):
    """One run of each tool over REQS in STYLE; True when every binary's
    answers are identical enough."""
    if os.environ.get("SYMDB_TEST_SANITIZED"):
        return sanitized_run(a, style, reqs)
    opts = ["--output-style=" + style, "--print-address"]
    obj, inp = requests(a, reqs)
    want = run_text([LLVM] + (["--obj", a.oracle_obj] if a.oracle_obj else obj) + opts +
                    a.llvm_arg, inp)
    if a.oracle_obj:  # JSON names the module: it is the file symdb was given
        want = want.replace('"ModuleName":"%s"' % a.oracle_obj, '"ModuleName":"%s"' % a.obj[0])
    got = run_text([a.symdb, "--db", a.db, "query"] + obj + opts + a.query_arg, inp)
    wb, gb = split_blocks(want), split_blocks(got)
    if len(wb) != len(gb) or len(wb) != len(reqs):
        print(f"{name(a)} [{style}]: block count differs: {len(reqs)} requests, "
              f"llvm {len(wb)}, symdb {len(gb)}")
        if len(a.obj) > 1:  # the blocks cannot be told apart: each binary alone
            for obj_name in a.obj:
                one = argparse.Namespace(**dict(vars(a), obj=[obj_name]))
                compare_style(one, style, [r for r in reqs if r[0] == obj_name])
            return False
        n = min(len(wb), len(gb))
        tally(a, a.obj[0], style, wb[:n], gb[:n])
        return False
    ok = True
    for obj_name in a.obj:
        idx = [i for i, r in enumerate(reqs) if r[0] == obj_name]
        ok &= tally(a, obj_name, style, [wb[i] for i in idx], [gb[i] for i in idx])
    return ok


def tally(a, obj, style, wb, gb):
    """Print OBJ's identical fraction in STYLE and its first differences;
    True when it reaches --min-rate."""
    bad = ignored = 0
    for w, g in zip(wb, gb):
        if w != g and a.ignore_stt_file and stt_file_only(w, g):
            ignored += 1
        elif w != g:
            bad += 1
            if bad <= a.show:
                print(f"--- llvm-symbolizer\n{w}\n--- symdb\n{g}\n")
    if not wb:
        print(f"{obj} [{style}]: llvm-symbolizer printed nothing")
        return False
    n = len(wb)
    rate = 1.0 - bad / n
    extra = f", {ignored} STT_FILE-only differences ignored" if ignored else ""
    print(f"{obj} [{style}]: {n - bad}/{n} identical ({100 * rate:.4f} %){extra}")
    return rate >= a.min_rate


if __name__ == "__main__":
    sys.exit(main())
