#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""patch_elf.py IN OUT u8|u32|u64 SECTION OFFSET VALUE

Copies the little-endian ELF64 file IN to OUT with one integer written at
OFFSET inside the named section's file bytes (for the bad-DWARF tests)."""
import struct
import sys


def section(data, name):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdr = lambda i: struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    stroff = hdr(shstrndx)[4]
    for i in range(shnum):
        h = hdr(i)
        end = data.index(b"\0", stroff + h[0])
        if data[stroff + h[0]:end].decode() == name:
            return h[4], h[5]
    raise SystemExit(f"no section {name}")


def main():
    src, dst, width, name, off, val = sys.argv[1:7]
    data = bytearray(open(src, "rb").read())
    start, size = section(data, name)
    off, val = int(off, 0), int(val, 0)
    fmt = {"u8": "<B", "u32": "<I", "u64": "<Q"}[width]
    if off + struct.calcsize(fmt) > size:
        raise SystemExit("offset outside the section")
    struct.pack_into(fmt, data, start + off, val)
    open(dst, "wb").write(data)


if __name__ == "__main__":
    main()
