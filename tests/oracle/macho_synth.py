# SPDX-License-Identifier: MIT
"""Synthetic 32-bit Mach-O images (imported by macho_test.py).

ld64.lld-14 links neither armv7 nor i386, so 32-bit coverage comes from
images written here byte by byte: a little-endian armv7 and a big-endian ppc
MH_EXECUTE with __PAGEZERO, __TEXT,__text, __DATA,__data and a zerofill
__bss, LC_SYMTAB and LC_UUID.  The symbol table exercises llvm-symbolizer's
rules: aliases at one address, a symbol below its section (like
__mh_execute_header), a stab entry that still shortens its neighbour
(computeSymbolSizes counts every nlist), undefined and absolute symbols, the
last symbol of a section ending at the section end, data and bss symbols.
Oracle: llvm-symbolizer-14 on the same file.
"""
import os
import struct

import macho_test as mt

TEXT, DATA = 0x4000, 0x5000
SYMS = [  # name, n_type, n_sect, value
    ("__mh_execute_header", 0x0f, 1, TEXT),
    ("_start", 0x0f, 1, 0x4200),
    ("_helper", 0x0e, 1, 0x4240),
    ("_alias_helper", 0x0f, 1, 0x4240),
    ("_stabfun", 0x24, 1, 0x4290),  # N_FUN stab: skipped, but sizes see it
    ("_after", 0x0f, 1, 0x4280),
    ("_printf", 0x01, 0, 0),        # undefined
    ("_absval", 0x03, 0, 0x4200),   # N_ABS
    ("_end_fn", 0x0f, 1, 0x42f0),
    ("__weird", 0x0e, 1, 0x42a0),
    ("_gdata", 0x0f, 2, 0x5000),
    ("_gdata2", 0x0f, 2, 0x5020),
    ("_bss_var", 0x0f, 3, 0x5040),
    ("", 0x0e, 1, 0x42c0),          # empty name
]


def image(endian, cputype, cpusub, uuid, pad=0):
    """pad: bytes of an unknown load command before LC_UUID (file data moves
    by 0x2000 to stay past the headers)."""
    sh = 0x2000 if pad else 0
    e = endian
    strtab = b"\0"
    strx = []
    for name, *_ in SYMS:
        strx.append(len(strtab) if name else 0)
        if name:
            strtab += name.encode() + b"\0"
    while len(strtab) % 4:
        strtab += b"\0"

    def seg(name, vmaddr, vmsize, fileoff, filesize, prot, sects):
        body = struct.pack(e + "16s8I", name, vmaddr, vmsize, fileoff, filesize, prot, prot,
                           len(sects), 0)
        for sn, addr, size, off, flags in sects:
            body += struct.pack(e + "16s16s9I", sn, name, addr, size, off, 2, 0, 0, flags, 0, 0)
        return struct.pack(e + "2I", 1, 8 + len(body)) + body

    cmds = [seg(b"__PAGEZERO", 0, TEXT, 0, 0, 0, []),
            seg(b"__TEXT", TEXT, 0x1000 + sh, 0, 0x1000 + sh, 5,
                [(b"__text", 0x4200, 0x100, 0x200 + sh, 0x80000400)]),
            seg(b"__DATA", DATA, 0x1000, 0x1000 + sh, 0x100, 3,
                [(b"__data", DATA, 0x40, 0x1000 + sh, 0), (b"__bss", 0x5040, 0x40, 0, 1)])]
    symoff = 0x1100 + sh
    nsyms = len(SYMS)
    stroff = symoff + 12 * nsyms
    cmds.append(struct.pack(e + "6I", 2, 24, symoff, nsyms, stroff, len(strtab)))
    if pad:
        cmds.append(struct.pack(e + "2I", 0x7fff0042, pad) + b"\0" * (pad - 8))
    cmds.append(struct.pack(e + "2I", 0x1b, 24) + uuid)
    lc = b"".join(cmds)
    hdr = struct.pack(e + "7I", 0xfeedface, cputype, cpusub, 2, len(cmds), len(lc), 0)
    b = bytearray(hdr + lc)
    b += b"\0" * (symoff - len(b))
    for (name, t, s, v), x in zip(SYMS, strx):
        b += struct.pack(e + "IBBhI", x, t, s, 0, v)
    b += strtab
    return bytes(b)


