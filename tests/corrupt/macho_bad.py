# SPDX-License-Identifier: MIT
"""Hostile Mach-O inputs for `symdb build` (imported by macho_test.py).

Each case damages a copy of a fixture in one way and requires: a non-zero
exit, one line on stderr naming the file and the reason, nothing on stdout
about it, and the database exactly as before (same `symdb list`, same index
files, byte for byte).
"""
import hashlib
import os
import struct

import macho_test as mt

LC_SYMTAB = 2


def load_cmds(b):
    """(offset, cmd, cmdsize) of every load command of a thin 64-bit image."""
    magic, _ct, _cs, _ft, ncmds, _sz, _fl, _r = struct.unpack_from("<8I", b, 0)
    assert magic == 0xfeedfacf
    off, out = 32, []
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<2I", b, off)
        out.append((off, cmd, size))
        off += size
    return out


def symtab(b):
    for off, cmd, _s in load_cmds(b):
        if cmd == LC_SYMTAB:
            return off, struct.unpack_from("<4I", b, off + 8)
    raise AssertionError("no LC_SYMTAB")


def thin(c):
    with open(os.path.join(c.fx, "nodsym", "app_arm64"), "rb") as f:
        return bytearray(f.read())


def fat(c):
    with open(os.path.join(c.fx, "app_fat"), "rb") as f:
        return bytearray(f.read())


