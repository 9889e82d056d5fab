# SPDX-License-Identifier: MIT
"""What the tests/live Python tests share: the target process, /proc/PID/maps
read independently of symdb, ELF program headers, and the oracles."""
import os
import struct
import subprocess
import sys

LLVM = "llvm-symbolizer-14"


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def start_target(target, plugin, deleted, copydir, user=None):
    """Start live_target; returns (process, {name: address})."""
    os.makedirs(copydir, exist_ok=True)
    return start_cmd([target, plugin, deleted, copydir])


def start_cmd(cmd):
    """Start live_target as cmd (possibly under unshare or a wrapper) and
    read its "NAME ADDR" lines up to "ready"; returns (process, {name: address})."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    addrs = {}
    for line in p.stdout:
        line = line.strip()
        if line == "ready":
            return p, addrs
        name, addr = line.split()
        addrs[name] = int(addr, 16)
    fail("live_target exited before 'ready' (status %s)" % p.wait())


def stop_target(p):
    if p.poll() is None:
        p.kill()
    p.wait()


def read_maps(pid):
    """[(start, end, pgoff, perms, inode, path)] from /proc/PID/maps."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.rstrip("\n").split(None, 5)
            start, end = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].lstrip() if len(parts) > 5 else ""
            out.append((start, end, int(parts[2], 16), parts[1], int(parts[4]), path))
    return out


def load_segments(data):
    """PT_LOAD (offset, vaddr, filesz) of a 64-bit little-endian ELF image."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        fail("not a 64-bit little-endian ELF file")
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    segs = []
    for i in range(phnum):
        ptype, _flags, off, vaddr, _paddr, filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize)
        if ptype == 1:
            segs.append((off, vaddr, filesz))
    return segs


def file_head(path, n=65536):
    with open(path, "rb") as f:
        return f.read(n)


def normalise(pid, maps, addr, vdso_file=None):
    """(mapping path as maps shows it, file for the oracle, vaddr) of addr:
    the file offset from the mapping, then the PT_LOAD holding it."""
    for start, end, pgoff, _perms, _ino, path in maps:
        if start <= addr < end:
            break
    else:
        fail("0x%x is in no mapping of pid %d" % (addr, pid))
    if path == "[vdso]":
        oracle = vdso_file
    elif path.endswith(" (deleted)"):
        oracle = "/proc/%d/map_files/%x-%x" % (pid, start, end)
    else:
        oracle = path
    fileoff = addr - start + pgoff
    for off, vaddr, filesz in load_segments(file_head(oracle)):
        if off <= fileoff < off + filesz:
            return path, oracle, fileoff - off + vaddr
    fail("0x%x: file offset 0x%x is in no PT_LOAD of %s" % (addr, fileoff, oracle))


def dump_vdso(pid, maps, out):
    """Write pid's vDSO to out; returns its mapping's start."""
    for start, end, _pgoff, _perms, _ino, path in maps:
        if path == "[vdso]":
            with open("/proc/%d/mem" % pid, "rb") as m:
                m.seek(start)
                data = m.read(end - start)
            with open(out, "wb") as f:
                f.write(data)
            return start
    return None


def vdso_functions(vdso_file, start):
    """Runtime addresses inside the vDSO's functions (+0 and +4)."""
    nm = subprocess.run(["llvm-nm-14", "--defined-only", "-D", vdso_file],
                        capture_output=True, text=True, check=True).stdout
    segs = load_segments(file_head(vdso_file))
    out = []
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "Tt" and parts[2].startswith("__vdso_"):
            v = int(parts[0], 16)
            for off, vaddr, filesz in segs:
                if vaddr <= v < vaddr + filesz:
                    out += [start + v - vaddr + off, start + v - vaddr + off + 4]
                    break
    return sorted(set(out))[:6]


def llvm(obj, vaddr, style):
    return subprocess.run([LLVM, "--obj", obj, "--output-style=" + style, "0x%x" % vaddr],
                          capture_output=True, text=True, check=True).stdout


def eu_innermost(pid, addr):
    """eu-addr2line --pid's innermost function name, or None for '??'."""
    out = subprocess.run(["eu-addr2line", "--pid=%d" % pid, "-f", "-i", "0x%x" % addr],
                         capture_output=True, text=True).stdout.splitlines()
    name = out[0].split()[0] if out and out[0].split() else "??"
    return None if name == "??" else name


def same_address_names(path, a, b):
    """Whether names a and b are aliases: symbols of one address in path."""
    addr = {}
    for flag in ([], ["-D"]):
        nm = subprocess.run(["llvm-nm-14", "--defined-only"] + flag + [path],
                            capture_output=True, text=True).stdout
        for line in nm.splitlines():
            parts = line.split()
            if len(parts) == 3:
                addr.setdefault(parts[2].split("@")[0], set()).add(parts[0])
    return bool(addr.get(a, set()) & addr.get(b, set()))
