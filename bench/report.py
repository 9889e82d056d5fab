#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# report.py: renders bench/run.sh's raw measurements (one "type key=value ..."
# line each) as the Markdown of RESULTS.md: the machine, the issue's targets
# (met or missed, by how much), then every figure as a ratio to the peers
# measured in the same run.  Only arithmetic on the raw numbers happens here.
import argparse
import shlex
import sys


def parse(path):
    recs = []
    with open(path) as f:
        for line in f:
            toks = shlex.split(line)
            if not toks:
                continue
            r = {"type": toks[0]}
            for t in toks[1:]:
                if "=" in t:
                    k, v = t.split("=", 1)
                    r.setdefault(k, v)
            recs.append(r)
    return recs


def pick(recs, typ, **kw):
    for r in recs:
        if r["type"] == typ and all(r.get(k) == str(v) for k, v in kw.items()):
            return r
    return None


def f(r, key):
    try:
        return float(r[key]) if r else None
    except (KeyError, ValueError):
        return None


def fmt(x, unit="", nd=2):
    if x is None:
        return "n/a"
    if abs(x) >= 1e6 and unit in ("", "/s"):
        return f"{x / 1e6:.{nd}f} M{unit}"
    return f"{x:.{nd}f}{unit}"


def cpu_ns(r):
    """CPU nanoseconds per address of a timed loop record."""
    c, n = f(r, "cpu_median_s"), f(r, "n")
    return c * 1e9 / n if c is not None and n else None


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def verdict(ok):
    return "n/a" if ok is None else ("**met**" if ok else "**missed**")