def case_fat_overlap(c):
    b = fat(c)
    # Slice 1 starts inside slice 0.
    off0, size0 = struct.unpack_from(">2I", b, 8 + 8)
    struct.pack_into(">I", b, 8 + 20 + 8, off0 + size0 // 2)
    return b, "overlap"


def case_fat_past_end(c):
    b = fat(c)
    struct.pack_into(">I", b, 8 + 20 + 12, len(b))  # size of slice 1 = whole file
    return b, "outside the file"


def case_fat_offset0(c):
    b = fat(c)
    struct.pack_into(">I", b, 8 + 8, 0)  # slice 0 at offset 0: on the header
    return b, r"slice 0 at offset 0 overlaps the header \(48 bytes\)"


def case_fat_size0(c):
    b = fat(c)
    struct.pack_into(">I", b, 8 + 20 + 12, 0)  # slice 1 of size 0
    return b, r"slice 1 is empty \(size 0\)"


def case_fat_cigam(c):
    """A little-endian universal header (FAT_CIGAM), which no tool writes."""
    b = fat(c)
    n = struct.unpack_from(">I", b, 4)[0]
    struct.pack_into("<II", b, 0, 0xcafebabe, n)
    for i in range(n):
        struct.pack_into("<5I", b, 8 + 20 * i, *struct.unpack_from(">5I", b, 8 + 20 * i))
    return b, r"byte-swapped Mach-O universal header \(FAT_CIGAM\)"


def case_fat_bare(c):
    return bytearray(b"\xca\xfe\xba\xbe"), r"Mach-O universal header is truncated"


def case_fat_millions(c):
    b = fat(c)
    struct.pack_into(">I", b, 4, 5_000_000)
    return b, "5000000 slices"


def case_fat_bad_second(c):
    """Slice 0 is fine, slice 1 is damaged: slice 0 must not be published."""
    b = fat(c)
    off1 = struct.unpack_from(">I", b, 8 + 20 + 8)[0]
    struct.pack_into("<I", b, off1 + 20, 0xffff0)  # sizeofcmds of slice 1
    return b, "sizeofcmds"


def case_cmdsize(c):
    b = thin(c)
    off, _cmd, _size = load_cmds(b)[2]
    sizeofcmds = struct.unpack_from("<I", b, 20)[0]
    struct.pack_into("<I", b, off + 4, sizeofcmds)  # runs past the end of the commands
    return b, "cmdsize .* runs past sizeofcmds"


def case_symtab_outside(c):
    b = thin(c)
    off, (symoff, nsyms, stroff, strsize) = symtab(b)
    struct.pack_into("<I", b, off + 8, len(b) - 8)
    return b, "LC_SYMTAB: .* outside"


def case_strtab_outside(c):
    b = thin(c)
    off, (symoff, nsyms, stroff, strsize) = symtab(b)
    struct.pack_into("<I", b, off + 20, len(b))
    return b, "string table .* outside"


def case_strx(c):
    b = thin(c)
    off, (symoff, nsyms, stroff, strsize) = symtab(b)
    for i in range(nsyms):
        e = symoff + 16 * i
        n_type = b[e + 4]
        if not (n_type & 0xe0) and (n_type & 0x0e) == 0x0e:
            struct.pack_into("<I", b, e, strsize + 100)
            break
    return b, "string index .* past the string table"


def case_truncated(c):
    return thin(c)[:200], "Mach-O"


def case_no_uuid(c):
    b = thin(c)
    for off, cmd, _s in load_cmds(b):
        if cmd == 0x1b:
            struct.pack_into("<I", b, off, 0x7fff0001)  # an unknown command
    return b, "without LC_UUID"


CASES = {
    "fat_overlap": case_fat_overlap, "fat_past_end": case_fat_past_end,
    "fat_millions": case_fat_millions, "fat_offset0": case_fat_offset0,
    "fat_size0": case_fat_size0, "fat_cigam": case_fat_cigam, "fat_bare": case_fat_bare, "fat_bad_second": case_fat_bad_second,
    "cmdsize": case_cmdsize, "symtab_outside": case_symtab_outside,
    "strtab_outside": case_strtab_outside, "strx": case_strx, "truncated": case_truncated,
    "no_uuid": case_no_uuid, "dsym_empty": None,
}


SANITIZER_MARKS = ("Sanitizer", "runtime error:")


LC_UUID = 0x1b


def own_uuids(b, i):
    """Give every slice of copy i a UUID of its own: copies built together
    would otherwise replace each other's image (same UUID, --force), and a
    query of one would read another's index."""
    slices = [0]
    if struct.unpack_from(">I", b, 0)[0] == 0xcafebabe:  # universal: FAT_MAGIC
        n, = struct.unpack_from(">I", b, 4)
        slices = [struct.unpack_from(">5I", b, 8 + 20 * k)[2] for k in range(n)]
    for k, base in enumerate(slices):
        for off, cmd, _s in load_cmds(b[base:]):
            if cmd == LC_UUID:
                b[base + off + 8:base + off + 24] = hashlib.md5(b"%d/%d" % (i, k)).digest()


def random_copy(rnd, srcs, i):
    """Copy i: the thin (even i) or universal fixture, with UUIDs of its
    own, and 1 to 8 random bytes changed in its headers, load commands or
    symbol table."""
    b = bytearray(srcs[i % 2])
    own_uuids(b, i)
    if i % 2 == 0:
        _o, (symoff, nsyms, stroff, strsize) = symtab(b)
        regions = [(0, 4096), (symoff, stroff + strsize)]
    else:
        regions = [(0, 64), (0x4000, 0x4000 + 4096), (0x8000, 0x8000 + 4096)]
    for _ in range(rnd.randrange(1, 9)):
        lo, hi = rnd.choice(regions)
        b[rnd.randrange(lo, min(hi, len(b)))] = rnd.randrange(256)
    return bytes(b)


def random_batch(c, db, paths, scan):
    """Build PATHS with one `symdb build` and query the built ones with one
    `symdb query` per slice kind (FILE ADDR lines): None when every build
    succeeded or failed with one line naming its file and no process
    crashed or reported a sanitizer error, else what went wrong; and how
    many copies were indexed.  (A
    process per copy and step was most of this test's time under the
    sanitizers: some 64 ms a start there.)"""
    p = c.sym(db, "build", "--force", *paths, check=False, leak_scan=scan)
    if p.returncode not in (0, 1) or any(m in p.stderr for m in SANITIZER_MARKS):
        return "build exit %d, stderr %r" % (p.returncode, p.stderr[-2000:]), 0
    built = {line.split()[2] for line in p.stdout.splitlines()
             if line.startswith(("indexed ", "skipped ")) and len(line.split()) > 2}
    # as when each copy was built alone: at most one line on stderr for a
    # copy, exactly one for a refused copy, and every line names one copy
    lines = {path: [] for path in paths}
    for e in p.stderr.splitlines():
        named = [path for path in paths if path + ":" in e or e.endswith(path)]
        if len(named) != 1:
            return "a line on stderr names %d copies: %r" % (len(named), e[:500]), 0
        lines[named[0]].append(e)
    for path in paths:
        n = len(lines[path])
        if n > 1 or (path not in built and n != 1):
            return "%s: %s with %d lines on stderr: %r" % (
                path, "indexed" if path in built else "refused", n, lines[path][:3]), 0
    thin = [x for x in paths if x in built and int(x.rsplit("_", 1)[1]) % 2 == 0]
    fat = [x for x in paths if x in built and x not in thin]
    for files, arch in ((thin, []), (fat, ["--arch", "arm64"]), (fat, ["--arch", "x86_64"])):
        if not files:
            continue
        inp = "".join('"%s" %s\n' % (f, a) for f in files for a in ("0x100000800", "0x100000b80"))
        q = c.sym(db, "query", *arch, inp=inp, check=False, leak_scan=scan)
        if q.returncode not in (0, 1, 2) or any(m in q.stderr for m in SANITIZER_MARKS):
            return "query %s exit %d: %r" % (" ".join(arch), q.returncode, q.stderr[-2000:]), 0
    return None, len(built)


def random_damage(c):
    """300 copies of the thin and universal fixtures with 1 to 8 random bytes
    changed in the headers, load commands or symbol table: each build either
    succeeds or fails with one line, never a crash; a successful one queries.
    Ten copies are built by one `symdb build` and queried by one `symdb query`
    per slice kind; a batch that fails is run a copy at a time, to name the
    copy.  LeakSanitizer (sanitizer builds) scans at the exit of every 4th
    batch's runs, as sweep.py does."""
    import random
    import shutil
    rnd = random.Random(1234)
    db = c.db("bad-random")
    shutil.rmtree(db, ignore_errors=True)
    srcs = [bytes(thin(c)), bytes(fat(c))]
    batch, indexed = 10, 0
    for first in range(0, 300, batch):
        paths = []
        for i in range(first, first + batch):
            paths.append(os.path.join(c.scratch, "random_%d" % i))
            with open(paths[-1], "wb") as f:
                f.write(random_copy(rnd, srcs, i))
        why, n = random_batch(c, db, paths, scan=first % (4 * batch) == 0)
        indexed += n
        if why:
            for path in paths:  # which copy: each alone
                alone, _ = random_batch(c, db, [path], scan=True)
                if alone:
                    mt.die("%s: %s" % (path, alone))
            mt.die("random %d-%d: %s (no copy alone fails)" % (first, first + batch - 1, why))
        for path in paths:
            os.unlink(path)
    print("bad random: 300 damaged copies (%d at a time), %d indexed, %d refused with one "
          "line, no crash" % (batch, indexed, 300 - indexed))


def snapshot(c, db):
    listing = c.sym(db, "list").stdout
    files = {}
    for root, _d, names in os.walk(os.path.join(db, "images")):
        for n in names:
            with open(os.path.join(root, n), "rb") as f:
                files[n] = hashlib.sha256(f.read()).hexdigest()
    return listing, files


def run_case(c, name):
    import re
    import shutil
    if name == "random":
        random_damage(c)
        return
    if name not in CASES:
        mt.die("unknown bad case %r" % name)
    db = c.db("bad-" + name)
    shutil.rmtree(db, ignore_errors=True)
    c.sym(db, "build", os.path.join(c.fx, "libmo_arm64.dylib.dSYM"))
    before = snapshot(c, db)
    if name == "dsym_empty":
        path = os.path.join(c.scratch, "Empty.dSYM")
        os.makedirs(os.path.join(path, "Contents", "Resources", "DWARF"), exist_ok=True)
        want = "no DWARF file"
    else:
        data, want = CASES[name](c)
        path = os.path.join(c.scratch, "bad_" + name)
        with open(path, "wb") as f:
            f.write(data)
    p = c.sym(db, "build", path, check=False)
    err = p.stderr.strip()
    if p.returncode == 0:
        mt.die("%s: build succeeded (stdout %r)" % (name, p.stdout))
    if len(err.splitlines()) != 1 or path not in err or not re.search(want, err):
        mt.die("%s: want one line naming %s and /%s/, got %r" % (name, path, want, err))
    if snapshot(c, db) != before:
        mt.die("%s: the database changed" % name)
    q = c.sym(db, "query", "--no-build", "--obj", path, "0x100000000", check=False)
    if q.returncode == 0:
        mt.die("%s: query on a bad input succeeded" % name)
    print("bad %s: exit %d, %s" % (name, p.returncode, err))
