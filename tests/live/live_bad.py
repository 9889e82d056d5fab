# SPDX-License-Identifier: MIT
"""Bad inputs of `symdb query --pid` (issue 15): a pid that does not exist,
a process that exits in the middle of a stream of batches, and a process
the caller may not read (a non-root user, through setpriv, querying a
root process).  Each answer that is given must still equal
llvm-symbolizer-14 on the mapped file; what cannot be answered gets a
per-address "??" and one line on stderr, never a crash or a lost batch.

usage: live_bad.py CASE SYMDB TARGET PLUGIN.so DELETED.so SCRATCH
CASE: nopid | exit_mid_batch | permission
"""
import os
import select
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_lib as L  # noqa: E402


def free_pid():
    """A pid no process has (the highest free one: least likely to be
    taken meanwhile)."""
    with open("/proc/sys/kernel/pid_max") as f:
        top = int(f.read())
    for pid in range(top - 1, 300, -1):
        if not os.path.exists("/proc/%d" % pid):
            return pid
    L.skip("no free pid")


def case_nopid(symdb, env):
    pid = free_pid()
    r = subprocess.run([symdb, "query", "--pid", str(pid), "0x1000"], capture_output=True,
                       text=True, env=env)
    want = "symdb: /proc/%d: no such process\n" % pid
    if r.returncode != 1 or r.stdout != "" or r.stderr != want:
        L.fail("nopid: exit %d, stdout %r, stderr %r (want exit 1, %r)"
               % (r.returncode, r.stdout, r.stderr, want))


def read_block(q, timeout=120):
    """One LLVM-style answer (through its empty line) from q's stdout, read
    from the descriptor (a buffered reader would hide lines from select)."""
    out = b""
    fd = q.stdout.fileno()
    while not out.endswith(b"\n\n"):
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            L.fail("no answer from symdb query within %d s" % timeout)
        chunk = os.read(fd, 65536)
        if not chunk:
            L.fail("symdb query closed its output early; so far %r" % out)
        out += chunk
    return out.decode()


def case_exit_mid_batch(symdb, env, target, plugin, deleted, scratch):
    p, named = L.start_target(target, plugin, deleted, os.path.join(scratch, "copy"))
    maps = L.read_maps(p.pid)
    main_where = L.normalise(p.pid, maps, named["main_worker.ret"])
    q = subprocess.Popen([symdb, "query", "--pid", str(p.pid)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    # first batch: the process is alive
    q.stdin.write(b"0x%x\n" % named["main_worker.ret"])
    q.stdin.flush()
    first = read_block(q)
    want = L.llvm(main_where[1], main_where[2], "LLVM")
    if first != want:
        L.fail("first batch: %r, llvm-symbolizer %r" % (first, want))
    L.stop_target(p)  # killed and reaped: /proc/PID is gone
    # second batch: a module it had (still answered), one never opened
    # (the plugin: gone), an address outside every mapping (gone)
    q.stdin.write(b"0x%x\n0x%x\n0x10\n" % (named["main_worker.ret"], named["plugin_probe"]))
    q.stdin.close()
    out = b""
    while True:
        chunk = os.read(q.stdout.fileno(), 65536)
        if not chunk:
            break
        out += chunk
    out = out.decode()
    err = q.stderr.read().decode()
    q.wait(timeout=300)
    want2 = want + "??\n??:0:0\n\n" * 2
    if out != want2 or q.returncode != 1 or "the process exited" not in err:
        L.fail("after exit: exit %d, stdout %r (want %r), stderr %r"
               % (q.returncode, out, want2, err))


def case_permission(symdb, env, target, plugin, deleted, scratch):
    if os.geteuid() != 0:
        L.skip("needs root to start the process a non-root user may not read")
    if not shutil.which("setpriv"):
        L.skip("setpriv is not installed")
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    # The build tree may lie where nobody cannot reach it (a clone under /root)
    probe = subprocess.run(nobody + [symdb, "help", "query"], capture_output=True, text=True)
    if probe.returncode != 0:
        L.skip("user 65534 cannot run %s: %s" % (symdb, probe.stderr.strip()))
    # ... nor write there: its database and temporary files go to /tmp
    home = tempfile.mkdtemp(prefix="symdb-live-perm-", dir="/tmp")
    os.chmod(home, 0o777)
    p, named = L.start_target(target, plugin, deleted, os.path.join(scratch, "copy"))
    try:
        r = subprocess.run(nobody + [symdb, "query", "--db", os.path.join(home, "db"), "--pid",
                                     str(p.pid), "0x%x" % named["main"]],
                           capture_output=True, text=True, env=dict(env, TMPDIR=home))
    finally:
        L.stop_target(p)
        shutil.rmtree(home, ignore_errors=True)
    want = "symdb: /proc/%d/maps: Permission denied\n" % p.pid
    if r.returncode != 1 or r.stdout != "" or r.stderr != want:
        L.fail("permission: exit %d, stdout %r, stderr %r (want exit 1, %r)"
               % (r.returncode, r.stdout, r.stderr, want))


def main():
    case, symdb, target, plugin, deleted, scratch = sys.argv[1:7]
    if not shutil.which(L.LLVM):
        L.skip(L.LLVM + " is not installed")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = dict(os.environ, SYMDB_DIR=os.path.join(scratch, "db"), TMPDIR=scratch)
    if case == "nopid":
        case_nopid(symdb, env)
    elif case == "exit_mid_batch":
        case_exit_mid_batch(symdb, env, target, plugin, deleted, scratch)
    elif case == "permission":
        case_permission(symdb, env, target, plugin, deleted, scratch)
    else:
        L.fail("unknown case " + case)
    print("ok: " + case)


main()
