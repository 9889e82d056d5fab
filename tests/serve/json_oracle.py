#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""json_oracle.py URL CASE...: POST /v1/symbolize (JSON) answers against
llvm-symbolizer-14 --output-style=JSON and `symdb query --output-style=JSON`
for the same addresses.

A CASE is KIND:ID:OBJ[:ARCH][:OPTIONS] with ':' replaced by '|':
  KIND     build_id, uuid or path (the module reference the server gets)
  ID       the image id as the oracle tools print it (readelf -n,
           llvm-dwarfdump --uuid), or '-' for a path module (OBJ is sent)
  OBJ      the file llvm-symbolizer-14 and symdb query read
  ARCH     '-' or a universal file's slice (llvm's OBJ:ARCH)
  OPTIONS  comma-separated: nodemangle, noinlines, short, none
  SAMPLE   addresses (seeded; see --seed)
Every address must give the frames llvm-symbolizer-14 prints (its "" and
"??" as null, its one empty frame as no frames) and exactly what symdb query
prints.  Environment: SYMDB (the CLI), SERVE_DB (the server's database).
Exit 0 when all agree, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "oracle"))
import dwcompare  # noqa: E402  (pick_addresses: uniform + hot-function skew)

FIELDS = [("FunctionName", "function"), ("FileName", "file"), ("Line", "line"),
          ("Column", "column"), ("Discriminator", "discriminator"),
          ("StartAddress", "start_address"), ("StartFileName", "start_file"),
          ("StartLine", "start_line")]


def llvm_flags(opts):
    f = []
    if "nodemangle" in opts:
        f.append("--no-demangle")
    if "noinlines" in opts:
        f.append("--no-inlines")
    if "short" in opts:
        f.append("--functions=short")
    if "none" in opts:
        f.append("--functions=none")
    return f


def request_options(opts):
    o = {}
    if "nodemangle" in opts:
        o["demangle"] = False
    if "noinlines" in opts:
        o["inlines"] = False
    if "short" in opts:
        o["functions"] = "short"
    if "none" in opts:
        o["functions"] = "none"
    return o


def oracle(cmd, addrs):
    inp = "".join("0x%x\n" % a for a in addrs)
    r = subprocess.run(cmd, input=inp, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr[:300]))
    out = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    if len(out) != len(addrs):
        raise SystemExit("%s: %d answers for %d addresses" % (cmd[0], len(out), len(addrs)))
    return [o.get("Symbol") or [] for o in out]


def normal_llvm(frames):
    """llvm's frames with "" / "??" as None; one all-unknown frame as none."""
    out = []
    for f in frames:
        g = {}
        for k, _ in FIELDS:
            v = f.get(k)
            g[k] = None if v in ("", "??") else v
        out.append(g)
    if len(out) == 1 and all(v in (None, 0) for v in out[0].values()):
        return []
    return out


def normal_server(frames):
    return [{k: (f[s] if f[s] not in ("", "??") else None) for k, s in FIELDS} for f in frames]


def post(url, body):
    req = urllib.request.Request(url + "/v1/symbolize", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        if resp.status != 200:
            raise SystemExit("HTTP %d" % resp.status)
        return json.load(resp)


def is_macho(obj, arch):
    return obj.endswith(".dSYM") or "/Contents/Resources/DWARF/" in obj or arch != "-"


def addresses(obj, arch, n, seed):
    """About n addresses of OBJ (ARCH '-' or a universal file's slice),
    sorted: for Mach-O evenly over __text and a few bytes either side, for
    ELF seeded over the executable sections with a hot-function skew."""
    if is_macho(obj, arch):
        import macho_test  # text_range via llvm-otool-14
        lo, size = macho_test.text_range(obj, None if arch == "-" else arch)
        step = max(1, size // n)
        return list(range(lo - 8, lo + size + 16, step))
    # a small binary has fewer distinct addresses than the sample:
    # then every one (pick_addresses would look for more forever)
    total = sum(size for _, size in dwcompare.exec_sections(obj))
    return dwcompare.pick_addresses(obj, n if n < total // 2 else 0, seed)


def module_ref(kind, ident, obj, arch):
    """How the request names the module: {kind: id} or {"path": OBJ}, + arch."""
    mod = {"path": obj} if kind == "path" else {kind: ident.replace("-", "").lower()}
    if arch != "-":
        mod["arch"] = arch
    return mod


def both_oracles(obj, arch, opts, addrs):
    """llvm-symbolizer-14's and symdb query's frames per address, normalised
    by normal_llvm.  symdb query reads SERVE_DB without building: run it
    after the server has indexed a path module."""
    target = obj if arch == "-" else obj + ":" + arch
    flags = llvm_flags(opts)
    want = oracle(["llvm-symbolizer-14", "--output-style=JSON", "--obj", target] + flags, addrs)
    query = oracle([os.environ["SYMDB"], "--db", os.environ["SERVE_DB"], "query", "--no-build",
                    "--output-style=JSON", "--obj", target] + flags, addrs)
    return [normal_llvm(f) for f in want], [normal_llvm(f) for f in query]


def run_case(url, case, sample, seed, show):
    kind, ident, obj, arch, opts, n = (case.split("|") + ["-", "", "0"])[:6]
    opts = [o for o in opts.split(",") if o]
    n = int(n) or sample
    # and the largest address: llvm-symbolizer answers it (the last
    # zero-size symbol), the library takes it as SYMDB_ADDR_INVALID
    addrs = addresses(obj, arch, n, seed) + [0xffffffffffffffff]
    mod = dict(module_ref(kind, ident, obj, arch), addresses=["0x%x" % a for a in addrs])
    body = {"modules": [mod]}
    if opts:
        body["options"] = request_options(opts)
    # the server first: a path module is indexed on first sight, and then
    # symdb query --no-build finds its index
    got = post(url, body)["modules"][0]
    want, query = both_oracles(obj, arch, opts, addrs)
    what = "%s %s %s%s" % (kind, os.path.basename(obj), arch if arch != "-" else "",
                           " " + ",".join(opts) if opts else "")
    if got["status"] != "ok":
        print("FAIL %s: module status %s (%s)" % (what, got["status"], got.get("error")))
        return 1
    bad = 0
    for i, a in enumerate(addrs):
        r = got["results"][i]
        s = normal_server(r["frames"])
        w, q = want[i], query[i]
        if r["address"] != "0x%x" % a or s != w or s != q:
            bad += 1
            if bad <= show:
                print("DIFF %s at 0x%x (%s):\n  llvm   %s\n  query  %s\n  server %s" %
                      (what, a, r["status"], w, q, s))
        elif r["symbol"] and r["symbol"]["offset"] != a - int(r["symbol"]["start"], 16):
            bad += 1
            print("DIFF %s at 0x%x: symbol offset %d, not the address - start" %
                  (what, a, r["symbol"]["offset"]))
        elif r["status"] == "ok" and not s and not r["symbol"]:
            bad += 1
            print("DIFF %s at 0x%x: status ok with nothing known" % (what, a))
    print("%s: %d addresses, %d differ, %d with frames" %
          (what, len(addrs), bad, sum(1 for r in got["results"] if r["frames"])))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--show", type=int, default=5)
    a = ap.parse_args()
    bad = sum(run_case(a.url, c, a.sample, a.seed, a.show) for c in a.cases)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
