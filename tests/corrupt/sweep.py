#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Damage sweeps over one published index file (SQLite-style).

The binary is indexed into a scratch database.  Then this script damages its
index file in place, one way at a time, restoring it after each:

  prefix   the file cut to N bytes, for every N below its size (or every
           --step-th N): `symdb query` must reject it with exit 4 and one line
           on stderr;
  flip     byte K inverted, for every K (or every --step-th K, always every
           byte of the header and directory): with checksum verification on
           (--verify) the query must exit 4 or print exactly the undamaged
           output; so must the plain query (the verification policy of SPEC
           §9: open checks the header and directory, under Header_Checksum)
           for a byte of the header or directory; for a byte inside a table
           it may print anything but must not crash (exit < 128, no
           sanitizer report), because the reader bounds-checks every index
           it reads from the file (SPEC §11).

With --driver (tests/corrupt/sweep_driver.c) every case runs in that one
process, through the library as `symdb query --obj` finds, symbolizes and
demangles (a fresh database handle and context per case, every string of
every answer read), and the CLI runs on every --cli-every-th prefix and
flip, and on every flip whose plain open answered differently (the damaged
answers its printers must take): a process per case cost 20-40 ms, over
3,000 cases per sweep.  Without --driver, the CLI runs every case.
--differs-every K runs the CLI on every K-th of those differing flips only:
the sanitizer lane's setting (tests/corrupt/CMakeLists.txt), where they were
most of the sweep's time at some 64 ms a start; the plain lane runs them all.

Under AddressSanitizer, LeakSanitizer's scan at exit is half of each
process's cost (43 of 86 ms per start measured): the CLI runs it on every
8th case it runs (and on the undamaged runs), which share their error paths
with the cases between them.

Python standard library only.  Usage:
  sweep.py --symdb SYMDB --scratch DIR [--step N]
           [--driver EXE [--cli-every M] [--differs-every K]] BINARY
"""

import argparse
import os
import shutil
import subprocess
import sys

SANITIZER_MARKS = (b"AddressSanitizer", b"LeakSanitizer", b"runtime error:",
                   b"UndefinedBehaviorSanitizer")


def run(cmd, stdin, env):
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, timeout=60)
    return p.returncode, p.stdout, p.stderr


def leak_scan_env(env, i):
    """env for case i: LeakSanitizer's exit scan only on every 8th case."""
    if i % 8 == 0:
        return env
    return dict(env, ASAN_OPTIONS=env.get("ASAN_OPTIONS", "") + ":detect_leaks=0")


def crashed(rc, err):
    return rc < 0 or rc >= 128 or any(m in err for m in SANITIZER_MARKS)


