#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/live_pid.py: `symdb query --pid` on a live process with >= 50
mapped libraries (python3 importing every C extension module of its
lib-dynload that imports), against `eu-addr2line --pid` on the same
addresses.  Addresses: up to --per-lib function symbols of each mapped
ELF file (evenly spread over its .dynsym, +4 bytes into each), turned into
runtime addresses through /proc/PID/maps, shuffled with a fixed seed.

Ways, each writing its answers to a file, CPU = user+sys from wait4's
rusage (the indexer children included), --runs rounds, medians with
min-max, the 1-minute load average read before each run:
  first   `symdb query --pid` on a fresh, empty database: every module is
          indexed on first sight
  warm    the same on the database the first run filled (a new process:
          reads maps, opens every module's index)
  batch   one more copy of the whole address set inside one running
          `symdb query --pid` (the run with 11 copies minus the run with
          1, divided by 10): a profiler's steady state
  eu      `eu-addr2line --pid=PID -f -i`

usage: bench/live_pid.py --symdb PATH [--runs 5] [--per-lib 20] [--scratch DIR]
"""
import argparse
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import time


def run(cmd, stdin_path, out_path, env=None):
    t0 = time.monotonic()
    with open(stdin_path, "rb") as i, open(out_path, "wb") as o:
        p = subprocess.Popen(cmd, stdin=i, stdout=o, stderr=subprocess.DEVNULL, env=env)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    return wall, ru.ru_utime + ru.ru_stime, os.waitstatus_to_exitcode(status)


def load_avg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def segments(path):
    with open(path, "rb") as f:
        h = f.read(65536)
    if h[:4] != b"\x7fELF" or h[4] != 2 or h[5] != 1:
        return []
    phoff, = struct.unpack_from("<Q", h, 32)
    phentsize, phnum = struct.unpack_from("<HH", h, 54)
    out = []
    for i in range(phnum):
        t, _fl, off, vaddr, _pa, filesz = struct.unpack_from("<IIQQQQ", h, phoff + i * phentsize)
        if t == 1:
            out.append((off, vaddr, filesz))
    return out


def start_python():
    mods = sorted(f.split(".")[0] for f in os.listdir("/usr/lib/python3.11/lib-dynload")
                  if f.endswith(".so"))
    code = ("import sys\nfor m in %r:\n    try:\n        __import__(m)\n    except Exception:\n"
            "        pass\nprint('ready', flush=True)\nsys.stdin.read()\n" % mods)
    p = subprocess.Popen(["/usr/bin/python3", "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    if p.stdout.readline().strip() != "ready":
        sys.exit("python3 did not start")
    return p


def addresses(pid, per_lib):
    maps = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 6 or "x" not in parts[1] or not parts[5].startswith("/"):
                continue
            s, e = (int(x, 16) for x in parts[0].split("-"))
            maps.append((s, e, int(parts[2], 16), parts[5].strip()))
    files = sorted({m[3] for m in maps})
    out = []
    for path in files:
        nm = subprocess.run(["llvm-nm-14", "-D", "--defined-only", path], capture_output=True,
                            text=True).stdout
        syms = sorted({int(p[0], 16) for p in (l.split() for l in nm.splitlines())
                       if len(p) == 3 and p[1] in "TtWi"})
        segs = segments(path)
        if not syms or not segs:
            continue
        step = max(1, len(syms) // per_lib)
        for v in syms[::step][:per_lib]:
            v += 4
            fo = next((v - sv + so for so, sv, sz in segs if sv <= v < sv + sz), None)
            for s, e, pg, p in maps:
                if p == path and fo is not None and pg <= fo < pg + (e - s):
                    out.append(s + fo - pg)
    random.Random(42).shuffle(out)
    return files, out


def med(xs):
    return "%.0f (%.0f-%.0f)" % (statistics.median(xs) * 1e3, min(xs) * 1e3, max(xs) * 1e3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symdb", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--per-lib", type=int, default=20)
    ap.add_argument("--scratch", default="/tmp/symdb-live-bench")
    a = ap.parse_args()
    shutil.rmtree(a.scratch, ignore_errors=True)
    os.makedirs(a.scratch)
    py = start_python()
    try:
        files, addrs = addresses(py.pid, a.per_lib)
        if len(files) < 50:
            sys.exit("only %d mapped files" % len(files))
        one = os.path.join(a.scratch, "addrs.txt")
        many = os.path.join(a.scratch, "addrs11.txt")
        text = "".join("0x%x\n" % x for x in addrs)
        with open(one, "w") as f:
            f.write(text)
        with open(many, "w") as f:
            f.write(text * 11)
        sq = [a.symdb, "query", "--pid", str(py.pid)]
        eu = ["eu-addr2line", "--pid=%d" % py.pid, "-f", "-i"]
        res = {k: ([], [], []) for k in ("first", "warm", "batch", "eu")}
        out = os.path.join(a.scratch, "out")
        for r in range(a.runs):
            db = os.path.join(a.scratch, "db%d" % r)
            env = dict(os.environ, SYMDB_DIR=db, TMPDIR=a.scratch)
            for way in ("first", "warm", "batch", "eu"):
                la = load_avg()
                if way == "eu":
                    w, c, rc = run(eu, one, out + ".eu")
                elif way == "batch":
                    w1, c1, rc = run(sq, one, out + ".b1", env)
                    w11, c11, rc2 = run(sq, many, out + ".b11", env)
                    w, c, rc = (w11 - w1) / 10, (c11 - c1) / 10, rc or rc2
                else:
                    w, c, rc = run(sq, one, out + "." + way, env)
                if rc not in (0, 1):
                    sys.exit("%s: exit %d" % (way, rc))
                res[way][0].append(w)
                res[way][1].append(c)
                res[way][2].append(la)
            shutil.rmtree(db, ignore_errors=True)
        n_eu = sum(1 for l in open(out + ".eu") if not l.startswith((" ", "/", "?")))
        print("process: python3 (pid %d), %d mapped ELF files with code, %d addresses, "
              "%d runs" % (py.pid, len(files), len(addrs), a.runs))
        print("| way | wall ms, median (min-max) | CPU user+sys ms | us per address (CPU) "
              "| load avg, median (min-max) |")
        print("|---|---|---|---|---|")
        for way in ("first", "warm", "batch", "eu"):
            w, c, la = res[way]
            print("| %s | %s | %s | %.2f | %.2f (%.2f-%.2f) |"
                  % (way, med(w), med(c), statistics.median(c) * 1e6 / len(addrs),
                     statistics.median(la), min(la), max(la)))
        print("eu-addr2line answer lines: %d" % n_eu)
    finally:
        py.stdin.close()
        py.wait()


main()
