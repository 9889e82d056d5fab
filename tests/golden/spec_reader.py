#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An independent symdb index-file reader, written from SPEC.md alone.

It exists to prove that SPEC.md is enough to implement a reader: nothing here
was taken from symdb's C code.  It validates the header (§5), the table
directory (§6), every table (§7, §8) and the checksums (§9), then resolves
the addresses given on the command line or on stdin (vaddrs, §10 case 1) with
the lookup algorithm of §11 and prints them as `llvm-symbolizer-14 --obj`
prints them in its default LLVM style (no demangling: the golden files are C).

XXH3-64 is computed with the system libxxhash through ctypes (Python has no
xxhash module here); without the library the checksums are reported as not
verified and everything else still runs.

usage: spec_reader.py [--dump] FILE.symdb [ADDR...]
"""

import ctypes
import ctypes.util
import struct
import sys

MAGIC = b"\x89SYMDB\r\n"
NONE = 0xFFFFFFFF
HEADER = struct.Struct(">8sHHIQIBBBB32sIIBBHIQII Q16sQ")
DIRENT = struct.Struct(">IHHQQQQ")
# §6.1: kind -> (name, record size; None = Address_Size, required?)
KINDS = {
    1: ("STRINGS", 0, True), 2: ("SEGMENTS", 40, True),
    3: ("SYMBOL_ADDRS", None, True), 4: ("SYMBOLS", 16, True),
    5: ("FILES", 12, False), 6: ("FUNCTIONS", 24, False),
    7: ("INLINE_ADDRS", None, False), 8: ("INLINE_MAP", 4, False),
    9: ("INLINE_NODES", 40, False), 10: ("LINE_ADDRS", None, False),
    11: ("LINE_ROWS", 16, False), 12: ("BUILD_INFO", 8, False),
    13: ("SYMBOL_FILES", 4, False), 17: ("FILE_SOURCES", 8, False),
}
DWARF_KINDS = range(5, 12)
PARALLEL = ((3, 4), (7, 8), (10, 11), (4, 13))
# §7.9: format 2 packs these; Record_Size 0 (packed) or 32 (block column)
PACKED_RSIZE = {6: 0, 7: 32, 8: 0, 9: 0, 10: 32, 11: 0}
BLOCK_ROWS = 64


def bits(data, pos, bit, width):
    """§7.9: the width-bit field at bit `bit` of the bit string at byte pos,
    most significant bit first."""
    if width == 0:
        return 0
    first = pos + bit // 8
    nbytes = (bit % 8 + width + 7) // 8
    if first + nbytes > len(data):
        raise Corrupt("bit string past its table")
    v = int.from_bytes(data[first:first + nbytes], "big")
    return (v >> (nbytes * 8 - bit % 8 - width)) & ((1 << width) - 1)


def nullable(base, stored):
    """§7.9: stored 0 is NONE, else Base + stored - 1."""
    return NONE if stored == 0 else (base + stored - 1) & 0xFFFFFFFF


class Corrupt(Exception):
    """The file violates a "must" of SPEC.md; the message names the field."""


def _xxh3_lib():
    name = ctypes.util.find_library("xxhash") or "libxxhash.so.0"
    try:
        lib = ctypes.CDLL(name)
        fn = lib.XXH3_64bits
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_uint64
    fn.argtypes = (ctypes.c_char_p, ctypes.c_size_t)
    return fn


_XXH3 = _xxh3_lib()


def xxh3_64(data):
    """XXH3-64, seed 0 (§3), or None when libxxhash is unavailable."""
    if _XXH3 is None:
        return None
    return _XXH3(bytes(data), len(data))


class Index:
    """One validated index file; tables are decoded into Python lists."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.checksums_verified = _XXH3 is not None
        self._header()
        self._directory()
        self._tables()

    # -- §5 ------------------------------------------------------------------
    def _header(self):
        d = self.data
        if len(d) < 128:
            raise Corrupt("file shorter than the 128-byte header")
        (magic, self.major, self.minor, hsize, fsize, self.flags, self.objfmt,
         self.asize, self.uuid_kind, self.uuid_len, uuid, self.machine,
         self.subtype, self.objclass, self.objendian, self.objtype,
         self.image_name, self.base, self.table_count, res0, self.dir_off,
         res1, self.header_checksum) = HEADER.unpack_from(d, 0)
        if magic != MAGIC:
            raise Corrupt("Magic")
        if self.major not in (1, 2):
            raise Corrupt("Version_Major %d" % self.major)
        if hsize < 128:
            raise Corrupt("Header_Size %d" % hsize)
        if fsize != len(d):
            raise Corrupt("File_Size %d, file has %d bytes" % (fsize, len(d)))
        if self.flags & ~0x7:
            raise Corrupt("Flags 0x%x" % self.flags)
        if self.objfmt not in (1, 2):
            raise Corrupt("Object_Format %d" % self.objfmt)
        if self.asize not in (4, 8):
            raise Corrupt("Address_Size %d" % self.asize)
        if self.uuid_kind not in (1, 2, 3):
            raise Corrupt("UUID_Kind %d" % self.uuid_kind)
        if not 1 <= self.uuid_len <= 32 or any(uuid[self.uuid_len:]):
            raise Corrupt("UUID_Length / UUID padding")
        self.uuid = uuid[:self.uuid_len]
        if self.table_count > 64:
            raise Corrupt("Table_Count %d" % self.table_count)
        if self.dir_off % 8 or self.dir_off < hsize:
            raise Corrupt("Table_Directory_Offset %d" % self.dir_off)
        if res0 or any(res1):
            raise Corrupt("Reserved_0 / Reserved_1")
        self.dir_end = self.dir_off + 40 * self.table_count
        if self.dir_end > len(d):
            raise Corrupt("Table_Directory past File_Size")
        got = xxh3_64(d[:120] + d[self.dir_off:self.dir_end])
        if got is not None and got != self.header_checksum:
            raise Corrupt("Header_Checksum")

    # -- §6 ------------------------------------------------------------------
    def _directory(self):
        self.dir = {}
        prev_kind = 0
        spans = []
        for n in range(self.table_count):
            kind, flags, rsize, off, length, count, csum = DIRENT.unpack_from(
                self.data, self.dir_off + 40 * n)
            if kind <= prev_kind:
                raise Corrupt("directory entry %d: Kind not ascending" % n)
            prev_kind = kind
            if flags & ~1:
                raise Corrupt("directory entry %d: Flags" % n)
            if off % 8 or off < self.dir_end or off + length > len(self.data):
                raise Corrupt("table kind %d: Offset/Length" % kind)
            xs = xxh3_64(self.data[off:off + length])
            if xs is not None and xs != csum:
                raise Corrupt("table kind %d: Checksum" % kind)
            spans.append((off, off + length, kind))
            if kind not in KINDS:
                if flags & 1:
                    continue            # unknown but OPTIONAL: skip it
                raise Corrupt("unknown required table kind %d" % kind)
            want = KINDS[kind][1]
            want = self.asize if want is None else want
            packed = self.major == 2 and kind in PACKED_RSIZE
            if packed:
                want = PACKED_RSIZE[kind]
            if rsize != want:
                raise Corrupt("table kind %d: Record_Size %d" % (kind, rsize))
            if rsize and length != count * rsize:
                raise Corrupt("table kind %d: Length != Count x Record_Size" % kind)
            if not rsize and not packed and length != count:
                raise Corrupt("STRINGS: Length != Count")
            self.dir[kind] = (off, length, count, flags, csum, rsize)
        spans.sort()
        for a, b in zip(spans, spans[1:]):
            if a[1] > b[0]:
                raise Corrupt("tables %d and %d overlap" % (a[2], b[2]))
        # §4: bytes between tables are zero.
        pos = self.dir_end
        for start, end, _ in spans:
            if any(self.data[pos:start]):
                raise Corrupt("non-zero padding at %d" % pos)
            pos = max(pos, end)
        if any(self.data[pos:]):
            raise Corrupt("non-zero bytes after the last table")
        for kind, (name, _, required) in KINDS.items():
            if required and kind not in self.dir:
                raise Corrupt("required table %s missing" % name)
        present = [k in self.dir for k in DWARF_KINDS]
        if any(present) and not all(present):
            raise Corrupt("DWARF tables 5-11 only partly present")
        for a, b in PARALLEL:
            if a in self.dir and b in self.dir:
                ca, cb = self.dir[a][2], self.dir[b][2]
                if self.major == 2 and a in (7, 10):
                    cb = (cb + BLOCK_ROWS - 1) // BLOCK_ROWS   # §7.9.2
                if ca != cb:
                    raise Corrupt("tables %d and %d: Counts differ" % (a, b))

    # -- §7, §8 --------------------------------------------------------------
    def _raw(self, kind):
        if kind not in self.dir:
            return b""
        off, length = self.dir[kind][:2]
        return self.data[off:off + length]

    def _records(self, kind, fmt):
        s = struct.Struct(">" + fmt)
        return [s.unpack_from(self._raw(kind), i * s.size)
                for i in range(len(self._raw(kind)) // s.size)]

    def _addrs(self, kind):
        fmt = "I" if self.asize == 4 else "Q"
        col = [r[0] for r in self._records(kind, fmt)]
        if any(b <= a for a, b in zip(col, col[1:])):
            raise Corrupt("%s not strictly ascending" % KINDS[kind][0])
        return col

    def _tables(self):
        self.strings = self._raw(1)
        if not self.strings or self.strings[0] or self.strings[-1]:
            raise Corrupt("STRINGS: first and last byte must be NUL")
        self.segments = self._records(2, "QQQQII")
        self.sym_addrs = self._addrs(3)
        self.symbols = self._records(4, "QII")          # Size, Name, Flags
        self.symbol_files = [r[0] for r in self._records(13, "I")]
        self.files = self._records(5, "III")            # Path, Relative, Base
        if self.major == 2 and 6 in self.dir:
            self._packed_tables()
        else:
            self.functions = self._records(6, "QIIII")
            self.inline_addrs = self._addrs(7)
            self.inline_map = [r[0] for r in self._records(8, "I")]
            self.nodes = self._records(9, "IIIIIIHHIQ")
            self.line_addrs = self._addrs(10)
            self.line_rows = self._records(11, "IIII")
        self.build_info = [r[0] for r in self._records(12, "Q")]
        # §7.3.1: Path -> Source, Paths strictly ascending, both in the pool
        self.file_sources = self._records(17, "II")
        if any(b[0] <= a[0] for a, b in zip(self.file_sources, self.file_sources[1:])):
            raise Corrupt("FILE_SOURCES not strictly ascending by Path")
        for path, src in self.file_sources:
            self.string(path)
            self.string(src)
        if self.inline_map and self.inline_map[-1] != NONE:
            raise Corrupt("INLINE_MAP: last interval must map to NONE")
        if self.line_rows and self.line_rows[-1][0] != NONE:
            raise Corrupt("LINE_ROWS: last row must have File NONE")
        self.name = self.string(self.image_name)

    # -- §7.9 format 2 ---------------------------------------------------------
    def _packed_records(self, kind, nfields, nullable_fields):
        """§7.9.1: every record as a list of nfields values."""
        t, count = self._raw(kind), self.dir[kind][2]
        if len(t) < 8 + 16 * nfields + 8:
            raise Corrupt("table %d: shorter than its header" % kind)
        fcount, rbits = struct.unpack_from(">II", t, 0)
        if fcount != nfields:
            raise Corrupt("table %d: Field_Count %d" % (kind, fcount))
        fields = [struct.unpack_from(">B7xQ", t, 8 + 16 * f) for f in range(nfields)]
        if any(w > 64 for w, _ in fields) or rbits != sum(w for w, _ in fields):
            raise Corrupt("table %d: widths / Record_Bits" % kind)
        start = 8 + 16 * nfields
        if len(t) < start + (count * rbits + 7) // 8 + 8:
            raise Corrupt("table %d: Length too short" % kind)
        out = []
        for i in range(count):
            bit, rec = i * rbits, []
            for f, (w, base) in enumerate(fields):
                stored = bits(t, start, bit, w)
                rec.append(nullable(base, stored) if f in nullable_fields
                           else (base + stored) & 0xFFFFFFFFFFFFFFFF)
                bit += w
            out.append(rec)
        return out

    def _blocks(self, kblk, krows, lines):
        """§7.9.2: (interval starts, [index, line, column, discriminator])."""
        col, rows, n = self._raw(kblk), self._raw(krows), self.dir[krows][2]
        addrs, vals = [], []
        for k in range(self.dir[kblk][2]):
            first, roff, bidx, bline, bcol, *w = struct.unpack_from(">QIIII5B", col, 32 * k)
            if col[32 * k + 29:32 * k + 32] != b"\0\0\0":
                raise Corrupt("table %d block %d: Reserved" % (kblk, k))
            m = min(BLOCK_ROWS, n - BLOCK_ROWS * k)
            if any(x > 64 for x in w):
                raise Corrupt("table %d block %d: width" % (kblk, k))
            if roff + (m * sum(w) + 7) // 8 + 8 > len(rows):
                raise Corrupt("table %d block %d: Rows_Offset" % (kblk, k))
            colstart = [m * sum(w[:c]) for c in range(5)]
            for r in range(m):
                get = [bits(rows, roff, colstart[c] + r * w[c], w[c]) for c in range(5)]
                addrs.append(first + get[0])
                vals.append([nullable(bidx, get[1]), (bline + get[2]) & 0xFFFFFFFF,
                             (bcol + get[3]) & 0xFFFFFFFF, get[4]])
        if any(b <= a for a, b in zip(addrs, addrs[1:])):
            raise Corrupt("table %d: interval starts not strictly ascending" % kblk)
        return addrs, vals

    def _packed_tables(self):
        self.functions = [tuple(r) for r in self._packed_records(6, 5, {3})]
        nodes = []
        for i, r in enumerate(self._packed_records(9, 9, {1, 2})):
            dist = r[0]
            if dist > i:
                raise Corrupt("INLINE_NODES %d: Parent_Distance past the first node" % i)
            parent = NONE if dist == 0 else i - dist
            # the layout of a format-1 record, Reserved 0
            nodes.append((parent, r[1], r[2], r[3], r[4], r[5], r[6], r[7], 0, r[8]))
        self.nodes = nodes
        self.inline_addrs, iv = self._blocks(7, 8, False)
        self.inline_map = [v[0] for v in iv]
        self.line_addrs, lv = self._blocks(10, 11, True)
        self.line_rows = [tuple(v) for v in lv]

    def string(self, ref):
        """§8: a reference is valid below Length; the string runs to NUL."""
        if ref >= len(self.strings):
            raise Corrupt("string reference %d past the pool" % ref)
        return self.strings[ref:self.strings.index(b"\0", ref)].decode(
            "utf-8", "surrogateescape")

    def file_path(self, idx):
        if idx == NONE:
            return None
        if idx >= len(self.files):
            raise Corrupt("FILES index %d" % idx)
        return self.string(self.files[idx][0])

    # -- §11 -----------------------------------------------------------------
    def lookup(self, a):
        """Frames [(name or None, file or None, line, column)], innermost
        first, or [] for "not found"."""
        if a < self.base:
            return []
        o = a - self.base
        sym = _upper_bound(self.sym_addrs, o) - 1
        if sym >= 0:
            size = self.symbols[sym][0]
            if size and o >= self.sym_addrs[sym] + size:
                sym = -1
        chain = []
        j = _upper_bound(self.inline_addrs, o) - 1
        n = self.inline_map[j] if j >= 0 else NONE
        while n != NONE:
            if n >= len(self.nodes):
                raise Corrupt("INLINE_NODES index %d" % n)
            chain.append(self.nodes[n])
            parent = self.nodes[n][0]
            if parent != NONE and parent >= n:
                raise Corrupt("INLINE_NODES %d: Parent not below it" % n)
            n = parent
        k = _upper_bound(self.line_addrs, o) - 1
        row = self.line_rows[k] if k >= 0 and self.line_rows[k][0] != NONE else None
        if sym < 0 and not chain and row is None:
            return []
        frames = []
        for m in range(max(1, len(chain))):
            if m == 0:
                loc = (self.file_path(row[0]), row[1], row[2]) if row else (None, 0, 0)
            else:
                caller = chain[m - 1]
                loc = (self.file_path(caller[2]), caller[3], caller[4])
            name = None
            if chain and chain[m][1] != NONE:
                if chain[m][1] >= len(self.functions):
                    raise Corrupt("FUNCTIONS index %d" % chain[m][1])
                name = self.string(self.functions[chain[m][1]][1])
            frames.append([name, *loc])
        if sym >= 0:                                    # step 6
            outer = frames[-1]
            outer[0] = self.string(self.symbols[sym][1])
            if outer[1] is None and self.symbol_files and self.symbol_files[sym]:
                outer[1:] = [self.string(self.symbol_files[sym]), 0, 0]
        return frames


def _upper_bound(col, x):
    lo, hi = 0, len(col)
    while lo < hi:
        mid = (lo + hi) // 2
        if col[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def format_llvm(frames):
    """llvm-symbolizer's default LLVM output style for one address."""
    if not frames:
        return "??\n??:0:0\n\n"
    out = []
    for name, path, line, col in frames:
        out.append(name or "??")
        out.append("%s:%d:%d" % (path or "??", line if path else 0, col if path else 0))
    return "\n".join(out) + "\n\n"


def dump(ix):
    print("format %d.%d  uuid %s  image %s  base 0x%x  address size %d  "
          "flags 0x%x  checksums %s" % (
              ix.major, ix.minor, ix.uuid.hex(), ix.name, ix.base, ix.asize,
              ix.flags, "verified" if ix.checksums_verified else "NOT verified"))
    for kind, (off, length, count, flags, csum, rsize) in sorted(ix.dir.items()):
        print("  table %-2d %-13s offset %4d length %5d count %5d" % (
            kind, KINDS[kind][0], off, length, count))
    for i, (addr, (size, name, flags)) in enumerate(zip(ix.sym_addrs, ix.symbols)):
        print("  symbol %d 0x%x size %d flags 0x%x %s" % (
            i, addr + ix.base, size, flags, ix.string(name)))


def main(argv):
    args = argv[1:]
    want_dump = bool(args) and args[0] == "--dump"
    if want_dump:
        args = args[1:]
    if not args:
        sys.stderr.write(__doc__.split("usage: ")[1])
        return 2
    try:
        ix = Index(args[0])
    except (OSError, Corrupt) as e:
        sys.stderr.write("spec_reader: %s: %s\n" % (args[0], e))
        return 4
    if want_dump:
        dump(ix)
        return 0
    addrs = args[1:] or sys.stdin.read().split()
    out = []
    for text in addrs:
        try:
            out.append(format_llvm(ix.lookup(int(text, 0))))
        except Corrupt as e:
            sys.stderr.write("spec_reader: %s: %s\n" % (args[0], e))
            return 4
    sys.stdout.write("".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
