#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""hostile_gen.py: hostile inputs for hostile.sh, written from scratch.

  hostile_gen.py dwarf-self OUT.s     a DIE whose DW_AT_abstract_origin is itself,
                                      inlined into a concrete function
  hostile_gen.py dwarf-cycle OUT.s    two DIEs whose abstract origins form a 2-cycle
  hostile_gen.py dwarf-deep OUT.s N   inlined_subroutine DIEs nested N deep
  hostile_gen.py fat-ffff OUT         a 40-byte universal Mach-O header declaring
                                      0xFFFFFFFF slices
  hostile_gen.py chsize ELF           patch the Elf64_Chdr of the SHF_COMPRESSED
                                      .debug_info of ELF (in place): ch_size = 2^40
  hostile_gen.py debuglink OUT NAME TARGET  the contents of a .gnu_debuglink section
                                      naming NAME with the CRC-32 of TARGET

The .s files are DWARF 4 by hand (abbrevs + one CU) next to a text function
`f`, so `cc -nostdlib` links them into an executable whose DWARF is exactly
what is written here.
"""
import struct
import sys
import zlib

HEAD = """\t.text
\t.globl _start
\t.type _start, @function
_start:
\t.globl f
\t.type f, @function
f:
\tnop
\tnop
\tnop
\tnop
\tret
.Lf_end:
\t.size f, .Lf_end - f
\t.size _start, .Lf_end - _start
\t.section .debug_abbrev,"",@progbits
\t.uleb128 1\n\t.uleb128 0x11\n\t.byte 1
\t.uleb128 0x03\n\t.uleb128 0x08
\t.uleb128 0x11\n\t.uleb128 0x01
\t.uleb128 0x12\n\t.uleb128 0x07
\t.byte 0, 0
\t.uleb128 2\n\t.uleb128 0x2e\n\t.byte 1
\t.uleb128 0x03\n\t.uleb128 0x08
\t.uleb128 0x11\n\t.uleb128 0x01
\t.uleb128 0x12\n\t.uleb128 0x07
\t.byte 0, 0
\t.uleb128 3\n\t.uleb128 0x1d\n\t.byte 1
\t.uleb128 0x31\n\t.uleb128 0x13
\t.uleb128 0x11\n\t.uleb128 0x01
\t.uleb128 0x12\n\t.uleb128 0x07
\t.byte 0, 0
\t.uleb128 4\n\t.uleb128 0x2e\n\t.byte 0
\t.uleb128 0x31\n\t.uleb128 0x13
\t.uleb128 0x20\n\t.uleb128 0x0b
\t.byte 0, 0
\t.uleb128 5\n\t.uleb128 0x2e\n\t.byte 0
\t.uleb128 0x03\n\t.uleb128 0x08
\t.uleb128 0x20\n\t.uleb128 0x0b
\t.byte 0, 0
\t.byte 0
\t.section .debug_info,"",@progbits
.Lcu:
\t.long .Lcu_end - .Lcu - 4
\t.short 4
\t.long 0
\t.byte 8
\t.uleb128 1
\t.asciz "hostile.c"
\t.quad f
\t.quad 5
"""


def concrete(origin_label, depth=1):
    """f, with `depth` nested inlined_subroutine DIEs of origin_label."""
    out = ["\t.uleb128 2", '\t.asciz "f"', "\t.quad f", "\t.quad 5"]
    for _ in range(depth):
        out += ["\t.uleb128 3", "\t.long %s - .Lcu" % origin_label, "\t.quad f", "\t.quad 4"]
    out += ["\t.byte 0"] * depth  # close the inlined_subroutines
    out.append("\t.byte 0")  # close f
    return "\n".join(out) + "\n"


def tail():
    return "\t.byte 0\n.Lcu_end:\n"


def main():
    kind = sys.argv[1]
    if kind == "dwarf-self":
        body = ".Ls:\n\t.uleb128 4\n\t.long .Ls - .Lcu\n\t.byte 3\n" + concrete(".Ls")
        open(sys.argv[2], "w").write(HEAD + body + tail())
    elif kind == "dwarf-cycle":
        body = (".La:\n\t.uleb128 4\n\t.long .Lb - .Lcu\n\t.byte 3\n"
                ".Lb:\n\t.uleb128 4\n\t.long .La - .Lcu\n\t.byte 3\n" + concrete(".La"))
        open(sys.argv[2], "w").write(HEAD + body + tail())
    elif kind == "dwarf-deep":
        n = int(sys.argv[3])
        body = '.Lg:\n\t.uleb128 5\n\t.asciz "g"\n\t.byte 3\n' + concrete(".Lg", n)
        open(sys.argv[2], "w").write(HEAD + body + tail())
    elif kind == "fat-ffff":
        data = struct.pack(">II", 0xCAFEBABE, 0xFFFFFFFF) + bytes(32)
        assert len(data) == 40
        open(sys.argv[2], "wb").write(data)
    elif kind == "chsize":
        path = sys.argv[2]
        b = bytearray(open(path, "rb").read())
        assert b[:4] == b"\x7fELF" and b[4] == 2 and b[5] == 1, "ELF64 LE expected"
        shoff, = struct.unpack_from("<Q", b, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
        def sh(i):
            return struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize)
        stroff = sh(shstrndx)[4]
        done = False
        for i in range(shnum):
            name, typ, flags, addr, off, size = sh(i)[:6]
            nm = bytes(b[stroff + name:b.index(0, stroff + name)])
            if nm == b".debug_info":
                assert flags & 0x800, ".debug_info is not SHF_COMPRESSED"
                struct.pack_into("<Q", b, off + 8, 1 << 40)
                done = True
        assert done, "no .debug_info"
        open(path, "wb").write(b)
    elif kind == "debuglink":
        out, name, target = sys.argv[2], sys.argv[3].encode(), sys.argv[4]
        crc = zlib.crc32(open(target, "rb").read()) & 0xFFFFFFFF
        data = name + b"\0"
        data += b"\0" * (-len(data) % 4)
        open(out, "wb").write(data + struct.pack("<I", crc))
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
