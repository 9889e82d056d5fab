# SPDX-License-Identifier: MIT
# elfinfo.py: the few ELF facts the benchmark needs, read with the standard
# library only (no pyelftools): executable section ranges (where "uniform over
# text" draws from), the DWARF byte count (sum of .debug_* section sizes, both
# as stored and inflated for SHF_COMPRESSED sections, ELF gABI "Section
# Compression"), the GNU build-id, and the separate debug file that Debian's
# -dbg packages install under /usr/lib/debug/.build-id/xx/yyyy.debug.
#
# Usable as a module (gen_addrs.py imports it) or as a command:
#   elfinfo.py dwarf-bytes FILE     -> "stored inflated"
#   elfinfo.py build-id FILE        -> hex, or nothing
#   elfinfo.py debug-file FILE      -> path of the separate debug file, or nothing
import os
import struct
import sys

SHF_EXECINSTR = 0x4
SHF_COMPRESSED = 0x800
SHT_NOBITS = 8
SHT_NOTE = 7
NT_GNU_BUILD_ID = 3


class Elf:
    """Section headers of one ELF file (32/64-bit, either byte order)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF":
            raise ValueError(f"{path}: not an ELF file")
        self.is64 = d[4] == 2
        self.end = "<" if d[5] == 1 else ">"
        e = self.end
        if self.is64:
            (self.shoff,) = struct.unpack_from(e + "Q", d, 0x28)
            self.shentsize, self.shnum, self.shstrndx = struct.unpack_from(e + "HHH", d, 0x3A)
        else:
            (self.shoff,) = struct.unpack_from(e + "I", d, 0x20)
            self.shentsize, self.shnum, self.shstrndx = struct.unpack_from(e + "HHH", d, 0x2E)
        self.sections = [self._shdr(i) for i in range(self.shnum)]
        if self.sections and self.shstrndx < self.shnum:
            strtab = self.sections[self.shstrndx]
            for s in self.sections:
                s["name"] = self._cstr(strtab["offset"] + s["name_off"])

    def _shdr(self, i):
        off = self.shoff + i * self.shentsize
        e = self.end
        if self.is64:
            name, typ, flags, addr, offset, size = struct.unpack_from(e + "IIQQQQ", self.data, off)
        else:
            name, typ, flags, addr, offset, size = struct.unpack_from(e + "IIIIII", self.data, off)
        return {"name_off": name, "type": typ, "flags": flags, "addr": addr,
                "offset": offset, "size": size, "name": ""}

    def _cstr(self, off):
        end = self.data.index(b"\0", off)
        return self.data[off:end].decode("utf-8", "replace")

    def exec_ranges(self):
        """[(start, end)] of allocated executable sections with contents."""
        return [(s["addr"], s["addr"] + s["size"]) for s in self.sections
                if s["flags"] & SHF_EXECINSTR and s["type"] != SHT_NOBITS and s["size"] > 0]

    def dwarf_bytes(self):
        """(stored, inflated) byte counts of all .debug_* / .zdebug_* sections."""
        stored = inflated = 0
        for s in self.sections:
            if not (s["name"].startswith(".debug_") or s["name"].startswith(".zdebug_")):
                continue
            if s["type"] == SHT_NOBITS:
                continue
            stored += s["size"]
            if s["flags"] & SHF_COMPRESSED:
                # Elf64_Chdr: ch_type u32, ch_reserved u32, ch_size u64 (gABI).
                fmt = self.end + ("IIQ" if self.is64 else "III")
                inflated += struct.unpack_from(fmt, self.data, s["offset"])[2]
            elif s["name"].startswith(".zdebug_"):
                # Legacy GNU format: "ZLIB" + 8-byte big-endian size.
                inflated += struct.unpack_from(">Q", self.data, s["offset"] + 4)[0]
            else:
                inflated += s["size"]
        return stored, inflated

    def build_id(self):
        for s in self.sections:
            if s["type"] != SHT_NOTE:
                continue
            off, end = s["offset"], s["offset"] + s["size"]
            while off + 12 <= end:
                namesz, descsz, typ = struct.unpack_from(self.end + "III", self.data, off)
                name = self.data[off + 12:off + 12 + namesz]
                desc_off = off + 12 + ((namesz + 3) & ~3)
                if typ == NT_GNU_BUILD_ID and name.rstrip(b"\0") == b"GNU":
                    return self.data[desc_off:desc_off + descsz].hex()
                off = desc_off + ((descsz + 3) & ~3)
        return None


def debug_file(path, root="/usr/lib/debug"):
    """The separate debug file for path by build-id, or None."""
    bid = Elf(path).build_id()
    if not bid:
        return None
    cand = os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug")
    return cand if os.path.exists(cand) else None


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: elfinfo.py dwarf-bytes|build-id|debug-file FILE")
    cmd, path = argv[1], argv[2]
    if cmd == "dwarf-bytes":
        print(*Elf(path).dwarf_bytes())
    elif cmd == "build-id":
        print(Elf(path).build_id() or "")
    elif cmd == "debug-file":
        print(debug_file(path) or "")
    else:
        sys.exit(f"elfinfo.py: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
