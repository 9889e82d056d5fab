#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perfmap_check.py: compare `symdb query --perf-map MAP` with the map itself
and, optionally, with the symbols `perf script` printed for samples in it.

The expectations are computed here from the map text by perf 6.1's reading
(tools/perf/util/symbol.c dso__load_perf_map: "START SIZE NAME", hex, the
name after one separator byte; symbol__new: a size of 0 ends at its start;
symbols__find: [start, start + size), a zero-size entry answers its start):
for each entry its first, middle and last address are asked, and the
expected name is that of the latest line covering the address.  perf's
answer where entries overlap depends on its rb-tree's shape, so perf's
samples are compared only where one entry covers the address.

usage: perfmap_check.py --symdb SYMDB --map MAP [--perf-script FILE]
                        [--want SUBSTRING] [--jitdump [--same-as PERFMAP]]
With --jitdump, MAP is perf's jit-PID.dump (parsed here with struct), and
--same-as names a perf map of the same run whose entries at the same
start and size must carry the same names.
exit 0 when everything agrees, 1 with the differences on stderr.
"""
import argparse
import bisect
import json
import re
import struct
import subprocess
import sys

HEX = re.compile(r'[ \t]*(?:0[xX])?([0-9a-fA-F]+)[ \t]')


def parse_map(path):
    """[(start, size, name)] in line order; malformed lines left out."""
    out = []
    with open(path, 'rb') as f:
        data = f.read()
    lines = data.split(b'\n')
    for raw in lines[:-1]:  # the part after the last newline is unfinished
        line = raw.decode('utf-8', 'surrogateescape')
        m = HEX.match(line)
        if not m:
            continue
        rest = line[m.end():]
        m2 = re.match(r'[ \t]*(?:0[xX])?([0-9a-fA-F]+)[ \t]', rest)
        if not m2:
            continue
        start, size = int(m.group(1), 16), int(m2.group(1), 16)
        name = rest[m2.end():]
        if len(name) < 3 or '\0' in name or start >= 1 << 64 or size >= 1 << 64 \
                or start + size >= 1 << 64:
            continue
        out.append((start, size, name))
    return out


def parse_dump(path):
    """[(start, size, name)] of a jitdump (perf's tools/perf/util/jitdump.h):
    JIT_CODE_LOAD records, and JIT_CODE_MOVE ones as the latest load of
    their code_index at the new address, in record order; a record not
    complete yet ends the list."""
    with open(path, 'rb') as f:
        d = f.read()
    bo = '<' if d[:4] == b'DTiJ' else '>'
    if d[:4] not in (b'DTiJ', b'jItD'):
        sys.exit('%s: not a jitdump' % path)
    version, hsize = struct.unpack_from(bo + 'II', d, 4)
    if version != 1:
        sys.exit('%s: jitdump version %d' % (path, version))
    out, by_index, off = [], {}, hsize
    while off + 16 <= len(d):
        rid, total = struct.unpack_from(bo + 'II', d, off)
        if total < 16 or off + total > len(d):
            break
        if rid == 0:
            _, _, _, addr, size, index = struct.unpack_from(bo + 'IIQQQQ', d, off + 16)
            name = d[off + 56:d.index(b'\0', off + 56)].decode('utf-8', 'surrogateescape')
            by_index[index] = name
            out.append((addr, size, name))
        elif rid == 1:
            _, _, _, _, new, size, index = struct.unpack_from(bo + 'IIQQQQQ', d, off + 16)
            if index in by_index:
                out.append((new, size, by_index[index]))
        off += total
    return out


def ask(symdb, mapfile, addrs):
    inp = ''.join('0x%x\n' % a for a in addrs)
    p = subprocess.run([symdb, 'query', '--perf-map', mapfile, '--output-style=JSON'],
                       input=inp, capture_output=True, text=True, check=False,
                       errors='surrogateescape')
    if p.returncode != 0:
        sys.exit('symdb query exited %d: %s' % (p.returncode, p.stderr.strip()))
    got = {}
    for line in p.stdout.splitlines():
        o = json.loads(line)
        got[int(o['Address'], 16)] = o['Symbol'][0]['FunctionName']
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--symdb', required=True)
    ap.add_argument('--map', required=True)
    ap.add_argument('--perf-script')
    ap.add_argument('--want', default='')
    ap.add_argument('--jitdump', action='store_true', help='MAP is a jit-PID.dump')
    ap.add_argument('--same-as', help='a perf map of the same run: its names must agree')
    a = ap.parse_args()
    entries = parse_dump(a.map) if a.jitdump else parse_map(a.map)
    if not entries:
        sys.exit('%s: no entries' % a.map)
    addrs = set()
    for s, z, _ in entries:
        addrs.update({s, s + z // 2, s + z - 1} if z else {s})
    samples = []
    if a.perf_script:
        pat = re.compile(r'^\s*([0-9a-f]+)\s+(.*?)\s+\((/tmp/perf-\d+\.map)\)\s*$')
        with open(a.perf_script, errors='surrogateescape') as f:
            for line in f:
                m = pat.match(line)
                if m:
                    samples.append((int(m.group(1), 16), m.group(2)))
        addrs.update(ip for ip, _ in samples)
    addrs = sorted(addrs)
    got = ask(a.symdb, a.map, addrs)
    order = sorted(range(len(entries)), key=lambda i: entries[i][0])
    starts = [entries[i][0] for i in order]
    maxsize = max(max(z, 1) for _, z, _ in entries)
    bad = 0
    wanted = 0

    def cover(addr):
        """Indices of the entries covering addr by perf's rule: only those
        starting within maxsize below it can."""
        hi = bisect.bisect_right(starts, addr)
        lo = bisect.bisect_left(starts, addr - maxsize + 1 if addr >= maxsize else 0)
        idx = []
        for k in range(lo, hi):
            i = order[k]
            s, z, _ = entries[i]
            if (addr == s) if z == 0 else (s <= addr < s + z):
                idx.append(i)
        return idx

    for addr in addrs:
        idx = cover(addr)
        want = entries[max(idx)][2] if idx else ''
        if got.get(addr) != want:
            bad += 1
            if bad <= 20:
                print('0x%x: symdb %r, map %r' % (addr, got.get(addr), want), file=sys.stderr)
        elif a.want and a.want in want:
            wanted += 1
    print('%d addresses of %d map entries checked against the map, %d name %r'
          % (len(addrs), len(entries), wanted, a.want))
    if a.want and not wanted:
        print('no address named %r' % a.want, file=sys.stderr)
        bad += 1
    if a.same_as:
        other = {s: (z, n) for s, z, n in parse_map(a.same_as)}
        agree = 0
        for s, z, n in entries:
            if s in other and other[s][0] == z:
                if other[s][1] != n:
                    bad += 1
                    print('0x%x: %r here, %r in %s' % (s, n, other[s][1], a.same_as),
                          file=sys.stderr)
                else:
                    agree += 1
        print('%d entries named as in %s' % (agree, a.same_as))
        if not agree:
            print('no entry in common with %s' % a.same_as, file=sys.stderr)
            bad += 1
    if a.perf_script:
        same = amb = hot = 0
        for ip, sym in samples:
            idx = cover(ip)
            if len(idx) != 1:
                amb += 1
                continue
            if got.get(ip) != sym:
                bad += 1
                print('sample 0x%x: symdb %r, perf %r' % (ip, got.get(ip), sym), file=sys.stderr)
            else:
                same += 1
                hot += a.want in sym
        print('%d perf samples in the map: %d named as perf names them (%d %r), '
              '%d under overlapping entries not compared' % (len(samples), same, hot, a.want, amb))
        if not same or (a.want and not hot):
            print('no perf sample in the JIT code to compare', file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
