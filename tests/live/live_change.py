# SPDX-License-Identifier: MIT
"""`symdb query --pid` while the process changes, and at the edges of its
mappings.  The programs are compiled here (gcc, non-PIE, -g) and every
answer is compared with llvm-symbolizer-14 on the file mapped at the
address (the vaddr computed here from /proc/PID/maps and the program
headers) or with eu-addr2line --pid, never with symdb's own output.

usage: live_change.py CASE SYMDB SCRATCH
CASE:
  bss      a DATA request for a .bss variable in the last, file-backed page
           of the data segment: the variable (it is past p_filesz, inside
           p_memsz); an address in the padding after the text segment's
           file bytes: "??" and a reason naming it, as eu-addr2line's "??"
           (both were answered as a bogus symbol, _end, from vaddr 2^64-1)
  reload   one stream: a library's function, then the library unloaded and
           another loaded at the same address (dlclose + dlopen): the new
           library's function (the stream answered from the old mapping)
  exec     one stream: the program execve()s another non-PIE program (same
           pid, same start time): its function, not the old program's
  zombie   one stream: a module first met after the process exited but was
           not reaped: "the process exited" (was "Unknown system error")
  pidarg   --pid takes decimal only: 010 and 0x... are refused, exit 2
  jitlate  one stream: anonymous code asked before the process's perf map
           exists is "??"; once the map is written, the name it gives (the
           missing map was remembered for the whole run); a map older than
           the process is named on stderr with the reason
"""
import os
import select
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_lib as L  # noqa: E402

PROGRAM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int small_data = 1;
int in_bss[8];

__attribute__((noinline)) int work_before(int x) { return x * 7 + small_data; }

