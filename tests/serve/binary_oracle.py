#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""binary_oracle.py URL CASE...: POST /v1/symbolize as application/x-symdb-batch
(SPEC §16) answers what the JSON endpoint answers and what llvm-symbolizer-14
prints, for the same addresses.

A CASE is KIND|ID|OBJ[|OPTIONS[|SAMPLE]]:
  KIND     build_id or path (the module reference the server gets)
  ID       the build-id as llvm-readelf-14 -n prints it, or '-' for a path
  OBJ      the file llvm-symbolizer-14 reads
  OPTIONS  comma-separated: nodemangle, noinlines, short, none
  SAMPLE   addresses (seeded; default --sample)
Each case is sent three times: as JSON, as a binary request (decoded by
batch_client.py, an implementation of SPEC §16 independent of symdb's C
codec), and as a binary request whose addresses come again as one stack
per 64 addresses with a module of an unknown build-id in front.  The binary
answer must equal the JSON one field by field (statuses, image id, symbol,
every frame), the stacks' results must equal the addresses' ones, and the
frames must be llvm-symbolizer-14's (its "" and "??" as null, its one
empty frame as no frames).  A second identical binary request (the stacks
now from the stack cache) must give the same bytes.
Exit 0 when all agree, 1 otherwise.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "oracle"))
import batch_client  # noqa: E402
import dwcompare  # noqa: E402  (exec_sections)

FIELDS = [("FunctionName", "function"), ("FileName", "file"), ("Line", "line"),
          ("Column", "column"), ("Discriminator", "discriminator"),
          ("StartAddress", "start_address"), ("StartFileName", "start_file"),
          ("StartLine", "start_line")]
UNKNOWN = "00112233445566778899aabbccddeeff00112233"


def pick(obj, n, seed):
    """n addresses, seeded, uniform over the executable sections (a few
    before and after them too), in no particular order: the server must
    answer in request order, and duplicates must come back alike."""
    rng = random.Random(seed)
    secs = dwcompare.exec_sections(obj)
    total = sum(size for _, size in secs)
    out = []
    for _ in range(n):
        k = rng.randrange(total)
        for lo, size in secs:
            if k < size:
                out.append(lo + k)
                break
            k -= size
    lo, size = secs[0]
    return out + [lo - 1, lo + size + 64, out[0]]


def options(opts):
    llvm, js = [], {}
    for o, flag, key, val in (("nodemangle", "--no-demangle", "demangle", False),
                              ("noinlines", "--no-inlines", "inlines", False),
                              ("short", "--functions=short", "functions", "short"),
                              ("none", "--functions=none", "functions", "none")):
        if o in opts:
            llvm.append(flag)
            js[key] = val
    return llvm, js


def llvm_frames(obj, flags, addrs):
    inp = "".join("0x%x\n" % a for a in addrs)
    r = subprocess.run(["llvm-symbolizer-14", "--output-style=JSON", "--obj", obj] + flags,
                       input=inp, capture_output=True, text=True)
    out = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    if len(out) != len(addrs):
        raise SystemExit("llvm-symbolizer-14: %d answers for %d addresses" % (len(out), len(addrs)))
    res = []
    for o in out:
        frames = [{k: (None if f.get(k) in ("", "??") else f.get(k)) for k, _ in FIELDS}
                  for f in o.get("Symbol") or []]
        if len(frames) == 1 and all(v in (None, 0) for v in frames[0].values()):
            frames = []
        res.append(frames)
    return res


def normal(frames):
    """The server's frames as llvm_frames() gives llvm's."""
    out = [{k: (f[s] if f[s] not in ("", "??") else None) for k, s in FIELDS} for f in frames]
    if len(out) == 1 and all(v in (None, 0) for v in out[0].values()):
        return []
    return out


