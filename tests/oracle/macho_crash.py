# SPDX-License-Identifier: MIT
"""`symdb symbolicate` tests (imported by macho_test.py).

Crash reports are generated here from the fixtures' UUIDs (llvm-dwarfdump
--uuid) and random load addresses: a classic .crash text report and a JSON
.ips report with several threads, a last-exception backtrace and one image
(libsystem_kernel.dylib) that is not in the database.  The expected text of
every frame comes from llvm-symbolizer-14 at the equivalent file address:
"func + offset (file:line)", func and line those of the outermost frame, as
Apple's symbolicated reports show them.
"""
import json
import os
import random
import re

import macho_test as mt

IMAGES = ["app_arm64", "libmo_arm64.dylib"]
MISSING = ("libsystem_kernel.dylib", "0123456789abcdef0123456789abcdef", 0x1a2b30000)


def uuid_of(path):
    out = mt.run(["llvm-dwarfdump-14", "--uuid", path]).stdout
    return re.search(r"UUID: ([0-9A-F-]+)", out).group(1).replace("-", "").lower()


def dashed(h):
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def expected_text(obj, vaddrs):
    """llvm-symbolizer's outermost frame -> "func + off (file:line)"."""
    res = {}
    for a, (frames, start) in zip(vaddrs, mt.llvm_frames(obj, vaddrs)):
        fn, path, line = frames[-1]
        if fn in ("", "??") or start is None:
            continue
        t = "%s + %d" % (fn, a - start)
        if line:
            t += " (%s:%d)" % (os.path.basename(path), line)
        res[a] = (t, fn, a - start, os.path.basename(path) if line else None, line)
    return res


