#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# stack_dups.sh: equal stacks within ONE request are resolved once, in both
# front ends (JSON and application/x-symdb-batch).  The server runs with
# --cache-size 0, so only the within-request dedupe can spare anything.
# A stack of 8 addresses of a DWARF fixture is sent once, then 5 times in
# one request (the copies alternate between two modules naming the same
# build-id, which are the same image), in JSON and in binary.  Checks:
#   - every frame of every stack is llvm-symbolizer-14's (--output-style=
#     JSON: function, file, line of each inline frame) for its address;
#   - each copy's answer equals the answer of the request with the stack
#     once (JSON: the parsed objects; binary: the decoded results);
#   - /metrics symdb_serve_stack_frames_total: the 5-copy request resolved
#     8 frames and answered 32 from an earlier stack, none from the cache
#     (--cache-size 0), in each format.  Before the binary front end used
#     the dedupe, its request resolved all 40 frames and this failed;
#   - then with the default cache, where the stack sent alone is kept: the
#     5 copies are answered 8 frames from the cache and 32 from that hit
#     (copies of a cached stack), the answers unchanged;
#   - with --deadline-ms 1, a request of 300 different stacks (60,000
#     frames, more than one resolver chunk) passes its deadline: each frame
#     is counted by what answered it, "resolved" for a frame with a
#     resolved status and "deadline" for one answered "deadline", never both
#     (before, every frame handed over was counted resolved, answered or not).
source "$(dirname "$0")/lib.sh"

