#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""binary_oracle.py URL CASE...: POST /v1/symbolize as application/x-symdb-batch
(SPEC §16) answers what the JSON endpoint answers, what llvm-symbolizer-14
prints and what `symdb query` prints, for the same addresses.

A CASE is json_oracle.py's: KIND|ID|OBJ[|ARCH[|OPTIONS[|SAMPLE]]]:
  KIND     build_id, uuid or path (the module reference the server gets)
  ID       the image id as the oracle tools print it, or '-' for a path
  OBJ      the file llvm-symbolizer-14 and symdb query read
  ARCH     '-' or a universal file's slice (llvm's OBJ:ARCH, the request's arch)
  OPTIONS  comma-separated: nodemangle, noinlines, short, none
  SAMPLE   addresses (seeded; default --sample)
The addresses are json_oracle.addresses()', shuffled (the server must answer
in request order), with one before and one past the first executable range
and a duplicate.  Each case is sent three times: as JSON, as a binary
request (decoded by batch_client.py, an implementation of SPEC §16
independent of symdb's C codec), and as a binary request whose addresses
come again as one stack per 64 addresses with a module of an unknown
build-id in front.  The binary answer must equal the JSON one field by
field (statuses, image id, symbol, every frame), the stacks' results must
equal the addresses' ones, and the frames must be llvm-symbolizer-14's and
symdb query's, compared with json_oracle's helpers.  A second identical
binary request (the stacks now from the stack cache) must give the same
bytes.  Environment: SYMDB (the CLI), SERVE_DB (the server's database).
Exit 0 when all agree, 1 otherwise.
"""
import argparse
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "oracle"))
import batch_client  # noqa: E402
import dwcompare  # noqa: E402  (exec_sections)
import json_oracle as jo  # noqa: E402  (addresses, oracles, normalisation)

UNKNOWN = "00112233445566778899aabbccddeeff00112233"


def pick(obj, arch, n, seed):
    """json_oracle's addresses in a seeded order, plus addresses outside
    the code and a duplicate: duplicates must come back alike."""
    out = jo.addresses(obj, arch, n, seed)
    random.Random(seed).shuffle(out)
    if not jo.is_macho(obj, arch):
        lo, size = dwcompare.exec_sections(obj)[0]
        out += [lo - 1, lo + size + 64]
    return out + [out[0]]


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
    kind, ident, obj, arch, opts, n = (case.split("|") + ["-", "", "0"])[:6]
    opts = [o for o in opts.split(",") if o]
    addrs = pick(obj, arch, int(n) or sample, seed)
    jopts = jo.request_options(opts)
    mod = dict(jo.module_ref(kind, ident, obj, arch), addresses=addrs)
    what = "%s %s %s%s" % (kind, os.path.basename(obj), arch if arch != "-" else "",
                           " " + ",".join(opts) if opts else "")
    bopts = dict(demangle=jopts.get("demangle", True), inlines=jopts.get("inlines", True),
                 functions=jopts.get("functions", "linkage"))
    # binary first: a path module is indexed on first sight by whichever comes first
    raw = post_binary(url, batch_client.encode_request([mod], **bopts))
    got = batch_client.decode_response(raw)["modules"][0]
    jmod = dict(mod, addresses=["0x%x" % a for a in addrs])
    js = strip_json(jo.post(url, {"modules": [jmod], "options": jopts} if jopts
                            else {"modules": [jmod]})["modules"][0])
    want, query = jo.both_oracles(obj, arch, opts, addrs)
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
        b = jo.normal_server(got["results"][i]["frames"])
        if b != want[i] or b != query[i]:
            bad += 1
            if bad <= show:
                print("DIFF %s at 0x%x (%s):\n  llvm   %s\n  query  %s\n  binary %s" %
                      (what, a, got["results"][i]["status"], want[i], query[i], b))
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