def run_case(c, _arg):
    import shutil
    db = c.db("synth32")
    shutil.rmtree(db, ignore_errors=True)
    addrs = list(range(0x3ff0, 0x4320, 2)) + list(range(0x4ff0, 0x50a0, 2))
    inp = mt.lines_of(addrs)
    bad = n = 0
    for tag, endian, cpu, sub, pad in (("armv7", "<", 12, 9, 0), ("ppc", ">", 18, 0, 0),
                                       ("armv7_far_uuid", "<", 12, 9, 6000)):
        path = os.path.join(c.scratch, "synth_" + tag)
        uuid = bytes((i + 16 * len(tag)) & 0xff for i in range(16))
        with open(path, "wb") as f:
            f.write(image(endian, cpu, sub, uuid, pad))
        c.sym(db, "build", path)
        listing = c.sym(db, "list").stdout
        if uuid.hex() not in listing:
            mt.die("%s: UUID %s not listed: %s" % (tag, uuid.hex(), listing))
        info = c.sym(db, "info", path).stdout  # symdb_file_uuid, LC_UUID past 4 KiB too
        if uuid.hex() not in info:
            mt.die("%s: symdb info FILE does not find UUID %s" % (tag, uuid.hex()))
        for st in ([], ["--output-style=JSON"], ["--output-style=GNU"]):
            exp = mt.run(["llvm-symbolizer-14", "--obj", path] + st, inp=inp).stdout
            got = c.sym(db, "query", "--obj", path, *st, inp=inp).stdout
            bad += mt.compare(exp, got, "%s %s" % (tag, " ".join(st)))
            n += len(addrs)
        dinp = "".join("DATA 0x%x\n" % a for a in addrs)
        exp = mt.run(["llvm-symbolizer-14", "--obj", path], inp=dinp).stdout
        got = c.sym(db, "query", "--obj", path, inp=dinp).stdout
        bad += mt.compare(exp, got, "%s DATA" % tag)
    if bad:
        mt.die("%d comparisons differ" % bad)
    print("synth32: armv7 (LE), ppc (BE) and LC_UUID-past-4-KiB 32-bit images, %d lookups "
          "identical" % n)


def fat_file(slices, magic64):
    """A universal file (FAT_MAGIC or FAT_MAGIC_64) of (cputype, cpusubtype,
    bytes) slices, each aligned to 2^14 as lipo does."""
    n = len(slices)
    rec = 32 if magic64 else 20
    out = bytearray(struct.pack(">2I", 0xcafebabf if magic64 else 0xcafebabe, n))
    off = 0x4000
    layout = []
    for cpu, sub, data in slices:
        layout.append((cpu, sub, off, len(data)))
        off = (off + len(data) + 0x3fff) & ~0x3fff
    for cpu, sub, o, size in layout:
        if magic64:
            out += struct.pack(">2I2Q2I", cpu, sub, o, size, 14, 0)
        else:
            out += struct.pack(">5I", cpu, sub, o, size, 14)
    assert len(out) == 8 + n * rec
    for (cpu, sub, o, size), (_c, _s, data) in zip(layout, slices):
        out += b"\0" * (o - len(out))
        out += data
    return bytes(out)


def run_fat64(c, _arg):
    """arm64 + arm64e (ptrauth subtype 0x80000002) slices of the same code
    with different UUIDs, in FAT_MAGIC and FAT_MAGIC_64 files."""
    import shutil
    db = c.db("fat64")
    shutil.rmtree(db, ignore_errors=True)
    with open(os.path.join(c.fx, "nodsym", "app_arm64"), "rb") as f:
        a = bytearray(f.read())
    e = bytearray(a)
    struct.pack_into("<I", e, 8, 0x80000002)  # cpusubtype: arm64e, ptrauth ABI
    off = 32
    for _ in range(struct.unpack_from("<I", e, 16)[0]):
        cmd, size = struct.unpack_from("<2I", e, off)
        if cmd == 0x1b:
            e[off + 8 + 15] ^= 0x5a  # a different LC_UUID
        off += size
    bad = n = 0
    lo, size = mt.text_range(os.path.join(c.fx, "nodsym", "app_arm64"))
    inp = mt.lines_of(range(lo - 4, lo + size + 8))
    for magic64 in (False, True):
        path = os.path.join(c.scratch, "fat%s_arm64e" % ("64" if magic64 else ""))
        with open(path, "wb") as f:
            f.write(fat_file([(0x0100000c, 0, bytes(a)), (0x0100000c, 0x80000002, bytes(e))],
                             magic64))
        out = c.sym(db, "build", "--force", path).stdout
        if "(arm64)" not in out or "(arm64e)" not in out:
            mt.die("fat64: build lines %r" % out)
        for arch in ("arm64", "arm64e"):
            for st in ([], ["--output-style=JSON"]):
                exp = mt.run(["llvm-symbolizer-14", "--obj", "%s:%s" % (path, arch)] + st,
                             inp=inp).stdout
                got = c.sym(db, "query", "--obj", "%s:%s" % (path, arch), *st, inp=inp).stdout
                bad += mt.compare(exp, got, "%s:%s" % (path, arch))
                got = c.sym(db, "query", "--obj", path, "--arch", arch, *st, inp=inp).stdout
                bad += mt.compare(exp.replace(path + ":" + arch, path), got,
                                  "%s --arch %s" % (path, arch))
                n += 2 * inp.count("\n")
    if bad:
        mt.die("%d comparisons differ" % bad)
    print("fat64: FAT_MAGIC and FAT_MAGIC_64 files with arm64 + arm64e slices, %d lookups "
          "identical" % n)
