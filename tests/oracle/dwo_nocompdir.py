#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dwo_nocompdir.py BIN - removes DW_AT_comp_dir from BIN's unit DIEs.

Compilers always give a skeleton unit a DW_AT_comp_dir, so the fixture for
"no comp_dir" (LLVM 14's DWARFUnit::parseDWO then opens DW_AT_dwo_name
relative to the working directory) is made by renaming the attribute in
.debug_abbrev to DW_AT_description (0x5a, the same one-byte ULEB and form,
ignored on a unit) for every compile or skeleton unit abbreviation.
"""
import struct
import sys


def uleb(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def section(data, want):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdr = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize) for k in range(shnum)]
    strs = hdr[shstrndx][4]
    for h in hdr:
        name = data[strs + h[0]:data.index(b"\0", strs + h[0])].decode()
        if name == want:
            return h[4], h[5]
    raise SystemExit(f"{want} not found")


def main():
    path = sys.argv[1]
    data = bytearray(open(path, "rb").read())
    off, size = section(data, ".debug_abbrev")
    i, end, n = off, off + size, 0
    while i < end:
        code, i = uleb(data, i)
        if code == 0:
            continue
        tag, i = uleb(data, i)
        i += 1  # children
        while True:
            at_pos = i
            at, i = uleb(data, i)
            form, i = uleb(data, i)
            if form == 0x21:  # DW_FORM_implicit_const
                _, i = uleb(data, i)
            if at == 0 and form == 0:
                break
            if at == 0x1B and tag in (0x11, 0x4A):
                data[at_pos] = 0x5A
                n += 1
    if not n:
        raise SystemExit(f"{path}: no DW_AT_comp_dir in a unit abbreviation")
    open(path, "wb").write(data)


main()
