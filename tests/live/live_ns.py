# SPDX-License-Identifier: MIT
"""`symdb query --pid` answers from the file the process actually mapped, not
from whatever the same path names to the caller (issue 15, item 1):

- container: live_target runs in its own mount namespace where PLUGIN's
  path is bind-mounted over by ALT (another build); the test's namespace
  still sees PLUGIN there.  Answers must equal llvm-symbolizer-14 on the
  in-namespace file (read back through /proc/PID/root/PATH), not on PLUGIN.
- replaced: live_target loads PLUGIN's copy, then ALT is renamed over that
  path (maps shows it "(deleted)").  Answers must equal llvm-symbolizer-14
  on PLUGIN (the mapped file).
- overmounted: as replaced, but ALT is bind-mounted over the path in the
  target's namespace, so maps shows the path as it is and only the inode
  tells the files apart.

Each case first checks that the two files give different answers at the
chosen addresses, so a lookup through the plain path fails the test.

usage: live_ns.py container|replaced|overmounted SYMDB TARGET PLUGIN.so ALT.so DELETED.so SCRATCH
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_lib as L  # noqa: E402

NAMES = ("plugin_probe", "plugin_probe.ret")


def vaddr_in(maps, addr, elf):
    """addr's virtual address in elf (the mapped file), from maps."""
    for start, end, pgoff, _perms, _ino, _path in maps:
        if start <= addr < end:
            fileoff = addr - start + pgoff
            for off, vaddr, filesz in L.load_segments(L.file_head(elf)):
                if off <= fileoff < off + filesz:
                    return fileoff - off + vaddr
    L.fail("0x%x: in no PT_LOAD of %s" % (addr, elf))


def same_bytes(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()


def check(symdb, p, named, mapped, other, env, what):
    """symdb's answers equal llvm on mapped, which differs from other."""
    maps = L.read_maps(p.pid)
    addrs = [named[n] for n in NAMES]
    vaddrs = [vaddr_in(maps, a, mapped) for a in addrs]
    want = "".join(L.llvm(mapped, v, "LLVM") for v in vaddrs)
    wrong = "".join(L.llvm(other, v, "LLVM") for v in vaddrs)
    if want == wrong:
        L.fail("%s: both builds answer alike at these addresses: the test cannot fail" % what)
    r = subprocess.run([symdb, "query", "--pid", str(p.pid)] + ["0x%x" % a for a in addrs],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        L.fail("%s: exit %d: %s" % (what, r.returncode, r.stderr))
    if r.stdout != want:
        L.fail("%s: symdb differs from llvm-symbolizer-14 on the mapped file%s:\n"
               "--- symdb\n%s--- llvm (mapped)\n%s--- llvm (the path's other file)\n%s"
               % (what, " (it answered from the other file)" if r.stdout == wrong else "",
                  r.stdout, want, wrong))
    print("ok: %s: %d addresses equal llvm-symbolizer-14 on the mapped file, "
          "not the other build at its path" % (what, len(addrs)))


def container(symdb, target, plugin, alt, deleted, scratch, env):
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        L.skip("unshare --mount is not permitted here: " + probe.stderr.strip())
    path = os.path.join(scratch, "lib", "libnsplugin.so")
    os.makedirs(os.path.dirname(path))
    shutil.copyfile(plugin, path)
    copydir = os.path.join(scratch, "copy")
    os.makedirs(copydir)
    # in its namespace, path is ALT; in ours it stays PLUGIN's copy
    script = 'mount --bind "$1" "$2" || exit 77; exec "$3" "$2" "$4" "$5"'
    p, named = L.start_cmd(["unshare", "--mount", "--propagation", "private", "--",
                      "sh", "-c", script, "sh", alt, path, target, deleted, copydir])
    try:
        inside = "/proc/%d/root%s" % (p.pid, path)
        if not same_bytes(inside, alt) or not same_bytes(path, plugin):
            L.fail("the bind mount did not give the namespace its own file at " + path)
        check(symdb, p, named, inside, path, env, "container")
    finally:
        L.stop_target(p)


def replaced(symdb, target, plugin, alt, deleted, scratch, env):
    path = os.path.join(scratch, "lib", "libreplaced.so")
    os.makedirs(os.path.dirname(path))
    shutil.copyfile(plugin, path)
    copydir = os.path.join(scratch, "copy")
    os.makedirs(copydir)
    p, named = L.start_cmd([target, path, deleted, copydir])
    try:
        kept = os.path.join(scratch, "mapped.so")
        os.link(path, kept)  # the mapped file, for the oracle
        tmp = path + ".new"
        shutil.copyfile(alt, tmp)
        os.rename(tmp, path)
        check(symdb, p, named, kept, path, env, "replaced")
    finally:
        L.stop_target(p)


def overmounted(symdb, target, plugin, alt, deleted, scratch, env):
    """Replaced without "(deleted)": ALT bind-mounted over the path in the
    target's namespace after it loaded PLUGIN; maps still shows the path,
    which now names another inode there."""
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        L.skip("unshare --mount is not permitted here: " + probe.stderr.strip())
    path = os.path.join(scratch, "lib", "libovermounted.so")
    os.makedirs(os.path.dirname(path))
    shutil.copyfile(plugin, path)
    copydir = os.path.join(scratch, "copy")
    os.makedirs(copydir)
    p, named = L.start_cmd(["unshare", "--mount", "--propagation", "private", "--",
                      target, path, deleted, copydir])
    try:
        r = subprocess.run(["nsenter", "--mount=/proc/%d/ns/mnt" % p.pid, "mount", "--bind",
                            alt, path], capture_output=True, text=True)
        if r.returncode != 0:
            L.skip("mount --bind in the target's namespace failed: " + r.stderr.strip())
        if any(m[5].endswith(" (deleted)") for m in L.read_maps(p.pid) if path in m[5]):
            L.fail("maps shows %s as deleted: the test does not test that" % path)
        if not same_bytes("/proc/%d/root%s" % (p.pid, path), alt):
            L.fail("the bind mount did not replace %s in the target's namespace" % path)
        check(symdb, p, named, path, alt, env, "overmounted")
    finally:
        L.stop_target(p)


def main():
    case, symdb, target, plugin, alt, deleted, scratch = sys.argv[1:8]
    if not shutil.which(L.LLVM):
        L.skip(L.LLVM + " is not installed")
    if os.geteuid() != 0:
        L.skip("mount namespaces and /proc/PID/map_files need root")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = dict(os.environ, SYMDB_DIR=os.path.join(scratch, "db"), TMPDIR=scratch)
    {"container": container, "replaced": replaced, "overmounted": overmounted}[case](
        symdb, target, plugin, alt, deleted, scratch, env)


main()
