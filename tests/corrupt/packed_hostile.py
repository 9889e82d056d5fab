#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile format-2 packed tables (SPEC §7.9) with intact checksums.

Copies tests/golden/dwarf-2.0.symdb, rewrites one packed table in a way
only the table checks can catch, recomputes the table's Checksum and the
Header_Checksum (SPEC §9), and imports the file: `symdb import` runs the
full verification (symdb_image_verify).  It must refuse the file with one
line on stderr and exit 4, within the time limit, without a crash or a
sanitizer report.

Cases:
  nodes_count  INLINE_NODES with every Width 0 (Record_Bits 0) and Count
               2^40: no record takes a bit, so Length allows any Count; the
               verifier walked all 2^40 of them (a hang).  SPEC §13: at
               most 2^32 - 2 records.
  fns_short    FUNCTIONS' Length shorter than its packed header.
  fns_fields   FUNCTIONS' Field_Count one more than its kind has.
  fns_wide     FUNCTIONS' first Width 65: no field is wider than 64 bits.
  fns_bits     FUNCTIONS' Record_Bits one more than the sum of its widths.
  fns_length   FUNCTIONS' Count 1000 times the records its Length holds.

Each case also names the message it must produce (README, "Bad inputs").

Python standard library and libxxhash (ctypes).  Usage:
  packed_hostile.py --symdb SYMDB --scratch DIR --golden FILE CASE
"""

import argparse
import ctypes
import ctypes.util
import os
import shutil
import struct
import subprocess
import sys

SANITIZER_MARKS = (b"AddressSanitizer", b"LeakSanitizer", b"runtime error:",
                   b"UndefinedBehaviorSanitizer")
DIRENT = struct.Struct(">IHHQQQQ")  # Kind Flags Record_Size Offset Length Count Checksum
FUNCTIONS = 6
INLINE_NODES = 9


def xxh3():
    lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
    fn = lib.XXH3_64bits
    fn.restype = ctypes.c_uint64
    fn.argtypes = (ctypes.c_char_p, ctypes.c_size_t)
    return lambda b: fn(bytes(b), len(b))


def entry(d, kind):
    """(directory offset of the entry, its fields) for table `kind`."""
    count, dir_off = struct.unpack_from(">I", d, 88)[0], struct.unpack_from(">Q", d, 96)[0]
    for i in range(count):
        at = dir_off + 40 * i
        e = DIRENT.unpack_from(d, at)
        if e[0] == kind:
            return at, list(e)
    raise SystemExit("FAIL: no table of kind %d" % kind)


def reseal(d, at, e, h):
    """Store entry e at `at` with its table's checksum, then the header's."""
    e[6] = h(d[e[3]:e[3] + e[4]])
    DIRENT.pack_into(d, at, *e)
    count, dir_off = struct.unpack_from(">I", d, 88)[0], struct.unpack_from(">Q", d, 96)[0]
    struct.pack_into(">Q", d, 120, h(d[:120] + d[dir_off:dir_off + 40 * count]))


def nodes_count(d, h):
    at, e = entry(d, INLINE_NODES)
    off, length = e[3], e[4]
    d[off:off + length] = bytes(length)          # every Width and Base 0
    struct.pack_into(">II", d, off, 9, 0)        # Field_Count 9, Record_Bits 0
    e[5] = 1 << 40                               # Count
    reseal(d, at, e, h)


def fns_short(d, h):
    at, e = entry(d, FUNCTIONS)
    d[e[3] + 8:e[3] + e[4]] = bytes(e[4] - 8)    # what is cut off is padding now
    e[4] = 8                                     # Length: not even the fields
    reseal(d, at, e, h)


def fns_fields(d, h):
    at, e = entry(d, FUNCTIONS)
    nfields = struct.unpack_from(">I", d, e[3])[0]
    struct.pack_into(">I", d, e[3], nfields + 1)
    reseal(d, at, e, h)


def fns_wide(d, h):
    at, e = entry(d, FUNCTIONS)
    d[e[3] + 8] = 65                             # field 0's Width
    reseal(d, at, e, h)


def fns_bits(d, h):
    at, e = entry(d, FUNCTIONS)
    bits = struct.unpack_from(">I", d, e[3] + 4)[0]
    struct.pack_into(">I", d, e[3] + 4, bits + 1)
    reseal(d, at, e, h)


def fns_length(d, h):
    at, e = entry(d, FUNCTIONS)
    e[5] *= 1000
    reseal(d, at, e, h)


# case -> (how to damage the file, what the one line must say)
CASES = {
    "nodes_count": (nodes_count, "table 9 (INLINE_NODES) record 0: packed header: "
                                 "Count above 2^32 - 2 records"),
    "fns_short": (fns_short, "table 6 (FUNCTIONS) record 0: packed header: "
                             "shorter than its header"),
    "fns_fields": (fns_fields, "table 6 (FUNCTIONS) record 0: packed header: "
                               "Field_Count is not that of its kind"),
    "fns_wide": (fns_wide, "table 6 (FUNCTIONS) record 0: packed header: "
                           "a field is wider than its value"),
    "fns_bits": (fns_bits, "table 6 (FUNCTIONS) record 0: packed header: "
                           "Record_Bits is not the sum of the widths"),
    "fns_length": (fns_length, "table 6 (FUNCTIONS) record 0: packed header: "
                               "Length too short for Count records"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--symdb", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--golden", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    try:
        h = xxh3()
    except (OSError, AttributeError):
        print("SKIP: libxxhash not found")
        return 77
    shutil.rmtree(args.scratch, ignore_errors=True)
    os.makedirs(args.scratch)
    d = bytearray(open(args.golden, "rb").read())
    damage, want = CASES[args.case]
    damage(d, h)
    path = os.path.join(args.scratch, args.case + ".symdb")
    with open(path, "wb") as f:
        f.write(d)
    cmd = [args.symdb, "import", "--db", os.path.join(args.scratch, "db"), path]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    except subprocess.TimeoutExpired:
        print("FAIL: %s: symdb import still running after 30 s (a hang)" % args.case)
        return 1
    err = p.stderr
    if p.returncode < 0 or p.returncode >= 128 or any(m in err for m in SANITIZER_MARKS):
        print("FAIL: %s: crash, exit %d: %r" % (args.case, p.returncode, err[:400]))
        return 1
    if p.returncode != 4 or len(err.splitlines()) != 1:
        print("FAIL: %s: want exit 4 and one line, got exit %d: %r"
              % (args.case, p.returncode, err[:400]))
        return 1
    if want.encode() not in err:
        print("FAIL: %s: the line does not say %r: %r" % (args.case, want, err[:400]))
        return 1
    print("%s: %s" % (args.case, err.decode(errors="replace").strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