def main():
    if not shutil.which("llvm-nm-14"):
        print("SKIP: llvm-nm-14 not found")
        return 77
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--symdb", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--step", type=int, default=1, help="test every N-th offset")
    ap.add_argument("--driver", help="sweep_driver: every case in one process")
    ap.add_argument("--cli-every", type=int, default=16,
                    help="with --driver: the CLI on every M-th case")
    ap.add_argument("--differs-every", type=int, default=1,
                    help="with --driver: the CLI on every K-th flip the driver saw answer "
                         "differently (default every one)")
    ap.add_argument("binary")
    args = ap.parse_args()

    shutil.rmtree(args.scratch, ignore_errors=True)
    os.makedirs(args.scratch)
    env = dict(os.environ, SYMDB_DIR=os.path.join(args.scratch, "db"))
    rc, out, err = run([args.symdb, "build", args.binary], b"", env)
    if rc != 0:
        print("FAIL: symdb build exited %d: %s" % (rc, err.decode(errors="replace")))
        return 1
    images = os.path.join(env["SYMDB_DIR"], "images")
    index = [os.path.join(d, f) for d, _, fs in os.walk(images) for f in fs][0]
    good = open(index, "rb").read()
    size = len(good)
    # every symbol start and a spread of other addresses, via llvm-nm
    nm = subprocess.run(["llvm-nm-14", "--defined-only", args.binary],
                        stdout=subprocess.PIPE, check=True).stdout.decode()
    addrs = sorted({int(line.split()[0], 16) for line in nm.splitlines()
                    if line and line[0] in "0123456789abcdef"})
    addrs += [a + 3 for a in addrs] + [0, 1 << 40]
    stdin = "".join("0x%x\n" % a for a in addrs).encode()
    query = [args.symdb, "query", "--no-build", "--obj", args.binary]
    rc, want, err = run(query, stdin, env)
    if rc != 0:
        print("FAIL: query on the undamaged file exited %d: %s" % (rc, err.decode()))
        return 1
    # header (128) + directory: every byte; the tables: every step-th byte
    dir_end = 128 + 40 * int.from_bytes(good[88:92], "big")
    offsets = list(range(min(dir_end, size))) + list(range(dir_end, size, args.step))
    failures = []
    counts = {"prefix": 0, "flip": 0, "caught": 0, "unchanged": 0}
    every = 1
    differs = set()
    ndiffers = 0
    if args.driver:
        every = max(1, args.cli_every)
        cli_anyway = set(offsets[::every])  # the flips the CLI runs in any case
        afile = os.path.join(args.scratch, "addrs.txt")
        with open(afile, "w") as f:
            f.write("".join("%x\n" % a for a in sorted(set(addrs))))
        p = subprocess.run([args.driver, env["SYMDB_DIR"], args.binary, index, afile,
                            str(args.step), str(dir_end)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=600)
        for line in p.stdout.decode(errors="replace").splitlines():
            if line.startswith("differs "):
                k = int(line.split()[1])
                if k in cli_anyway:
                    continue  # the CLI runs it anyway
                if ndiffers % max(1, args.differs_every) == 0:
                    differs.add(k)
                ndiffers += 1
            else:
                print(line)
        if p.returncode != 0 or crashed(p.returncode, p.stderr):
            print("FAIL sweep_driver exited %d: %s" % (p.returncode,
                                                        p.stderr.decode(errors="replace")[-3000:]))
            return 1
        if open(index, "rb").read() != good:
            print("FAIL sweep_driver did not restore the index file")
            return 1

    def damage(data):
        with open(index, "wb") as f:
            f.write(data)

    try:
        for i, n in enumerate(range(0, size, args.step)):
            if i % every:
                continue
            damage(good[:n])
            counts["prefix"] += 1
            rc, out, err = run(query, stdin, leak_scan_env(env, counts["prefix"]))
            if crashed(rc, err) or rc != 4 or len(err.splitlines()) != 1:
                failures.append("prefix %d: exit %d, stderr %r" % (n, rc, err[:200]))
        for i, k in enumerate(offsets):
            sampled = i % every == 0
            if not sampled and k not in differs:
                continue
            b = bytearray(good)
            b[k] ^= 0xFF
            damage(bytes(b))
            counts["flip"] += 1
            flip_env = leak_scan_env(env, counts["flip"])
            # (a flip that is only in differs: its plain open, for the
            # printers; the driver checked its verified open)
            if sampled:
                rc, out, err = run(query + ["--verify"], stdin, flip_env)
                if crashed(rc, err):
                    failures.append("flip %d (verify): crash, exit %d, %r" % (k, rc, err[:300]))
                elif rc == 4 and len(err.splitlines()) == 1:
                    counts["caught"] += 1
                elif rc == 0 and out == want:
                    counts["unchanged"] += 1
                else:
                    failures.append("flip %d (verify): exit %d, output %s, stderr %r"
                                    % (k, rc, "same" if out == want else "different", err[:200]))
            rc, out, err = run(query, stdin, flip_env)
            if crashed(rc, err):
                failures.append("flip %d (plain open): crash, exit %d, %r" % (k, rc, err[:300]))
            elif k < dir_end and not (rc == 4 and len(err.splitlines()) == 1) and \
                    not (rc == 0 and out == want):
                failures.append("flip %d (plain open, header or directory): exit %d, output %s"
                                % (k, rc, "same" if out == want else "different"))
    finally:
        damage(good)
    scope = ("every case" if every == 1 else
             "every %dth case and %s flips answered differently" %
             (every, "the %d other" % len(differs) if args.differs_every <= 1 else
              "every %dth of the %d others" % (args.differs_every, ndiffers)))
    rejected = counts["prefix"] - sum(f.startswith("prefix") for f in failures)
    print("%s: %d-byte index; the CLI on %s: %d prefixes rejected; %d flips (verified open "
          "%d caught, %d harmless)" % (args.binary, size, scope, rejected, counts["flip"],
                                       counts["caught"], counts["unchanged"]))
    for f in failures[:30]:
        print("FAIL " + f)
    if len(failures) > 30:
        print("... and %d more" % (len(failures) - 30))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
