#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A client of symdb serve's binary batch messages (SPEC §16), written from
SPEC.md alone with the standard library (struct), so that the tests compare
symdb's C codec with an independent reading of the specification.

As a module: encode_request(), decode_response(), post().
As a program:
  batch_client.py annotate FILE   annotated hexdump of a request or response
                                  (SPEC Appendix C is its output)
"""
import struct
import sys
import urllib.request

CONTENT_TYPE = "application/x-symdb-batch"
NONE = 0xFFFFFFFF
STATUS = ["ok", "unknown_image", "no_symbol", "out_of_range", "damaged", "bad_image", "deadline",
          "pending"]
ID_KINDS = {"build_id": 1, "uuid": 2, "path": 3}
ADDR_KINDS = {"vaddr": 0, "offset": 1, "fileoff": 2, "runtime": 3}
FUNCTIONS = {"linkage": 0, "short": 1, "none": 2}


class BadMessage(Exception):
    pass


def encode_request(modules, stacks=(), demangle=True, inlines=True, functions="linkage"):
    """modules: dicts with build_id|uuid (hex) or path (str), optional arch,
    addr_kind, load_address, addresses (ints); stacks: lists of
    (module index, address)."""
    flags = (1 if demangle else 0) | (2 if inlines else 0) | FUNCTIONS[functions] << 2
    naddrs = sum(len(m.get("addresses", [])) for m in modules)
    nframes = sum(len(s) for s in stacks)
    out = [b"SYBQ", struct.pack(">BBHIIII", 1, 0, flags, len(modules), naddrs, len(stacks), nframes)]
    for m in modules:
        if "path" in m:
            kind, ident = 3, m["path"].encode()
        elif "uuid" in m:
            kind, ident = 2, bytes.fromhex(m["uuid"].replace("-", ""))
        else:
            kind, ident = 1, bytes.fromhex(m["build_id"])
        arch = m.get("arch", "").encode()
        addrs = m.get("addresses", [])
        out.append(struct.pack(">BBHB3xQI", kind, ADDR_KINDS[m.get("addr_kind", "vaddr")],
                               len(ident), len(arch), m.get("load_address", 0), len(addrs)))
        out.append(ident + arch)
        out.append(struct.pack(">%dQ" % len(addrs), *addrs))
    for s in stacks:
        out.append(struct.pack(">I", len(s)))
        for mi, a in s:
            out.append(struct.pack(">IQ", mi, a))
    return b"".join(out)


def _string(table, ref):
    if ref == NONE:
        return None
    if ref >= len(table):
        raise BadMessage("string reference %d past the %d-byte table" % (ref, len(table)))
    end = table.index(b"\0", ref)
    return table[ref:end].decode("utf-8", "surrogateescape")


def decode_response(body):
    """Returns {"modules": [{"status", "image_id" | "error", "results": [...]}],
    "stacks": [[result, ...], ...]}, a result being {"status", "frames",
    "symbol"}: the JSON API's shape and field names, without what the caller
    sent (the module ids, each result's address)."""
    if len(body) < 32 or body[:4] != b"SYBR":
        raise BadMessage("not a response")
    major, minor, flags, nm, ns, nr, nf, sb, res = struct.unpack_from(">BBHIIIIII", body, 4)
    if major != 1 or flags or res:
        raise BadMessage("version %d or reserved bits" % major)
    if 32 + 48 * nm + 4 * ns + 40 * nr + 40 * nf + sb != len(body) or sb == NONE:
        raise BadMessage("length does not match the counts")
    table = body[len(body) - sb:]
    if sb and table[-1] != 0:
        raise BadMessage("string table does not end in NUL")
    off = 32
    mods = []
    for _ in range(nm):
        st, idlen, r0, n, err, r1, ident = struct.unpack_from(">BBHIII32s", body, off)
        if r0 or r1 or idlen > 32 or any(ident[idlen:]):
            raise BadMessage("module record")
        m = {"status": _status(st)}
        if st == 0:
            m["image_id"] = ident[:idlen].hex()
        elif err != NONE:
            m["error"] = _string(table, err)
        mods.append((m, n))
        off += 48
    stacks = list(struct.unpack_from(">%dI" % ns, body, off))
    off += 4 * ns
    results = []
    for _ in range(nr):
        st, r0, r1, r2, n, sym, r3, start, size, offset = struct.unpack_from(">BBBBIIIQQQ", body, off)
        if r0 or r1 or r2 or r3 or (n and st) or (sym == NONE and (start or size or offset)):
            raise BadMessage("result record")
        symbol = None
        if sym != NONE:
            symbol = {"name": _string(table, sym), "start": hex(start), "size": size,
                      "offset": offset}
        results.append((st, n, symbol))
        off += 40
    frames = []
    for _ in range(nf):
        fn, fl, sf, line, col, disc, sline, fflags, start = struct.unpack_from(">IIIIIIIIQ", body, off)
        off += 40
        if fflags & ~3 or (not fflags & 1 and start):
            raise BadMessage("frame flags")
        frames.append({"function": _string(table, fn), "file": _string(table, fl),
                       "line": line, "column": col, "discriminator": disc,
                       "start_address": hex(start) if fflags & 1 else None,
                       "start_file": _string(table, sf), "start_line": sline,
                       "inlined": bool(fflags & 2)})
    if sum(n for _, n in mods) + sum(stacks) != nr or sum(r[1] for r in results) != nf:
        raise BadMessage("counts do not add up")
    it, fi = iter(results), 0
    out = {"modules": [], "stacks": []}

    def take(n):
        nonlocal fi
        rs = []
        for _ in range(n):
            st, k, symbol = next(it)
            rs.append({"status": _status(st), "frames": frames[fi:fi + k], "symbol": symbol})
            fi += k
        return rs
    for m, n in mods:
        m["results"] = take(n)
        out["modules"].append(m)
    for n in stacks:
        out["stacks"].append(take(n))
    return out


def _status(s):
    return STATUS[s] if s < len(STATUS) else "status_%d" % s


def post(url, body, timeout=60):
    """POSTs a request; returns (HTTP status, content type, body)."""
    rq = urllib.request.Request(url, data=body, method="POST",
                                headers={"Content-Type": CONTENT_TYPE})
    try:
        with urllib.request.urlopen(rq, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type"), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read()


# ---- annotate ----------------------------------------------------------------

class _Dump:
    def __init__(self, body):
        self.b, self.off, self.lines = body, 0, []

    def section(self, text):
        self.lines.append("-- " + text)

    def field(self, size, label):
        chunk = self.b[self.off:self.off + size]
        hexes = [" ".join("%02x" % c for c in chunk[i:i + 8]) for i in range(0, max(len(chunk), 1), 8)]
        self.lines.append("%04x  %-23s  %s" % (self.off, hexes[0], label))
        for i, h in enumerate(hexes[1:], 1):
            self.lines.append(("%04x  %s" % (self.off + 8 * i, h)).rstrip())
        self.off += size
        return chunk

    def u(self, size, name, fmt=None):
        v = int.from_bytes(self.b[self.off:self.off + size], "big")
        self.field(size, "%s = %s" % (name, fmt(v) if fmt else v))
        return v


def annotate(body):
    d = _Dump(body)
    if body[:4] == b"SYBQ":
        d.section("request header (§16.3), 24 bytes")
        d.field(4, "Magic = 'SYBQ'")
        d.u(1, "Version_Major")
        d.u(1, "Version_Minor")
        d.u(2, "Flags", lambda v: "0x%x (%s)" % (v, "|".join(
            n for b, n in ((1, "DEMANGLE"), (2, "INLINES")) if v & b) +
            ", Functions=%s" % ["linkage", "short", "none", "?"][(v >> 2) & 3]))
        nm = d.u(4, "Module_Count")
        d.u(4, "Address_Count")
        ns = d.u(4, "Stack_Count")
        d.u(4, "Frame_Count")
        for i in range(nm):
            d.section("module %d" % i)
            kind = d.u(1, "Id_Kind", lambda v: "%d (%s)" % (v, {1: "build-id", 2: "uuid", 3: "path"}[v]))
            d.u(1, "Addr_Kind", lambda v: "%d (%s)" % (v, ["vaddr", "offset", "fileoff", "runtime"][v]))
            il = d.u(2, "Id_Length")
            al = d.u(1, "Arch_Length")
            d.field(3, "Reserved")
            d.u(8, "Load_Address", hex)
            na = d.u(4, "Address_Count")
            ident = body[d.off:d.off + il]
            d.field(il, "Id = " + ("'%s'" % ident.decode() if kind == 3 else ident.hex()))
            if al:
                d.field(al, "Arch = '%s'" % body[d.off:d.off + al].decode())
            for k in range(na):
                d.u(8, "Address[%d]" % k, hex)
        for s in range(ns):
            d.section("stack %d" % s)
            nf = d.u(4, "Frame_Count")
            for k in range(nf):
                d.u(4, "Module_Index")
                d.u(8, "Address", hex)
    else:
        d.section("response header (§16.4), 32 bytes")
        d.field(4, "Magic = 'SYBR'")
        d.u(1, "Version_Major")
        d.u(1, "Version_Minor")
        d.u(2, "Flags")
        nm = d.u(4, "Module_Count")
        ns = d.u(4, "Stack_Count")
        nr = d.u(4, "Result_Count")
        nf = d.u(4, "Frame_Count")
        sb = d.u(4, "String_Bytes")
        d.u(4, "Reserved")
        table = body[len(body) - sb:]

        def st(v):
            return "%d (%s)" % (v, STATUS[v])

        def ref(v):
            return "NONE" if v == NONE else "%d -> \"%s\"" % (v, _string(table, v))
        d.section("module records, %d x 48 bytes" % nm)
        for i in range(nm):
            d.u(1, "Status", st)
            idlen = d.u(1, "Image_Id_Length")
            d.u(2, "Reserved")
            d.u(4, "Result_Count  [module %d]" % i)
            d.u(4, "Error", ref)
            d.u(4, "Reserved")
            d.field(32, "Image_Id = %s" % (body[d.off:d.off + idlen].hex() or "(none)"))
        d.section("stack records, %d x 4 bytes" % ns)
        for i in range(ns):
            d.u(4, "Result_Count  [stack %d]" % i)
        d.section("result records, %d x 40 bytes" % nr)
        for i in range(nr):
            d.u(1, "Status", st)
            d.field(3, "Reserved")
            d.u(4, "Frame_Count  [result %d]" % i)
            d.u(4, "Symbol", ref)
            d.u(4, "Reserved")
            d.u(8, "Symbol_Start", hex)
            d.u(8, "Symbol_Size", hex)
            d.u(8, "Symbol_Offset", hex)
        d.section("frame records, %d x 40 bytes" % nf)
        for i in range(nf):
            d.u(4, "Function", ref)
            d.u(4, "File", ref)
            d.u(4, "Start_File", ref)
            d.u(4, "Line")
            d.u(4, "Column")
            d.u(4, "Discriminator")
            d.u(4, "Start_Line")
            d.u(4, "Flags", lambda v: "%d (%s)" % (v, "|".join(
                n for b, n in ((1, "HAS_START"), (2, "INLINED")) if v & b) or "-"))
            d.u(8, "Start  [frame %d]" % i, hex)
        d.section("string table, %d bytes" % sb)
        while d.off < len(body):
            end = body.index(b"\0", d.off) + 1
            d.field(end - d.off, "[%d] \"%s\"" % (d.off - (len(body) - sb), body[d.off:end - 1].decode()))
    d.lines.append("-- end at %d = message length" % d.off)
    return "\n".join(d.lines)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "annotate":
        with open(sys.argv[2], "rb") as f:
            print(annotate(f.read()))
    else:
        sys.exit(__doc__)