class Report:
    def __init__(self, recs, command):
        self.r = recs
        self.cmd = command
        self.out = []
        m = {}
        for rec in recs:
            if rec["type"] == "machine":
                m.update(rec)
        self.m = m
        self.bins = []
        for rec in recs:
            if rec["type"] == "size" and rec["bin"] not in self.bins:
                self.bins.append(rec["bin"])
        sizes = sorted({int(r["n"]) for r in recs if r["type"] == "lib"})
        self.mid, self.big = (sizes[0], sizes[-1]) if sizes else (0, 0)
        e2e = sorted({int(r["n"]) for r in recs if r["type"] == "e2e"})
        self.small = e2e[0] if e2e else 0

    def p(self, s=""):
        self.out.append(s)

    def lib(self, b, kind, order, n):
        return pick(self.r, "lib", bin=b, kind=kind, order=order, n=n)

    def floor(self, n):
        return pick(self.r, "floor", n=n)

    def llvm_1m(self, b, kind):
        """llvm-symbolizer-14 seconds for BIG addresses, extrapolated linearly
        from SMALL and MID runs (startup = the SMALL run's intercept)."""
        out = {}
        for key in ("wall_median_s", "cpu_median_s"):
            s = f(pick(self.r, "e2e", bin=b, kind=kind, n=self.small, tool="llvm-symbolizer"), key)
            mid = f(pick(self.r, "e2e", bin=b, kind=kind, n=self.mid, tool="llvm-symbolizer"), key)
            if s is None or mid is None:
                out[key] = None
                continue
            per = (mid - s) / (self.mid - self.small)
            # A negative slope is noise swamping a tiny per-address cost.
            out[key] = s + per * (self.big - self.small) if per > 0 else None
        return out

    def header(self):
        m = self.m
        self.p("# symdb benchmark results")
        self.p()
        self.p(f"Produced by `{self.cmd}` (method: [README.md](README.md)); every raw number is in "
               "[results-raw.txt](results-raw.txt), the run's `WORK/raw.txt`.")
        self.p()
        self.p(f"- date: {m.get('date')}, commit `{m.get('commit')}`, quick={m.get('quick')}, "
               f"{m.get('runs')} timed runs per figure (medians)")
        self.p(f"- machine: `nproc` = {m.get('nproc')}, {m.get('model')}, "
               f"{int(m.get('mem_kB', 0)) // 1024} MiB RAM")
        self.p(f"- tools: {m.get('versions')}")
        self.p(f"- load average at start {m.get('loadavg_start')}, at end {m.get('loadavg_end')} "
               "(the machine is shared: wall times are noisy, CPU times and callgrind "
               "instruction counts less so)")
        self.p()

    def targets(self):
        b = "libpython"
        big, mid = self.big, self.mid
        lib = self.lib(b, "profile", "sorted", big)
        gs = pick(self.r, "gsymloop", bin=b, kind="profile", order="sorted", n=big) or \
            pick(self.r, "gsymloop", bin=b, kind="profile", order="sorted", n=mid)
        fl = self.floor(big)
        cg_s = f(pick(self.r, "callgrind", bin=b, kind="profile", tool="symdb"), "ir")
        cg_g = f(pick(self.r, "callgrind", bin=b, kind="profile", tool="gsym"), "ir")
        cg_f = f(pick(self.r, "callgrind", tool="floor"), "ir")
        self.p("## Targets (issue 5)")
        self.p()
        self.p("| target | measured | verdict |")
        self.p("|---|---|---|")
        r1 = ratio(cpu_ns(gs), cpu_ns(lib))
        r1w = ratio(f(gs, "ns_per_addr"), f(lib, "ns_per_addr"))
        r1c = ratio(cg_g, cg_s)
        self.p(f"| library batch ≥ 10× in-process GSYM (libpython, {big} sorted profile-like; "
               f"GSYM on {gs.get('n') if gs else 'n/a'}) "
               f"| {fmt(r1)}× CPU ({fmt(cpu_ns(lib))} vs {fmt(cpu_ns(gs))} ns/addr), "
               f"{fmt(r1w)}× wall ({fmt(f(lib, 'ns_per_addr'))} vs {fmt(f(gs, 'ns_per_addr'))}); "
               f"{fmt(r1c)}× in instructions (callgrind, {mid}) | {verdict(r1 and r1 >= 10)} |")
        r2 = ratio(cpu_ns(lib), cpu_ns(fl))
        r2w = ratio(f(lib, "ns_per_addr"), f(fl, "ns_per_addr"))
        r2c = ratio(cg_s, cg_f)
        self.p(f"| library batch within 3× of the floor | {fmt(r2)}× the floor in CPU "
               f"({fmt(cpu_ns(fl))} ns/addr), {fmt(r2w)}× wall; {fmt(r2c)}× in instructions "
               f"| {verdict(r2 and r2 <= 3)}"
               f"{'' if not r2 else f' (by {r2 / 3:.1f}×)' if r2 > 3 else ''} |")
        q = pick(self.r, "e2e", bin=b, kind="profile", n=big, tool="symdb")
        l1m = self.llvm_1m(b, "profile")
        r3 = ratio(l1m["wall_median_s"], f(q, "wall_median_s"))
        r3c = ratio(l1m["cpu_median_s"], f(q, "cpu_median_s"))
        same = [x for x in self.r if x["type"] == "identical"]
        allsame = all(x["same"] == "1" for x in same) if same else None
        self.p(f"| `symdb query` ≥ 50× `llvm-symbolizer-14` on {big} addresses, identical output "
               f"| {fmt(r3)}× wall, {fmt(r3c)}× CPU (llvm-symbolizer extrapolated from "
               f"{self.small} and {mid}); output identical in {sum(x['same'] == '1' for x in same)}"
               f"/{len(same)} comparisons | {verdict(r3 and r3 >= 50 and allsame)} |")
        sb = pick(self.r, "build", bin=b, tool="symdb")
        g_mt = pick(self.r, "build", bin=b, tool="gsymutil", threads="default")
        g_1 = pick(self.r, "build", bin=b, tool="gsymutil", threads="1")
        tw = f(sb, "wall_median_s")
        self.p(f"| `symdb build` wall ≤ `llvm-gsymutil-14 --convert` | {fmt(tw)} s vs "
               f"{fmt(f(g_mt, 'wall_median_s'))} s (default threads), {fmt(f(g_1, 'wall_median_s'))} s "
               f"(1 thread) | {verdict(tw is not None and tw <= f(g_mt, 'wall_median_s'))} vs default, "
               f"{verdict(tw is not None and tw <= f(g_1, 'wall_median_s'))} vs 1 thread |")
        rs = f(sb, "maxrss_kB")
        self.p(f"| `symdb build` peak RSS ≤ gsymutil's | {fmt(rs / 1024 if rs else None, ' MiB', 1)} vs "
               f"{fmt(f(g_mt, 'maxrss_kB') / 1024 if g_mt else None, ' MiB', 1)} "
               f"| {verdict(rs is not None and rs <= f(g_mt, 'maxrss_kB'))} |")
        sz = pick(self.r, "size", bin=b)
        si, sg = f(sz, "symdb_bytes"), f(sz, "gsym_bytes")
        rr = ratio(si, sg)
        self.p(f"| index size ≤ `.gsym` size | {fmt(si / 1e6 if si else None, ' MB')} vs "
               f"{fmt(sg / 1e6 if sg else None, ' MB')} ({fmt(rr)}×) "
               f"| {verdict(rr is not None and rr <= 1)} |")
        fr = pick(self.r, "first", bin=b, open="uuid")
        fb = pick(self.r, "first", bin=b, open="binary")
        self.p(f"| first address < 1 ms after opening the database | by UUID {fmt(f(fr, 'median_ms'), ' ms', 3)} "
               f"median (max {fmt(f(fr, 'max_ms'), ' ms', 3)}), by binary path "
               f"{fmt(f(fb, 'median_ms'), ' ms', 3)} | "
               f"{verdict(f(fr, 'max_ms') is not None and f(fr, 'max_ms') < 1)} |")
        m1 = pick(self.r, "mt", bin=b, threads=1)
        m2 = pick(self.r, "mt", bin=b, threads=2)
        sc = ratio(f(m2, "aggregate_addr_per_s"), f(m1, "aggregate_addr_per_s"))
        cpu_sc = ratio(f(m1, "thread_cpu_median_s"), f(m2, "thread_cpu_median_s"))
        self.p(f"| 2 threads ≈ 2× the addresses/s of 1 | {fmt(sc)}× wall; per-thread CPU time per "
               f"pass {fmt(f(m1, 'thread_cpu_median_s'), ' s', 3)} (1 thread) vs "
               f"{fmt(f(m2, 'thread_cpu_median_s'), ' s', 3)} (2 threads), i.e. {fmt(2 * cpu_sc if cpu_sc else None)}× "
               f"if both threads had a core | {verdict(sc and sc >= 1.8)} wall"
               f"{'' if not cpu_sc else ', ' + ('met' if cpu_sc >= 0.9 else 'missed') + ' per CPU'} |")
        self.p()

    def lib_table(self):
        self.p("## Library loop: symdb_resolve_batch vs in-process GSYM vs floor")
        self.p()
        self.p("ns per address: CPU time of the timing thread, median (wall-clock median in "
               "parentheses; on a busy shared machine wall time includes waiting for a core). "
               "Unsorted rows include symdb's radix sort of the batch (its share of the time shown). "
               f"GSYM is timed on {self.mid} addresses (its per-address cost does not depend on "
               "the batch size); ratios compare CPU times.")
        self.p()
        fl = {n: self.floor(n) for n in (self.mid, self.big)}
        self.p(f"Floor (read an address, write one result record): {fmt(cpu_ns(fl[self.mid]))} "
               f"({fmt(f(fl[self.mid], 'ns_per_addr'))}) ns/addr at {self.mid}, "
               f"{fmt(cpu_ns(fl[self.big]))} ({fmt(f(fl[self.big], 'ns_per_addr'))}) ns/addr at {self.big}.")
        self.p()
        self.p(f"| binary | set | order | frames/addr | symdb {self.mid} | symdb {self.big} | sort share | "
               f"GSYM {self.mid} | GSYM ÷ symdb ({self.mid}) | symdb ÷ floor ({self.big}) |")
        self.p("|---|---|---|---|---|---|---|---|---|---|")

        def cw(r):
            return f"{fmt(cpu_ns(r))} ({fmt(f(r, 'ns_per_addr'))})"
        for b in self.bins:
            for kind in ("profile", "uniform", "starts"):
                for order in ("sorted", "unsorted"):
                    lm, lb = self.lib(b, kind, order, self.mid), self.lib(b, kind, order, self.big)
                    g = pick(self.r, "gsymloop", bin=b, kind=kind, order=order, n=self.mid)
                    share = ratio(f(lb, "sort_median_s"), f(lb, "median_s"))
                    self.p(f"| {b} | {kind} | {order} | {fmt(f(lb, 'frames_per_addr'))} | {cw(lm)} | "
                           f"{cw(lb)} | {'—' if order == 'sorted' else fmt(share * 100 if share else None, '%', 0)} | "
                           f"{cw(g)} | {fmt(ratio(cpu_ns(g), cpu_ns(lm)))}× | "
                           f"{fmt(ratio(cpu_ns(lb), cpu_ns(fl[self.big])))}× |")
        g1 = pick(self.r, "gsymloop", bin="libpython", kind="profile", order="sorted", n=self.big)
        if g1:
            self.p()
            self.p(f"GSYM on the full {self.big} sorted profile-like libpython set: "
                   f"{fmt(cpu_ns(g1))} ({fmt(f(g1, 'ns_per_addr'))}) ns/addr ({g1.get('runs')} runs).")
        self.p()
        self.p("### callgrind: instructions per address (Ir, the measured loop only)")
        self.p()
        self.p("| binary | set | n | symdb | GSYM | GSYM ÷ symdb | symdb ÷ floor |")
        self.p("|---|---|---|---|---|---|---|")
        cf = pick(self.r, "callgrind", tool="floor")
        fpa = ratio(f(cf, "ir"), f(cf, "n"))
        for b in self.bins:
            for kind in ("profile", "uniform"):
                s = pick(self.r, "callgrind", bin=b, kind=kind, tool="symdb")
                g = pick(self.r, "callgrind", bin=b, kind=kind, tool="gsym")
                sp, gp = ratio(f(s, "ir"), f(s, "n")), ratio(f(g, "ir"), f(g, "n"))
                self.p(f"| {b} | {kind} | {s.get('n') if s else 'n/a'} | {fmt(sp, '', 0)} | {fmt(gp, '', 0)} | "
                       f"{fmt(ratio(gp, sp), '', 1)}× | {fmt(ratio(sp, fpa), '', 1)}× |")
        self.p(f"| any | floor | {cf.get('n') if cf else 'n/a'} | {fmt(fpa, '', 1)} | | | |")
        self.p()

    def e2e_table(self):
        self.p("## End to end: `symdb query` vs `llvm-symbolizer-14` vs `addr2line -i -f -e`")
        self.p()
        self.p("Unsorted addresses on stdin, LLVM output style, output to a file. Wall seconds "
               "(user+sys CPU seconds). llvm-symbolizer-14 and addr2line run on "
               f"{self.small} (median of 3) and {self.mid} (once) addresses; their {self.big} figure is extrapolated "
               f"linearly (t({self.small}) + slope × ({self.big} − {self.small})), which keeps "
               "their start-up cost once. symdb is measured on all sizes.")
        self.p()
        self.p(f"| binary | set | symdb {self.mid} | llvm {self.mid} | addr2line {self.mid} | "
               f"symdb {self.big} | llvm {self.big} (extrap.) | llvm ÷ symdb at {self.big} (wall / CPU) | "
               f"identical output ({self.small} / {self.mid}) |")
        self.p("|---|---|---|---|---|---|---|---|---|")
        for b in self.bins:
            for kind in ("profile", "uniform", "starts"):
                def e(tool, n):
                    return pick(self.r, "e2e", bin=b, kind=kind, n=n, tool=tool)

                def wc(r):
                    return f"{fmt(f(r, 'wall_median_s'), '', 3)} ({fmt(f(r, 'cpu_median_s'), '', 3)})"
                l1m = self.llvm_1m(b, kind)
                q = e("symdb", self.big)
                same = [pick(self.r, "identical", bin=b, kind=kind, n=n, style="LLVM") for n in (self.small, self.mid)]
                self.p(f"| {b} | {kind} | {wc(e('symdb', self.mid))} | {wc(e('llvm-symbolizer', self.mid))} | "
                       f"{wc(e('addr2line', self.mid))} | {wc(q)} | {fmt(l1m['wall_median_s'], '', 1)} "
                       f"({fmt(l1m['cpu_median_s'], '', 1)}) | "
                       f"{fmt(ratio(l1m['wall_median_s'], f(q, 'wall_median_s')), '', 1)}× / "
                       f"{fmt(ratio(l1m['cpu_median_s'], f(q, 'cpu_median_s')), '', 1)}× | "
                       + " / ".join("n/a" if s is None else ("yes" if s["same"] == "1" else "**NO**") for s in same) + " |")
        others = [x for x in self.r if x["type"] == "identical" and x["style"] != "LLVM"]
        if others:
            self.p()
            self.p("Other output styles (profile set, " + str(self.small) + " addresses): " + ", ".join(
                f"{x['bin']} {x['style']} {'identical' if x['same'] == '1' else '**differs**'}" for x in others) + ".")
        bad = [x for x in self.r if x["type"] == "mismatch"]
        if bad:
            self.p()
            self.p("Where symdb's output differs from llvm-symbolizer-14's (first differing line of each "
                   "comparison; the count is of llvm-symbolizer lines that differ):")
            self.p()
            self.p("| binary | set | n | style | lines differing | first at line | llvm-symbolizer-14 | symdb |")
            self.p("|---|---|---|---|---|---|---|---|")

            def cell(t):
                return "`" + t.replace("|", "\\|").replace("`", "'")[:160] + "`"
            for x in bad:
                self.p(f"| {x['bin']} | {x['kind']} | {x['n']} | {x['style']} | {x.get('differing_lines')} | "
                       f"{x.get('line')} | {cell(x.get('llvm', ''))} | {cell(x.get('symdb', ''))} |")
        self.p()

    def build_table(self):
        self.p("## Build: `symdb build` vs `llvm-gsymutil-14 --convert`; sizes")
        self.p()
        self.p("Wall seconds (CPU seconds), peak RSS from `/usr/bin/time`, fresh output each run. "
               "llvm-gsymutil-14 reads the file holding the DWARF (for libc, libc6-dbg's "
               "`.debug` file: gsymutil does not look up build-ids). DWARF bytes = sum of "
               "`.debug_*` section sizes, inflated (as stored on disk in parentheses).")
        self.p()
        self.p("| binary | symdb build | gsymutil (default threads) | gsymutil (1 thread) | "
               "symdb peak RSS | gsymutil peak RSS (default / 1) | index bytes | .gsym bytes (1 thread / default) | "
               "DWARF bytes | index ÷ .gsym | index ÷ DWARF |")
        self.p("|---|---|---|---|---|---|---|---|---|---|---|")
        for b in self.bins:
            sb = pick(self.r, "build", bin=b, tool="symdb")
            gm = pick(self.r, "build", bin=b, tool="gsymutil", threads="default")
            g1 = pick(self.r, "build", bin=b, tool="gsymutil", threads="1")
            sz = pick(self.r, "size", bin=b)

            def wc(r):
                return f"{fmt(f(r, 'wall_median_s'))} s ({fmt(f(r, 'cpu_median_s'))})"

            def mib(r):
                v = f(r, "maxrss_kB")
                return fmt(v / 1024 if v else None, "", 0)
            self.p(f"| {b} | {wc(sb)} | {wc(gm)} | {wc(g1)} | {mib(sb)} MiB | {mib(gm)} / {mib(g1)} MiB | "
                   f"{sz and sz['symdb_bytes']} | {sz and sz['gsym_bytes']} / {sz and sz['gsym_mt_bytes']} | "
                   f"{sz and sz['dwarf_bytes']} ({sz and sz['dwarf_stored_bytes']}) | "
                   f"{fmt(ratio(f(sz, 'symdb_bytes'), f(sz, 'gsym_bytes')))}× | "
                   f"{fmt(ratio(f(sz, 'symdb_bytes'), f(sz, 'dwarf_bytes')))}× |")
        self.p()

    def open_rss_table(self):
        self.p("## Open latency, reader memory, threads")
        self.p()
        self.p("Time from `symdb_open()` to the first resolved address, database and image opened "
               "afresh each run (index file in the page cache), 21 runs: by UUID, and by binary path "
               "(the UUID read from the ELF file first).")
        self.p()
        self.p("| binary | by UUID: median / max (first run) ms | by path: median / max ms |")
        self.p("|---|---|---|")
        for b in self.bins:
            u = pick(self.r, "first", bin=b, open="uuid")
            p = pick(self.r, "first", bin=b, open="binary")
            self.p(f"| {b} | {fmt(f(u, 'median_ms'), '', 3)} / {fmt(f(u, 'max_ms'), '', 3)} "
                   f"({fmt(f(u, 'first_run_ms'), '', 3)}) | {fmt(f(p, 'median_ms'), '', 3)} / "
                   f"{fmt(f(p, 'max_ms'), '', 3)} |")
        self.p()
        self.p(f"Reader RSS around one batch of {self.big} sorted addresses (kB from /proc/self/status; "
               "the caller's buffers — addresses, sort scratch, results, a 2^18-frame buffer — are "
               "allocated and touched before the baseline, so the growth is the reader's: the mapped "
               "index pages it touched plus the catalog).")
        self.p()
        self.p("| binary | set | caller buffers | VmRSS before open | after open | after batch | "
               "growth (file-backed) | VmHWM |")
        self.p("|---|---|---|---|---|---|---|---|")
        for b in self.bins:
            for kind in ("profile", "uniform"):
                recs = [x for x in self.r if x["type"] == "rss" and x.get("bin") == b and x.get("kind") == kind]
                w = {x.get("when"): x for x in recs if "when" in x}
                cb = next((x for x in recs if "caller_buffers_kB" in x), None)
                b0, b1, b2 = w.get("before_open"), w.get("after_open"), w.get("after_batch")
                grow = None if not (b0 and b2) else f(b2, "VmRSS_kB") - f(b0, "VmRSS_kB")
                growf = None if not (b0 and b2) else f(b2, "RssFile_kB") - f(b0, "RssFile_kB")
                self.p(f"| {b} | {kind} | {cb and cb['caller_buffers_kB']} | {b0 and b0['VmRSS_kB']} | "
                       f"{b1 and b1['VmRSS_kB']} | {b2 and b2['VmRSS_kB']} | {fmt(grow, '', 0)} ({fmt(growf, '', 0)}) | "
                       f"{b2 and b2['VmHWM_kB']} |")
        self.p()
        self.p("Threads (libpython, 1M sorted profile-like, one shared image, each thread resolves "
               "the whole set):")
        self.p()
        self.p("| threads | wall median s | aggregate addresses/s | per-thread CPU s per pass |")
        self.p("|---|---|---|---|")
        for x in self.r:
            if x["type"] == "mt":
                self.p(f"| {x['threads']} | {x['median_s']} | {fmt(f(x, 'aggregate_addr_per_s'))} | "
                       f"{x.get('thread_cpu_median_s')} |")
        self.p()

    def render(self):
        self.header()
        self.targets()
        self.lib_table()
        self.e2e_table()
        self.build_table()
        self.open_rss_table()
        return "\n".join(self.out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="render bench/run.sh raw.txt as Markdown")
    ap.add_argument("raw")
    ap.add_argument("--command", default="bench/run.sh")
    ap.add_argument("--notes", help="Markdown appended after the figures (the analysis)")
    a = ap.parse_args()
    sys.stdout.write(Report(parse(a.raw), a.command).render())
    if a.notes:
        with open(a.notes) as nf:
            sys.stdout.write("\n" + nf.read())


if __name__ == "__main__":
    main()
