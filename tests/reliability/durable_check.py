#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""durable_check.py LOG DB (--commit | --no-commit) [--plant WHAT]

Judge the publishing order of SPEC §12.5 from durable_shim.c's record LOG
of one symdb command on database DB.  For every rename into DB/images/:
  1. the renamed inode was fsynced before the rename (its bytes are on disk
     before a name can point at them);
  2. the directory it landed in (its inode, resolved here after the run)
     was fsynced after the rename and, with --commit, before the LMDB commit
     that follows it in that process began, and that commit exists (the
     catalog never names a file whose directory entry could still vanish);
  3. when that directory was created by the same command, DB/images/ was
     fsynced after the mkdir and before that same point.
--plant drop-file-fsync | drop-dir-fsync removes those fsyncs from the
record first: the check must then fail (the test shows it can).
Exit 0 when every rename passes, 1 otherwise; one line per rename.
"""
import argparse
import os
import sys


def parse(path):
    ev = []
    with open(path) as f:
        for line in f:
            pid, kind, *rest = line.rstrip("\n").split(" ", 2)
            if kind == "R":  # INODE DESTINATION (which may hold spaces)
                rest = rest[0].split(" ", 1)
            ev.append((int(pid), kind, rest))
    return ev


def inode(path):
    st = os.stat(path)
    return "%d:%d" % (st.st_dev, st.st_ino)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("db")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--commit", action="store_true")
    g.add_argument("--no-commit", action="store_true")
    ap.add_argument("--plant", choices=["drop-file-fsync", "drop-dir-fsync"])
    a = ap.parse_args()

    images = os.path.realpath(os.path.join(a.db, "images"))
    images_ino = inode(images)
    ev = parse(a.log)
    renames = []
    for i, (pid, kind, rest) in enumerate(ev):
        if kind != "R":
            continue
        ino, dst = rest[0], rest[1]
        d = os.path.realpath(os.path.dirname(dst))
        if os.path.dirname(d) == images:
            renames.append((i, pid, ino, dst, d))
    if not renames:
        print("FAIL: no rename into %s recorded" % images)
        return 1
    if a.plant == "drop-file-fsync":
        drop = {r[2] for r in renames}
        ev = [e if not (e[1] == "F" and e[2][0] in drop) else (e[0], "-", []) for e in ev]
    elif a.plant == "drop-dir-fsync":
        drop = {inode(r[4]) for r in renames}
        ev = [e if not (e[1] == "F" and e[2][0] in drop) else (e[0], "-", []) for e in ev]

    def synced(ino, lo, hi):
        return [j for j in range(lo, hi) if ev[j][1] == "F" and ev[j][2][0] == ino]

    bad = 0
    for i, pid, ino, dst, d in renames:
        why = []
        if not synced(ino, 0, i):
            why.append("the file (inode %s) was not fsynced before its rename" % ino)
        # the end of the window: the next commit's start in this process
        end, commit = len(ev), None
        for j in range(i + 1, len(ev)):
            if ev[j][0] == pid and ev[j][1] == "C":
                commit = j
                break
        if a.commit:
            if commit is None:
                why.append("no catalog commit followed the rename")
            else:
                end = max(j for j in range(i, commit) if ev[j][0] == pid and ev[j][1] == "B")
        dino = inode(d)
        if not synced(dino, i + 1, end):
            why.append("its directory %s was not fsynced after the rename%s"
                       % (d, " and before the catalog commit" if a.commit else ""))
        made = [j for j in range(0, i) if ev[j][1] == "M" and os.path.realpath(ev[j][2][0]) == d]
        if made and not synced(images_ino, made[-1] + 1, end):
            why.append("%s was created but %s was not fsynced before %s"
                       % (d, images, "the commit" if a.commit else "the end"))
        if why:
            bad += 1
            print("FAIL: rename to %s: %s" % (dst, "; ".join(why)))
        else:
            print("ok: rename to %s (event %d): file fsynced first, directory after%s"
                  % (dst, i, ", then the commit (event %d)" % commit if a.commit else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