int main(int argc, char **argv)
{
	char line[256];
	void *h = NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("in_bss %p\nwork_before %p\n", (void *)in_bss, (void *)work_before);
	if (argc > 1) {
		h = dlopen(argv[1], RTLD_NOW);
		if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
		printf("a_func %p\n", dlsym(h, "a_func"));
	}
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(code, 0xc3, 4096);
	printf("jit %p\nready\n", (void *)code);
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "swap")) {
			dlclose(h);
			h = dlopen(argv[2], RTLD_NOW);
			if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
			printf("b_func %p\n", dlsym(h, "b_func"));
		} else if (!strcmp(line, "exec")) {
			execv(argv[3], (char *[]){ argv[3], NULL });
			perror("execv");
			return 1;
		}
	}
	return work_before(argc);
}
"""

AFTER = r"""
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) int work_after(int x) { return x * 3 + 1; }
int main(void)
{
	char line[64];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("work_after %p\nready\n", (void *)work_after);
	while (fgets(line, sizeof line, stdin))
		;
	return work_after(1);
}
"""

LIB_A = "int a_pad(int x) { return x + 1; }\nint a_func(int x) { return x * 2; }\n"
LIB_B = ("int b_pad1(int x) { return x + 3; }\nint b_pad2(int x) { return x - 3; }\n"
         "int b_func(int x) { return x * 5; }\n")


def sh(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        L.fail("%s: %s" % (" ".join(cmd), r.stderr.strip()))


def build(scratch):
    os.makedirs(scratch, exist_ok=True)
    src = {"prog.c": PROGRAM, "after.c": AFTER, "a.c": LIB_A, "b.c": LIB_B}
    for name, text in src.items():
        with open(os.path.join(scratch, name), "w") as f:
            f.write(text)
    p = lambda n: os.path.join(scratch, n)  # noqa: E731
    sh(["gcc", "-g", "-O0", "-no-pie", "-fno-pie", "-o", p("prog"), p("prog.c"), "-ldl"])
    sh(["gcc", "-g", "-O0", "-no-pie", "-fno-pie", "-o", p("after"), p("after.c")])
    sh(["gcc", "-g", "-O0", "-fPIC", "-shared", "-o", p("liba.so"), p("a.c")])
    sh(["gcc", "-g", "-O0", "-fPIC", "-shared", "-o", p("libb.so"), p("b.c")])
    return p


def read_line(q, timeout=60):
    ready, _, _ = select.select([q.stdout], [], [], timeout)
    if not ready:
        L.fail("no line from the target within %d s" % timeout)
    line = q.stdout.readline().split()
    return line[0], int(line[1], 16)


class Stream:
    """One `symdb query --pid` fed a line at a time."""

    def __init__(self, symdb, pid, db, extra=()):
        self.q = subprocess.Popen([symdb, "--db", db, "query", "--pid", str(pid)] + list(extra),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)

    def ask(self, line, timeout=120):
        self.q.stdin.write((line + "\n").encode())
        self.q.stdin.flush()
        out = b""
        fd = self.q.stdout.fileno()
        while not out.endswith(b"\n\n"):
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                L.fail("no answer to %r within %d s" % (line, timeout))
            chunk = os.read(fd, 65536)
            if not chunk:
                L.fail("symdb query ended early; so far %r" % out)
            out += chunk
        return out.decode()

    def close(self):
        self.q.stdin.close()
        rc = self.q.wait(timeout=120)
        return rc, self.q.stderr.read().decode()


def segments(path):
    """PT_LOAD (offset, vaddr, filesz, memsz, flags) of a 64-bit LE ELF."""
    data = L.file_head(path)
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    out = []
    for i in range(phnum):
        ptype, flags, off, vaddr, _pa, filesz, memsz = struct.unpack_from(
            "<IIQQQQQ", data, phoff + i * phentsize)
        if ptype == 1:
            out.append((off, vaddr, filesz, memsz, flags))
    return out


def mapping_of(pid, addr):
    for m in L.read_maps(pid):
        if m[0] <= addr < m[1]:
            return m
    L.fail("0x%x is in no mapping of pid %d" % (addr, pid))


def llvm_block(obj, line):
    return subprocess.run([L.LLVM, "--obj", obj], input=line + "\n", capture_output=True,
                          text=True, check=True).stdout


def expect(what, got, want):
    if got != want:
        L.fail("%s: symdb %r, llvm-symbolizer-14 %r" % (what, got, want))


def case_bss(symdb, p, db):
    q, a = L.start_cmd([p("prog")])
    try:
        m = mapping_of(q.pid, a["in_bss"])
        if not m[5]:
            L.fail("in_bss 0x%x is not in a file-backed page (layout of this gcc)" % a["in_bss"])
        fileoff = a["in_bss"] - m[0] + m[2]
        data = [s for s in segments(p("prog")) if s[0] <= fileoff < s[0] + s[3]]
        if not data or fileoff < data[0][0] + data[0][2]:
            L.fail("in_bss (file offset 0x%x) is not past p_filesz of its segment" % fileoff)
        r = subprocess.run([symdb, "--db", db, "query", "--pid", str(q.pid),
                            "DATA 0x%x" % a["in_bss"]], capture_output=True, text=True)
        expect("DATA in_bss", r.stdout, llvm_block(p("prog"), "DATA 0x%x" % a["in_bss"]))
        # the padding after the text segment's file bytes, in its mapping
        text = [s for s in segments(p("prog")) if s[4] & 1][0]
        pad = text[1] + text[2] + 16
        m = mapping_of(q.pid, pad)
        if not (m[0] <= pad < m[1]) or "x" not in m[3]:
            L.fail("0x%x: not in the text mapping" % pad)
        r = subprocess.run([symdb, "--db", db, "query", "--pid", str(q.pid), "0x%x" % pad],
                           capture_output=True, text=True)
        eu = L.eu_innermost(q.pid, pad)
        if eu is not None:
            L.fail("padding 0x%x: eu-addr2line names %s (the test expects ??)" % (pad, eu))
        want_err = "symdb: pid %d: %s: in the file's mapping but in none of its segments\n" % (
            q.pid, p("prog"))
        if r.stdout != "??\n??:0:0\n\n" or r.returncode != 1 or r.stderr != want_err:
            L.fail("padding 0x%x: exit %d, stdout %r, stderr %r (want ??, exit 1, %r)"
                   % (pad, r.returncode, r.stdout, r.stderr, want_err))
    finally:
        L.stop_target(q)


def case_reload(symdb, p, db):
    q, a = L.start_cmd([p("prog"), p("liba.so"), p("libb.so")])
    s = Stream(symdb, q.pid, db)
    try:
        got = s.ask("0x%x" % a["a_func"])
        m = mapping_of(q.pid, a["a_func"])
        vaddr = L.normalise(q.pid, L.read_maps(q.pid), a["a_func"])[2]
        expect("a_func", got, llvm_block(m[5], "0x%x" % vaddr))
        old = [x for x in L.read_maps(q.pid) if x[5] == p("liba.so")]
        q.stdin.write("swap\n")
        q.stdin.flush()
        _, b = read_line(q)
        new = [x for x in L.read_maps(q.pid) if x[5] == p("libb.so")]
        if not new or new[0][0] != old[0][0]:
            L.fail("libb.so was not loaded where liba.so was (0x%x); this case needs it"
                   % old[0][0])
        vaddr = L.normalise(q.pid, L.read_maps(q.pid), b)[2]
        expect("b_func after dlclose + dlopen", s.ask("0x%x" % b),
               llvm_block(p("libb.so"), "0x%x" % vaddr))
    finally:
        s.close()
        L.stop_target(q)


def case_exec(symdb, p, db):
    q, a = L.start_cmd([p("prog"), p("liba.so"), p("libb.so"), p("after")])
    s = Stream(symdb, q.pid, db)
    try:
        expect("work_before", s.ask("0x%x" % a["work_before"]),
               llvm_block(p("prog"), "0x%x" % a["work_before"]))
        q.stdin.write("exec\n")
        q.stdin.flush()
        name, w = read_line(q)
        if name != "work_after":
            L.fail("after exec: %s" % name)
        read_line_ready = q.stdout.readline()  # "ready"
        if read_line_ready.strip() != "ready":
            L.fail("after exec: %r" % read_line_ready)
        m = mapping_of(q.pid, w)
        if m[5] != p("after"):
            L.fail("0x%x is not in %s after exec" % (w, p("after")))
        expect("work_after after execve", s.ask("0x%x" % w), llvm_block(p("after"), "0x%x" % w))
    finally:
        s.close()
        L.stop_target(q)


def state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def case_zombie(symdb, p, db):
    q, a = L.start_cmd([p("prog"), p("liba.so")])
    s = Stream(symdb, q.pid, db)
    try:
        expect("work_before", s.ask("0x%x" % a["work_before"]),
               llvm_block(p("prog"), "0x%x" % a["work_before"]))
        os.kill(q.pid, signal.SIGKILL)
        for _ in range(200):  # not reaped: q.wait() is not called yet
            if state(q.pid) == "Z":
                break
            time.sleep(0.05)
        else:
            L.fail("pid %d did not become a zombie" % q.pid)
        got = s.ask("0x%x" % a["a_func"])
        if got != "??\n??:0:0\n\n":
            L.fail("a_func of a zombie: %r" % got)
        # still answered for the module opened while it lived
        expect("work_before of a zombie", s.ask("0x%x" % a["work_before"]),
               llvm_block(p("prog"), "0x%x" % a["work_before"]))
    finally:
        rc, err = s.close()
        L.stop_target(q)
    want = "symdb: pid %d: %s: the process exited\n" % (q.pid, p("liba.so"))
    if err != want or rc != 1:
        L.fail("zombie: exit %d, stderr %r (want exit 1, %r)" % (rc, err, want))


def case_pidarg(symdb, p, db):
    for arg in ("010", "0x10", "0", "-5", "12a", "", "99999999999"):
        r = subprocess.run([symdb, "--db", db, "query", "--pid", arg, "0x1000"],
                           capture_output=True, text=True)
        want = "symdb: invalid value '%s' for --pid (see 'symdb help query')\n" % arg
        if r.returncode != 2 or r.stderr != want or r.stdout:
            L.fail("--pid %r: exit %d, stdout %r, stderr %r (want exit 2, %r)"
                   % (arg, r.returncode, r.stdout, r.stderr, want))


def case_jitlate(symdb, p, db):
    q, a = L.start_cmd([p("prog")])
    perfmap = "/tmp/perf-%d.map" % q.pid
    s = Stream(symdb, q.pid, db)
    try:
        jit = a["jit"] + 0x10
        got = s.ask("0x%x" % jit)
        if got != "??\n??:0:0\n\n":
            L.fail("JIT code before the map exists: %r" % got)
        with open(perfmap, "w") as f:
            f.write("%x 40 jitted_fn\n" % a["jit"])
        got = s.ask("0x%x" % jit)
        if got != "jitted_fn\n??:0:0\n\n":
            L.fail("JIT code after the map was written: %r (the missing map was kept)" % got)
        rc, err = s.close()
        # a map last written before the process started: named, with why
        os.utime(perfmap, (978307200, 978307200))  # 2001-01-01
        r = subprocess.run([symdb, "--db", db, "query", "--pid", str(q.pid), "0x%x" % jit],
                           capture_output=True, text=True)
        if r.stdout != "??\n??:0:0\n\n" or "written before process %d started" % q.pid \
                not in r.stderr or perfmap not in r.stderr:
            L.fail("stale map: stdout %r, stderr %r" % (r.stdout, r.stderr))
    finally:
        if os.path.exists(perfmap):
            os.unlink(perfmap)
        L.stop_target(q)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    case, symdb, scratch = sys.argv[1:]
    p = build(os.path.join(scratch, "src"))
    db = os.path.join(scratch, "db")
    {"bss": case_bss, "reload": case_reload, "exec": case_exec, "zombie": case_zombie,
     "pidarg": case_pidarg, "jitlate": case_jitlate}[case](symdb, p, db)
    print("ok: %s" % case)


if __name__ == "__main__":
    main()
