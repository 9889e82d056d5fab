#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print an annotated hexdump of a (small) symdb index file: every header
field, every directory entry and every record of every table, each with its
bytes and decoded value.  It generated SPEC.md's Appendix A from
tests/golden/minimal.symdb; like spec_reader.py it knows only SPEC.md.

usage: annotate.py FILE.symdb
"""

import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_reader  # noqa: E402

HEADER_FIELDS = (
    (8, "Magic"), (2, "Version_Major"), (2, "Version_Minor"),
    (4, "Header_Size"), (8, "File_Size"), (4, "Flags"), (1, "Object_Format"),
    (1, "Address_Size"), (1, "UUID_Kind"), (1, "UUID_Length"), (32, "UUID"),
    (4, "Machine"), (4, "Machine_Subtype"), (1, "Object_Class"),
    (1, "Object_Endian"), (2, "Object_Type"), (4, "Image_Name"),
    (8, "Base_Address"), (4, "Table_Count"), (4, "Reserved_0"),
    (8, "Table_Directory_Offset"), (16, "Reserved_1"), (8, "Header_Checksum"),
)
DIR_FIELDS = ((4, "Kind"), (2, "Flags"), (2, "Record_Size"), (8, "Offset"),
              (8, "Length"), (8, "Count"), (8, "Checksum"))
# Record layouts of §7 (A = an Address_Size column).
RECORDS = {
    2: ((8, "Vaddr"), (8, "Mem_Size"), (8, "File_Offset"), (8, "File_Size"),
        (4, "Flags"), (4, "Reserved")),
    3: (("A", "Start"),),
    4: ((8, "Size"), (4, "Name"), (4, "Flags")),
    5: ((4, "Path"), (4, "Relative"), (4, "Base")),
    6: ((8, "Die_Offset"), (4, "Linkage_Name"), (4, "Name"), (4, "Decl_File"),
        (4, "Decl_Line")),
    7: (("A", "Start"),),
    8: ((4, "Node"),),
    9: ((4, "Parent"), (4, "Function"), (4, "Call_File"), (4, "Call_Line"),
        (4, "Call_Column"), (4, "Call_Discriminator"), (2, "Depth"),
        (2, "Flags"), (4, "Reserved"), (8, "Low_PC")),
    10: (("A", "Start"),),
    11: ((4, "File"), (4, "Line"), (4, "Column"), (4, "Discriminator")),
    12: ((8, "Counter"),),
    13: ((4, "File_Name"),),
}
STRING_FIELDS = {"Image_Name", "Name", "Linkage_Name", "Path", "Relative",
                 "Base", "File_Name"}
MEANING = {
    ("Object_Format", 1): "ELF", ("Object_Format", 2): "Mach-O",
    ("UUID_Kind", 1): "GNU build-id", ("UUID_Kind", 2): "LC_UUID",
    ("UUID_Kind", 3): "fallback", ("Machine", 62): "EM_X86_64",
    ("Object_Endian", 1): "little", ("Object_Endian", 2): "big",
    ("Object_Type", 2): "ET_EXEC", ("Object_Type", 3): "ET_DYN",
}
FLAG_BITS = {  # (table kind, field) -> bit names, bit 0 first
    (2, "Flags"): ("X", "W", "R"),
    (4, "Flags"): ("FUNC", "OBJECT", "NOTYPE", "IFUNC", "LOCAL", "WEAK", "DYNSYM"),
    (9, "Flags"): ("INLINED", "HAS_LOW_PC"),
    ("dir", "Flags"): ("OPTIONAL",),
    ("hdr", "Flags"): ("UUID_FALLBACK", "HAS_DWARF", "PARTIAL"),
}
BUILD_INFO_NAMES = ("source file size", "symbol-table entries read",
                    "symbols dropped", "DWARF units indexed",
                    "DWARF units skipped", "DWARF versions seen",
                    "Source_XXH3 of the input", "Debug_XXH3 (0: none)",
                    "Symbol_Source (1 .symtab, 2 .dynsym, 3 nlist)")


def line(off, raw, text):
    hexes = " ".join("%02x" % b for b in raw)
    print("%04x  %-24s %s" % (off, hexes, text))


def field(ix, off, size, name, note="", flags=None, number=False):
    raw = ix.data[off:off + size]
    value = int.from_bytes(raw, "big")
    if size > 8:
        shown = raw.hex()
    elif name == "Magic":
        shown = repr(raw)[1:]
    elif name in STRING_FIELDS and not number:
        shown = '%d -> "%s"' % (value, ix.string(value)) if value else "0 (none)"
    elif value == spec_reader.NONE and size == 4 and not number:
        shown = "NONE"
    else:
        shown = "%d" % value if value < 4096 else "0x%x" % value
    if (name, value) in MEANING and size <= 8:
        shown += " (%s)" % MEANING[(name, value)]
    if flags is not None and value:
        shown += " (%s)" % "|".join(n for i, n in enumerate(flags) if value >> i & 1)
    text = "%s = %s%s" % (name, shown, note)
    for i in range(0, size, 8):           # long fields: 8 bytes a line
        line(off + i, raw[i:i + 8], text if i == 0 else "")
    return off + size


def header(ix):
    print("-- header (§5), 128 bytes")
    off = 0
    for size, name in HEADER_FIELDS:
        off = field(ix, off, size, name, flags=FLAG_BITS[("hdr", name)]
                    if name == "Flags" else None)


def directory(ix):
    print("-- table directory (§6), %d entries of 40 bytes" % ix.table_count)
    for n in range(ix.table_count):
        off = ix.dir_off + 40 * n
        kind = struct.unpack_from(">I", ix.data, off)[0]
        name = spec_reader.KINDS.get(kind, ("unknown",))[0]
        for size, fname in DIR_FIELDS:
            note = " (%s)" % name if fname == "Kind" else ""
            off = field(ix, off, size, fname, note, FLAG_BITS.get(("dir", fname)))


def padding(ix, pos, start):
    if start > pos:
        line(pos, ix.data[pos:start], "padding (zero) to a multiple of 8")


def strings(ix, off, length):
    pos = off
    while pos < off + length:
        end = ix.data.index(b"\0", pos) + 1
        raw = ix.data[pos:end]
        for i in range(0, len(raw), 8):
            text = '[%d] "%s"' % (pos - off, raw[:-1].decode()) if i == 0 else ""
            line(pos + i, raw[i:i + 8], text)
        pos = end


# §7.9 format 2: packed record fields, block record fields, block columns
PACKED_FIELDS = {
    6: ("Die_Offset", "Linkage_Name", "Name", "Decl_File", "Decl_Line"),
    9: ("Parent_Distance", "Function", "Call_File", "Call_Line", "Call_Column",
        "Call_Discriminator", "Depth", "Flags", "Low_PC"),
}
BLOCK_FIELDS = ((8, "First_Address"), (4, "Rows_Offset"), (4, "Base_Index"),
                (4, "Base_Line"), (4, "Base_Column"), (1, "Width_Delta"),
                (1, "Width_Index"), (1, "Width_Line"), (1, "Width_Column"),
                (1, "Width_Discriminator"), (3, "Reserved"))
BLOCK_COLUMNS = ("Delta", "Index", "Line", "Column", "Discriminator")


def bit_string(ix, off, nbytes, rows):
    """The bytes of a bit string, 8 a line, then what they decode to."""
    for i in range(0, nbytes, 8):
        line(off + i, ix.data[off + i:off + min(i + 8, nbytes)], "bit string" if i == 0 else "")
    for text in rows:
        print("%4s  %-24s   %s" % ("", "", text))


def packed_records(ix, kind, off, length, count):
    names = PACKED_FIELDS[kind]
    pos = field(ix, off, 4, "Field_Count")
    pos = field(ix, pos, 4, "Record_Bits")
    widths = []
    for name in names:
        widths.append(ix.data[pos])
        pos = field(ix, pos, 1, "Width", "  (%s)" % name)
        line(pos, ix.data[pos:pos + 7], "zero")
        pos = field(ix, pos + 7, 8, "Base", "  (%s)" % name, number=True)
    start, rbits = pos, sum(widths)
    nbytes = (count * rbits + 7) // 8
    rows = []
    for i in range(count):
        bit, vals = i * rbits, []
        for name, w in zip(names, widths):
            vals.append("%s %d" % (name, spec_reader.bits(ix.data, start, bit, w)))
            bit += w
        rows.append("record %d, stored: %s" % (i, ", ".join(vals)))
    bit_string(ix, start, nbytes, rows)
    line(start + nbytes, ix.data[start + nbytes:off + length], "8 zero bytes")


def block_column(ix, off, count):
    for k in range(count):
        for size, fname in BLOCK_FIELDS:
            note = "  [block %d]" % k if fname == "First_Address" else ""
            if fname == "First_Address":
                value = int.from_bytes(ix.data[off:off + 8], "big")
                note += " (vaddr 0x%x)" % (value + ix.base)
            off = field(ix, off, size, fname, note, number=True)


def block_rows(ix, kind, off, length, count):
    col = ix.dir[kind - 1][0]
    for k in range((count + 63) // 64):
        first, roff, *_b, = struct.unpack_from(">QIIII", ix.data, col + 32 * k)
        w = list(ix.data[col + 32 * k + 24:col + 32 * k + 29])
        m = min(64, count - 64 * k)
        total = m * sum(w)
        rows = []
        for r in range(m):
            vals = []
            for c in range(5):
                if w[c]:
                    bit = m * sum(w[:c]) + r * w[c]
                    vals.append("%s %d" % (BLOCK_COLUMNS[c],
                                           spec_reader.bits(ix.data, off + roff, bit, w[c])))
            rows.append("block %d row %d, stored: %s" % (k, r, ", ".join(vals) or "(all 0)"))
        bit_string(ix, off + roff, (total + 7) // 8, rows)
    end = off + length
    line(end - 8, ix.data[end - 8:end], "8 zero bytes")


def table(ix, kind, off, length, count):
    name = spec_reader.KINDS[kind][0]
    print("-- table %d %s (§%s), %d bytes, count %d" % (
        kind, name, {1: "8", 2: "7.1", 3: "7.2", 4: "7.2", 12: "7.7",
                     13: "7.2.1"}.get(kind, "7"), length, count))
    if kind == 1:
        strings(ix, off, length)
        return
    if ix.major == 2 and kind in (6, 9):
        packed_records(ix, kind, off, length, count)
        return
    if ix.major == 2 and kind in (7, 10):
        block_column(ix, off, count)
        return
    if ix.major == 2 and kind in (8, 11):
        block_rows(ix, kind, off, length, count)
        return
    layout = [(ix.asize if s == "A" else s, f) for s, f in RECORDS[kind]]
    for i in range(count):
        for size, fname in layout:
            note = ""
            if i == 0 and fname == layout[0][1]:
                note = "  [record 0]"
            elif fname == layout[0][1]:
                note = "  [record %d]" % i
            if kind == 12 and i < len(BUILD_INFO_NAMES):
                note = "  [%d: %s]" % (i, BUILD_INFO_NAMES[i])
            if size == ix.asize and fname == "Start":
                value = int.from_bytes(ix.data[off:off + size], "big")
                note += " (vaddr 0x%x)" % (value + ix.base)
            off = field(ix, off, size, fname, note, FLAG_BITS.get((kind, fname)))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__.split("usage: ")[1])
        return 2
    ix = spec_reader.Index(argv[1])
    header(ix)
    directory(ix)
    pos = ix.dir_end
    for kind, (off, length, count, *_rest) in sorted(ix.dir.items(),
                                                     key=lambda kv: kv[1][0]):
        padding(ix, pos, off)
        table(ix, kind, off, length, count)
        pos = off + length
    padding(ix, pos, len(ix.data))
    print("-- end of file at %d = File_Size" % len(ix.data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