class Report:
    def __init__(self, c, seed):
        rnd = random.Random(seed)
        self.images = []  # (name, uuid, load, base, obj, expected{runtime: text})
        for name in IMAGES:
            obj = c.dwarf(name)
            base = mt.text_base(obj)
            load = rnd.randrange(0x100000000, 0x180000000) & ~0xfff
            lo, size = mt.text_range(obj)
            vaddrs = sorted(set(rnd.randrange(lo, lo + size) for _ in range(40)))
            exp = expected_text(obj, vaddrs)
            rt = {v - base + load: exp[v] for v in exp}
            self.images.append((name, uuid_of(obj), load, base, obj, rt))
        self.threads = []
        for t in range(4):
            frames = []
            for _ in range(rnd.randrange(3, 9)):
                k = rnd.randrange(3)
                if k == 2:
                    frames.append((2, MISSING[2] + rnd.randrange(0x100, 0x8000)))
                else:
                    frames.append((k, rnd.choice(sorted(self.images[k][5]))))
            self.threads.append(frames)

    def name_of(self, k):
        return MISSING[0] if k == 2 else self.images[k][0]

    def load_of(self, k):
        return MISSING[2] if k == 2 else self.images[k][2]

    def crash_text(self):
        out = ["Incident Identifier: 6B1C2D3E-0000-4000-8000-000000000001",
               "Process:             app_arm64 [4242]",
               "Code Type:           ARM-64 (Native)",
               "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)", "",
               "Last Exception Backtrace:",
               "(%s)" % " ".join("0x%x" % a for _k, a in self.threads[1]), ""]
        for t, frames in enumerate(self.threads):
            out.append("Thread %d%s:" % (t, " Crashed" if t == 0 else ""))
            for i, (k, addr) in enumerate(frames):
                out.append("%-4d%-30s\t0x%016x 0x%x + %d" % (i, self.name_of(k), addr,
                                                            self.load_of(k),
                                                            addr - self.load_of(k)))
            out.append("")
        out.append("Thread 0 crashed with ARM Thread State (64-bit):")
        out.append("    x0: 0x0000000000000000   x1: 0x000000016fdff0a8")
        out.append("")
        out.append("Binary Images:")
        for name, u, load, _b, _o, _e in self.images:
            out.append("       0x%x -        0x%x %s arm64  <%s> /Applications/App.app/%s" %
                       (load, load + 0xffff, name, u, name))
        out.append("       0x%x -        0x%x %s arm64e  <%s> /usr/lib/system/%s" %
                   (MISSING[2], MISSING[2] + 0x3ffff, MISSING[0], MISSING[1], MISSING[0]))
        out.append("")
        out.append("EOF")
        return "\n".join(out) + "\n"

    def expected_crash(self):
        text = self.crash_text().split("\n")
        i = text.index("Last Exception Backtrace:") + 1
        exp = []
        for k, (img, addr) in enumerate(self.threads[1]):
            tail = ("0x%x + %d" % (self.load_of(img), addr - self.load_of(img)) if img == 2
                    else self.images[img][5][addr][0])
            exp.append("%-4d%-30s\t0x%016x %s" % (k, self.name_of(img), addr, tail))
        text[i:i + 1] = exp
        n = 0
        for t, frames in enumerate(self.threads):
            while not text[n].startswith("Thread %d" % t):
                n += 1
            for i, (k, addr) in enumerate(frames):
                n += 1
                if k != 2:
                    head = text[n][:text[n].index("0x%016x" % addr) + 18]
                    text[n] = head + " " + self.images[k][5][addr][0]
        return "\n".join(text)

    def ips(self):
        header = {"app_name": "app_arm64", "bug_type": "309", "os_version": "macOS 13.0",
                  "incident_id": "6B1C2D3E-0000-4000-8000-000000000001", "name": "app_arm64"}
        used = [{"source": "P", "arch": "arm64", "base": load, "size": 65536,
                 "uuid": dashed(u), "path": "/Applications/App.app/" + name, "name": name}
                for name, u, load, _b, _o, _e in self.images]
        used.append({"source": "P", "arch": "arm64e", "base": MISSING[2], "size": 262144,
                     "uuid": dashed(MISSING[1]), "path": "/usr/lib/system/" + MISSING[0],
                     "name": MISSING[0]})
        threads = []
        for t, frames in enumerate(self.threads):
            threads.append({"id": 100 + t, "triggered": t == 0, "frames": [
                {"imageOffset": addr - self.load_of(k), "imageIndex": k} for k, addr in frames]})
        body = {"uptime": 1000, "procName": "app_arm64",
                "lastExceptionBacktrace": threads[1]["frames"], "threads": threads,
                "usedImages": used, "legacyInfo": {"threadTriggered": {"queue": "main"}}}
        return json.dumps(header, separators=(",", ":")) + "\n" + json.dumps(body, indent=2) + "\n"


STRIP = re.compile(r',?"symbol":"(?:[^"\\]|\\.)*","symbolLocation":\d+'
                   r'(?:,"sourceFile":"(?:[^"\\]|\\.)*","sourceLine":\d+)?')


def check_ips(rep, inp, out):
    if STRIP.sub("", out) != inp:
        mt.die("ips: bytes other than the added members changed")
    body = json.loads(out.split("\n", 1)[1])
    n = 0
    for fl in [body["lastExceptionBacktrace"]] + [t["frames"] for t in body["threads"]]:
        for f in fl:
            k = f["imageIndex"]
            if k == 2:
                if "symbol" in f:
                    mt.die("ips: frame of a missing image was symbolicated")
                continue
            addr = rep.load_of(k) + f["imageOffset"]
            _t, fn, off, file, line = rep.images[k][5][addr]
            got = (f.get("symbol"), f.get("symbolLocation"), f.get("sourceFile"),
                   f.get("sourceLine"))
            want = (fn, off, file, line if file else None)
            if got != want:
                mt.die("ips frame 0x%x: want %r got %r" % (addr, want, got))
            n += 1
    return n


def bad_report(c, db, name, text, want):
    path = os.path.join(c.scratch, "bad-" + name)
    with open(path, "w") as f:
        f.write(text)
    p = c.sym(db, "symbolicate", path, check=False)
    if p.returncode == 0 or not re.search(want, p.stderr) or p.stdout:
        mt.die("malformed report %s: exit %d, stderr %r (want /%s/), stdout %d bytes" %
               (name, p.returncode, p.stderr, want, len(p.stdout)))