exe=$FIXTURES/full/cpp_g++_O2_pie
[[ -f $exe ]] || fail "no fixture $exe"
SERVE_DB=$SCRATCH/db
run "$SYMDB" --db "$SERVE_DB" build -q "$exe"
((RC == 0)) || fail "symdb build $exe: exit $RC"
bid=$(readelf -n "$exe" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[[ -n $bid ]] || fail "$exe: no build-id"

# Addresses: inside each sized function of the fixture (start + size/3).
llvm-nm-14 --defined-only -S "$exe" | python3 -c '
import sys
a = []
for f in map(str.split, sys.stdin):
    if len(f) == 4 and f[2] in "Tt" and int(f[1], 16):
        a.append(hex(int(f[0], 16) + int(f[1], 16) // 3))
print("\n".join(a[:8]))' >"$SCRATCH/addrs.txt"
(($(wc -l <"$SCRATCH/addrs.txt") == 8)) || fail "$exe: fewer than 8 sized functions"
llvm-symbolizer-14 --obj "$exe" --output-style=JSON <"$SCRATCH/addrs.txt" >"$SCRATCH/llvm.json"

# check CACHED: the requests and checks above; CACHED 1 when the server
# has a cache (the stack sent alone is then a hit for the copies)
check() {
HERE=$(dirname "$0") serve_py "$SERVE_URL" "$bid" "$SCRATCH/addrs.txt" "$SCRATCH/llvm.json" "$1" <<'PY' ||
import json, os, sys, urllib.request
sys.path.insert(0, os.environ["HERE"])
import batch_client

url, bid = sys.argv[2], sys.argv[3]
addrs = open(sys.argv[4]).read().split()
llvm = {}
for line, a in zip(open(sys.argv[5]), addrs):
    chain = [(s["FunctionName"] or None, s["FileName"] or None, s["Line"])
             for s in json.loads(line)["Symbol"]]
    llvm[int(a, 16)] = [c for c in chain if c != (None, None, 0)]
COPIES = 5
cached = sys.argv[6] == "1"
bad = []

def frames_total():
    with urllib.request.urlopen(url + "/metrics", timeout=60) as r:
        text = r.read().decode()
    got = {}
    for line in text.splitlines():
        if line.startswith("symdb_serve_stack_frames_total{source=\""):
            label = line.split('"')[1]
            got[label] = int(line.split()[-1])
    if set(got) != {"resolved", "cache", "earlier_stack", "deadline"}:
        sys.exit("/metrics: symdb_serve_stack_frames_total sources %r" % sorted(got))
    return got

def post_json(mods, stacks):
    body = json.dumps({"modules": mods, "stacks": stacks}).encode()
    rq = urllib.request.Request(url + "/v1/symbolize", data=body, method="POST",
                                headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(rq, timeout=60) as r:
        return json.loads(r.read())["stacks"]

def post_binary(mods, stacks):
    wmods = [{"build_id": m["build_id"], "addresses": []} for m in mods]
    wstacks = [[(mi, int(a, 16)) for mi, a in s] for s in stacks]
    status, _, body = batch_client.post(url + "/v1/symbolize",
                                        batch_client.encode_request(wmods, wstacks))
    if status != 200:
        sys.exit("binary request: status %d" % status)
    return batch_client.decode_response(body)["stacks"]

def check_frames(fmt, stacks):
    for i, stack in enumerate(stacks):
        for r, a in zip(stack, addrs):
            got = [(f["function"], f["file"], f["line"]) for f in r["frames"]]
            if r["status"] != "ok" or got != llvm[int(a, 16)]:
                bad.append("%s stacks[%d] %s: %s %r, llvm-symbolizer-14 %r" %
                           (fmt, i, a, r["status"], got, llvm[int(a, 16)]))

for fmt, post in (("json", post_json), ("binary", post_binary)):
    once = post([{"build_id": bid}], [[[0, a] for a in addrs]])
    check_frames(fmt, once)
    before = frames_total()
    # two modules, one build-id: the same image, so the copies are equal
    many = post([{"build_id": bid}, {"build_id": bid}],
                [[[k % 2, a] for a in addrs] for k in range(COPIES)])
    after = frames_total()
    check_frames(fmt, many)
    if len(many) != COPIES or any(s != once[0] for s in many):
        bad.append("%s: a copy's answer differs from the stack's answer alone" % fmt)
    d = {k: after[k] - before[k] for k in after}
    want = {"resolved": 0 if cached else len(addrs), "cache": len(addrs) if cached else 0,
            "earlier_stack": (COPIES - 1) * len(addrs), "deadline": 0}
    if d != want:
        bad.append("%s: %d copies of one stack: stack frames %r, expected %r" %
                   (fmt, COPIES, d, want))
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
	fail "equal stacks in one request (cache: $1; above)"
}
serve_start --cache-size 0
check 0
serve_stop
serve_start
check 1
serve_stop

serve_start --cache-size 0 --deadline-ms 1
HERE=$(dirname "$0") serve_py "$SERVE_URL" "$bid" "$SCRATCH/addrs.txt" <<'PY' ||
import json, os, sys, urllib.request
sys.path.insert(0, os.environ["HERE"])
import batch_client

url, bid = sys.argv[2], sys.argv[3]
addrs = open(sys.argv[4]).read().split()

def frames_total():
    with urllib.request.urlopen(url + "/metrics", timeout=60) as r:
        text = r.read().decode()
    return {l.split('"')[1]: int(l.split()[-1]) for l in text.splitlines()
            if l.startswith("symdb_serve_stack_frames_total{source=\"")}

# 300 stacks of 200 frames, each stack different (rotated), no two equal
frames = [addrs[k % len(addrs)] for k in range(200 * 300)]
stacks = [[[0, a] for a in frames[s * 200:(s + 1) * 200]] for s in range(300)]
for s in range(300):
    stacks[s][0][1] = hex(int(stacks[s][0][1], 16) + s)
body = json.dumps({"modules": [{"build_id": bid}], "stacks": stacks}).encode()
before = frames_total()
rq = urllib.request.Request(url + "/v1/symbolize", data=body, method="POST",
                            headers={"Content-Type": "application/json"})
with urllib.request.urlopen(rq, timeout=120) as r:
    got = json.loads(r.read())["stacks"]
after = frames_total()
d = {k: after[k] - before[k] for k in after}
late = sum(1 for st in got for f in st if f["status"] == "deadline")
want = {"resolved": 200 * 300 - late, "cache": 0, "earlier_stack": 0, "deadline": late}
if late == 0:
    sys.exit("--deadline-ms 1: no frame of 60,000 was answered \"deadline\"")
if d != want:
    sys.exit("--deadline-ms 1: stack frames %r, expected %r (%d answered deadline)" %
             (d, want, late))
PY
	fail "stack frames past the deadline counted as resolved (above)"
serve_stop
echo "equal stacks in one request: resolved once, in JSON and binary, answers as llvm-symbolizer-14's"