def post_json(url, body):
    rq = urllib.request.Request(url + "/v1/symbolize", data=json.dumps(body).encode(),
                                headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(rq, timeout=600) as r:
        return json.load(r)


def post_binary(url, body):
    status, ctype, data = batch_client.post(url + "/v1/symbolize", body, timeout=600)
    if status != 200 or ctype != batch_client.CONTENT_TYPE:
        raise SystemExit("binary: HTTP %d %s: %s" % (status, ctype, data[:300]))
    return data


def strip_json(mod):
    """The JSON module without what the caller sent (its id, the addresses)."""
    out = {k: v for k, v in mod.items() if k not in ("build_id", "uuid", "path", "results")}
    out["results"] = [{k: v for k, v in r.items() if k != "address"} for r in mod["results"]]
    return out


def run_case(url, case, sample, seed, show):
    kind, ident, obj, opts, n = (case.split("|") + ["", "0"])[:5]
    opts = [o for o in opts.split(",") if o]
    addrs = pick(obj, int(n) or sample, seed)
    flags, jopts = options(opts)
    mod = {"addresses": addrs}
    mod.update({"path": obj} if kind == "path" else {"build_id": ident})
    what = "%s %s%s" % (kind, os.path.basename(obj), " " + ",".join(opts) if opts else "")
    bopts = dict(demangle=jopts.get("demangle", True), inlines=jopts.get("inlines", True),
                 functions=jopts.get("functions", "linkage"))
    # binary first: a path module is indexed on first sight by whichever comes first
    raw = post_binary(url, batch_client.encode_request([mod], **bopts))
    got = batch_client.decode_response(raw)["modules"][0]
    jmod = dict(mod, addresses=["0x%x" % a for a in addrs])
    js = strip_json(post_json(url, {"modules": [jmod], "options": jopts} if jopts
                              else {"modules": [jmod]})["modules"][0])
    want = llvm_frames(obj, flags, addrs)
    bad = 0
    if got != js:
        bad += 1
        for i, (b, j) in enumerate(zip(got["results"], js["results"])):
            if b != j:
                print("DIFF %s at 0x%x: binary and JSON differ:\n  binary %s\n  json   %s" %
                      (what, addrs[i], b, j))
                break
        else:
            print("DIFF %s: binary module %s, JSON %s" %
                  ({k: v for k, v in got.items() if k != "results"},
                   {k: v for k, v in js.items() if k != "results"}, what))
    if got["status"] != "ok":
        print("FAIL %s: module status %s (%s)" % (what, got["status"], got.get("error")))
        return 1
    for i, a in enumerate(addrs):
        if normal(got["results"][i]["frames"]) != want[i]:
            bad += 1
            if bad <= show:
                print("DIFF %s at 0x%x: binary %s\n  llvm %s" %
                      (what, a, normal(got["results"][i]["frames"]), want[i]))
    # the same addresses as stacks of 64 frames, behind an unknown module
    stacks = [[(1, a) for a in addrs[k:k + 64]] for k in range(0, len(addrs), 64)]
    body = batch_client.encode_request([{"build_id": UNKNOWN, "addresses": [0x1000]},
                                        dict(mod, addresses=[])], stacks, **bopts)
    raw1 = post_binary(url, body)
    raw2 = post_binary(url, body)
    two = batch_client.decode_response(raw1)
    if [m["status"] for m in two["modules"]] != ["unknown_image", "ok"] or \
            two["modules"][0]["results"][0]["status"] != "unknown_image":
        bad += 1
        print("DIFF %s: unknown module answered %s" % (what, two["modules"][0]))
    flat = [r for s in two["stacks"] for r in s]
    if flat != got["results"]:
        bad += 1
        print("DIFF %s: stack results differ from the addresses' results" % what)
    if raw1 != raw2:
        bad += 1
        print("DIFF %s: the same request (stacks from the cache) gave other bytes" % what)
    print("%s: %d addresses, %d stacks, %d differ, %d with frames; %d binary bytes, %d JSON-equal" %
          (what, len(addrs), len(stacks), bad,
           sum(1 for r in got["results"] if r["frames"]), len(raw), got == js))
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