def run_case(c, arg):
    db = c.db("symbolicate")
    import shutil
    shutil.rmtree(db, ignore_errors=True)
    for name in IMAGES:
        c.sym(db, "build", os.path.join(c.fx, name + ".dSYM"))
    rep = Report(c, 7)
    # classic .crash
    path = os.path.join(c.scratch, "report.crash")
    with open(path, "w") as f:
        f.write(rep.crash_text())
    p = c.sym(db, "symbolicate", path)
    if p.stdout != rep.expected_crash():
        mt.compare(rep.expected_crash(), p.stdout, "crash report")
        mt.die("classic report differs")
    if MISSING[0] not in p.stderr or MISSING[1] not in p.stderr:
        mt.die("missing image not listed on stderr: %r" % p.stderr)
    # macOS 12+ text reports: "(version)" instead of the arch, dashed UUIDs.
    new_style = rep.crash_text()
    for _n, u, *_r in rep.images:
        new_style = new_style.replace(" arm64  <%s>" % u, " (1.0) <%s>" % dashed(u).upper())
    with open(path, "w") as f:
        f.write(new_style)
    p = c.sym(db, "symbolicate", path)
    want = rep.expected_crash()
    for _n, u, *_r in rep.images:
        want = want.replace(" arm64  <%s>" % u, " (1.0) <%s>" % dashed(u).upper())
    if p.stdout != want:
        mt.compare(want, p.stdout, "crash report (new style)")
        mt.die("classic report (macOS 12 style) differs")
    nframes = sum(1 for fr in rep.threads for k, _ in fr if k != 2)
    # JSON .ips
    ips = rep.ips()
    p = c.sym(db, "symbolicate", "-", inp=ips)
    nips = check_ips(rep, ips, p.stdout)
    # plain stack lines vs per-address atos queries
    lines, want = [], []
    for k, addr in [f for fr in rep.threads for f in fr]:
        if k == 2:
            lines.append("%s %s 0x%x 0x%x" % (MISSING[0], MISSING[1], MISSING[2], addr))
            want.append(lines[-1])
            continue
        name, u, load, _b, obj, _e = rep.images[k]
        lines.append("%s %s 0x%x 0x%x" % (name, u, load, addr))
        want.append(c.sym(db, "query", "--obj", obj, "--output-style=atos", "--addr-kind",
                          "runtime", "--load-address", "0x%x" % load,
                          "0x%x" % addr).stdout.rstrip("\n"))
    p = c.sym(db, "symbolicate", "--stack", inp="\n".join(lines) + "\n")
    if p.stdout != "\n".join(want) + "\n":
        mt.compare("\n".join(want) + "\n", p.stdout, "stack")
        mt.die("--stack differs from per-address queries")
    # malformed reports: clear error naming the line, nothing on stdout
    good = rep.crash_text()
    bad_report(c, db, "no_images", good[:good.index("Binary Images:")], "Binary Images")
    bad_report(c, db, "bad_hex", good.replace("       0x%x -" % rep.images[0][2],
                                              "       0xZZ12 -"), r"line \d+: bad load")
    bad_report(c, db, "bad_uuid", good.replace("<%s>" % rep.images[0][1], "<xyz>"),
               r"line \d+: bad UUID")
    bad_report(c, db, "truncated_json", ips[:len(ips) * 2 // 3], r"line \d+: unexpected end")
    bad_report(c, db, "json_no_images", ips.replace('"usedImages"', '"usedImagez"'),
               "usedImages")
    bad_report(c, db, "json_bad_base", ips.replace('"base": %d' % rep.images[0][2],
                                                   '"base": "0x%x"' % rep.images[0][2]),
               r"line \d+: usedImages entry without a valid base")
    print("symbolicate: %d .crash frames, %d .ips frames, %d stack lines identical; "
          "missing image untouched; 6 malformed reports refused" % (nframes, nips, len(lines)))
