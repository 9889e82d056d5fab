# SPDX-License-Identifier: MIT
"""Acceptance test of `symdb query --pid` (issue 15, item 1): live_target (a
PIE or non-PIE executable, a dlopen()ed library, a deleted library, a
thread) prints its runtime addresses; `symdb query --pid` resolves them in
every output style, and each answer must equal llvm-symbolizer-14 on the
mapped file at the address normalised independently here (from
/proc/PID/maps and the file's program headers), and agree with
`eu-addr2line --pid` on the innermost function wherever eu-addr2line
answers.  vDSO addresses are compared with llvm-symbolizer-14 on the vDSO
read from /proc/PID/mem.

usage: live_pid.py SYMDB TARGET PLUGIN.so DELETED.so SCRATCH
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_lib as L  # noqa: E402


def blocks(text):
    """LLVM style: one block per address, each ending in an empty line."""
    out = text.split("\n\n")
    return [b + "\n\n" for b in out[:-1]]


def main():
    symdb, target, plugin, deleted, scratch = sys.argv[1:6]
    for tool in (L.LLVM, "eu-addr2line", "llvm-nm-14"):
        if not shutil.which(tool):
            L.skip(tool + " is not installed")
    if os.geteuid() != 0:
        L.skip("reading /proc/PID/map_files needs root (CAP_SYS_ADMIN)")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = dict(os.environ, SYMDB_DIR=os.path.join(scratch, "db"), TMPDIR=scratch)
    p, named = L.start_target(target, plugin, deleted, os.path.join(scratch, "copy"))
    try:
        maps = L.read_maps(p.pid)
        vdso = os.path.join(scratch, "vdso.so")
        vstart = L.dump_vdso(p.pid, maps, vdso)
        addrs = sorted(named.items(), key=lambda kv: kv[0])
        if vstart is not None:
            addrs += [("vdso+%x" % (a - vstart), a) for a in L.vdso_functions(vdso, vstart)]
        where = {a: L.normalise(p.pid, maps, a, vdso) for _, a in addrs}
        if not any(path.endswith(" (deleted)") for path, _, _ in where.values()):
            L.fail("no address in a deleted library: the test does not test that")
        hexes = ["0x%x" % a for _, a in addrs]
        checked = 0
        for style in ("LLVM", "GNU", "JSON"):
            r = subprocess.run([symdb, "query", "--pid", str(p.pid), "--output-style=" + style]
                               + hexes, capture_output=True, text=True, env=env)
            if r.returncode != 0:
                L.fail("%s: exit %d: %s" % (style, r.returncode, r.stderr))
            want = [L.llvm(where[a][1], where[a][2], style) for _, a in addrs]
            if style == "JSON":
                got = json.loads(r.stdout)
                for (name, a), g, w in zip(addrs, got, want):
                    w = json.loads(w)
                    if g["Symbol"] != w[0]["Symbol"] or g["Address"] != "0x%x" % a or \
                            g["ModuleName"] != where[a][0]:
                        L.fail("%s (0x%x, vaddr 0x%x of %s): JSON %s, llvm-symbolizer %s"
                               % (name, a, where[a][2], where[a][0], g, w))
                    checked += 1
                continue
            if r.stdout != "".join(want):
                L.fail("%s style differs from llvm-symbolizer-14:\n--- symdb\n%s--- llvm\n%s"
                       % (style, r.stdout, "".join(want)))
            checked += len(addrs)
            if style == "LLVM":
                llvm_blocks = blocks(r.stdout)
        # stdin gives the same as the arguments
        r = subprocess.run([symdb, "query", "--pid", str(p.pid)], input="\n".join(hexes) + "\n",
                           capture_output=True, text=True, env=env)
        if r.returncode != 0 or blocks(r.stdout) != llvm_blocks:
            L.fail("stdin: exit %d, output differs:\n%s%s" % (r.returncode, r.stdout, r.stderr))
        # eu-addr2line --pid on the innermost function
        agreed, unanswered = 0, []
        for (name, a), blk in zip(addrs, llvm_blocks):
            eu = L.eu_innermost(p.pid, a)
            ours = blk.split("\n")[0]
            if eu is None:
                unanswered.append(name)
            elif eu != ours and not L.same_address_names(where[a][1], eu, ours):
                L.fail("%s (0x%x): symdb says %s, eu-addr2line --pid %s" % (name, a, ours, eu))
            else:
                agreed += 1
        if agreed < len(addrs) // 2:
            L.fail("eu-addr2line answered only %d of %d addresses" % (agreed, len(addrs)))
    finally:
        L.stop_target(p)
    print("ok: %d answers equal llvm-symbolizer-14 over %d addresses (%d modules); "
          "eu-addr2line --pid agrees on %d, has no answer for %s"
          % (checked, len(addrs), len({w[0] for w in where.values()}), agreed,
             ", ".join(unanswered) or "none"))


main()
