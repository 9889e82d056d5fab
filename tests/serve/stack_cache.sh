#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# stack_cache.sh: the stack cache of `symdb serve` over HTTP (JSON).  One
# request with stacks of a DWARF fixture (equal stacks, a stack in another
# order, a stack of an unknown image, a stack of a path module) is sent to a
# server with the default cache twice, then with its modules listed in
# another order (so the stacks name other module numbers), and to a server
# started with --cache-size 0 and one with a cache too small to keep any
# stack.  Checks:
#   - every stack frame's function, file and line are llvm-symbolizer-14's
#     (--output-style=JSON) for that address, on every server, cached or
#     not, and an unknown image's frames say unknown_image;
#   - the "stacks" part of every answer is the same bytes with the cache,
#     without it, and from the cache (hits answer what resolving answers);
#   - /metrics: the repeated request's cacheable stacks are hits, a stack
#     equal to an earlier one of the same request is not looked up (it is
#     answered with that stack's bytes; stack_dups.sh tests that) (the
#     request with its modules reordered too: keys hold build-ids, not
#     module numbers); stacks of path modules or unknown images are never
#     counted (never cached: a rebuilt file or a later upload must not be
#     answered stale); without a cache nothing is counted; a cache too
#     small for any stack counts misses and no hits.
source "$(dirname "$0")/lib.sh"

exe=$FIXTURES/full/cpp_g++_O2_pie
[[ -f $exe ]] || fail "no fixture $exe"
SERVE_DB=$SCRATCH/db
run "$SYMDB" --db "$SERVE_DB" build -q "$exe"
((RC == 0)) || fail "symdb build $exe: exit $RC"
bid=$(readelf -n "$exe" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[[ -n $bid ]] || fail "$exe: no build-id"

# Addresses: inside each sized function of the fixture (start + size/3).
mapfile -t addrs < <(llvm-nm-14 --defined-only -S "$exe" | python3 -c '
import sys
for f in map(str.split, sys.stdin):
    if len(f) == 4 and f[2] in "Tt" and int(f[1], 16):
        print(hex(int(f[0], 16) + int(f[1], 16) // 3))')
((${#addrs[@]} >= 8)) || fail "$exe: fewer than 8 sized functions (${#addrs[@]})"

# The requests, written by python3 from the addresses: modules in the
# order BID, UNKNOWN, PATH (request a) or PATH, BID, UNKNOWN (request b).
python3 - "$SCRATCH" "$bid" "$exe" "${addrs[@]}" <<'EOF'
import json, sys
out, bid, exe, addrs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
unknown = "00" * 20
a8 = addrs[:8]
def req(order):
    mods = {"bid": {"build_id": bid}, "unk": {"build_id": unknown}, "path": {"path": exe}}
    idx = {name: i for i, name in enumerate(order)}
    stacks = [
        [[idx["bid"], a] for a in a8],              # 0
        [[idx["bid"], a] for a in a8],              # 1: equal to 0
        [[idx["bid"], a] for a in reversed(a8)],    # 2: another order
        [[idx["unk"], a] for a in a8[:3]],          # 3: unknown image
        [[idx["path"], a] for a in a8[:3]],         # 4: a path module
        [[idx["bid"], a8[0]], [idx["unk"], a8[1]]], # 5: partly unknown
    ]
    return {"modules": [mods[n] for n in order], "stacks": stacks}
json.dump(req(["bid", "unk", "path"]), open(out + "/a.json", "w"))
json.dump(req(["path", "bid", "unk"]), open(out + "/b.json", "w"))
open(out + "/addrs.txt", "w").write("\n".join(a8) + "\n")
EOF
llvm-symbolizer-14 --obj "$exe" --output-style=JSON <"$SCRATCH/addrs.txt" >"$SCRATCH/llvm.json"

# post FILE: POST /v1/symbolize, 200 expected; the body in $OUT
post() {
	serve_req POST /v1/symbolize --header 'Content-Type: application/json' --body-file "$1"
	((STATUS == 200)) || fail "POST $1: status $STATUS"
}
# counts: H and M = the cache's hits and misses from /metrics ("none" if absent)
counts() {
	serve_req GET /metrics
	((STATUS == 200)) || fail "/metrics: status $STATUS"
	read -r H M < <(awk '$1 == "symdb_serve_stack_cache_hits_total" { h = $2 }
	     $1 == "symdb_serve_stack_cache_misses_total" { m = $2 }
	     END { print (h == "" ? "none" : h), (m == "" ? "none" : m) }' "$OUT")
	[[ $H != none && $M != none ]] || fail "/metrics has no stack cache counters"
}
# check_frames ANSWER: every frame of every stack against llvm-symbolizer-14;
# prints the "stacks" part, canonical, on stdout
check_frames() {
	python3 - "$1" "$SCRATCH/llvm.json" "$SCRATCH/addrs.txt" <<'EOF'
import json, sys
ans = json.load(open(sys.argv[1]))
llvm = {}
for line, addr in zip(open(sys.argv[2]), open(sys.argv[3]).read().split()):
    chain = [(s["FunctionName"] or None, s["FileName"] or None, s["Line"])
             for s in json.loads(line)["Symbol"]]
    llvm[int(addr, 16)] = [c for c in chain if c != (None, None, 0)]
bad = 0
for i, stack in enumerate(ans["stacks"]):
    for j, r in enumerate(stack):
        a = int(r["address"], 16)
        if r["status"] == "unknown_image":
            continue
        got = [(f["function"], f["file"], f["line"]) for f in r["frames"]]
        if r["status"] != "ok" or got != llvm[a]:
            print("stacks[%d][%d] %s: %s %r, llvm-symbolizer-14 %r" % (i, j, r["address"],
                  r["status"], got, llvm[a]), file=sys.stderr)
            bad += 1
unk = [r["status"] for r in ans["stacks"][3]] + [ans["stacks"][5][1]["status"]]
if unk != ["unknown_image"] * 4:
    print("unknown image frames: %r" % unk, file=sys.stderr)
    bad += 1
if len(ans["stacks"]) != 6 or [len(s) for s in ans["stacks"]] != [8, 8, 8, 3, 3, 2]:
    print("stack lengths %r" % [len(s) for s in ans["stacks"]], file=sys.stderr)
    bad += 1
print(json.dumps(ans["stacks"], sort_keys=True))
sys.exit(1 if bad else 0)
EOF
}
# ask NAME FILE: post FILE, check its frames, keep the stacks as $SCRATCH/NAME
ask() {
	post "$2"
	cp "$OUT" "$SCRATCH/$1.answer"
	check_frames "$SCRATCH/$1.answer" >"$SCRATCH/$1.stacks" ||
		fail "$1: frames differ from llvm-symbolizer-14"
}

# The server with its default cache.
serve_start
counts; h0=$H m0=$M
[[ $h0 == 0 && $m0 == 0 ]] || fail "a fresh server's cache counts: hits $h0, misses $m0"
ask a1 "$SCRATCH/a.json"
counts; h1=$H m1=$M
# stacks 0, 1, 2 are cacheable, 1 is 0's copy (never looked up); 3, 4, 5
# name an unknown image or a path
((m1 - m0 == 2 && h1 == h0)) ||
	fail "first request: hits $((h1 - h0)), misses $((m1 - m0)); 2 cacheable stacks besides a copy"
ask a2 "$SCRATCH/a.json"
counts; h2=$H m2=$M
((h2 - h1 == 2 && m2 == m1)) ||
	fail "repeated request: hits $((h2 - h1)), misses $((m2 - m1)); expected 2 hits, no miss"
ask b1 "$SCRATCH/b.json"
counts; h3=$H m3=$M
((h3 - h2 == 2 && m3 == m2)) ||
	fail "modules reordered: hits $((h3 - h2)), misses $((m3 - m2)); expected 2 hits, no miss"
cmp -s "$SCRATCH/a1.stacks" "$SCRATCH/a2.stacks" || fail "a cached answer differs from the first"
cmp -s "$SCRATCH/a1.stacks" "$SCRATCH/b1.stacks" || fail "reordered modules: other stack answers"
# A frame at 0xffffffffffffffff (asked as one less, as llvm's answer is that
# of the last zero-size symbol): its symbol offset is the address asked's,
# resolved and from the cache alike (the JSON answer; the binary format's
# cached results carry the flag too, untested).
printf '{"modules":[{"build_id":"%s"}],"stacks":[[[0,"0xffffffffffffffff"],[0,"%s"]]]}' \
	"$bid" "${addrs[0]}" >"$SCRATCH/top.json"
for k in 1 2; do
	post "$SCRATCH/top.json"
	python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["stacks"][0][0]
s = f["symbol"]
assert f["status"] == "ok" and s and s["offset"] == 2**64 - 1 - int(s["start"], 16), f
' "$OUT" || fail "request $k: the frame at 2^64-1: $(head -c 400 "$OUT")"
done
serve_stop

# Without a cache: the same answers, nothing counted.
serve_start --cache-size 0
ask n1 "$SCRATCH/a.json"
ask n2 "$SCRATCH/a.json"
counts; h=$H m=$M
[[ $h == 0 && $m == 0 ]] || fail "--cache-size 0 counted hits $h, misses $m"
cmp -s "$SCRATCH/a1.stacks" "$SCRATCH/n1.stacks" || fail "the cache changed the stacks' answers"
serve_stop

# A cache too small for any stack (an entry may take an eighth of it).
serve_start --cache-size 1024
ask t1 "$SCRATCH/a.json"
ask t2 "$SCRATCH/a.json"
counts; h=$H m=$M
((h == 0 && m >= 4)) || fail "a 1 KiB cache: hits $h, misses $m; expected no hit"
cmp -s "$SCRATCH/a1.stacks" "$SCRATCH/t2.stacks" || fail "a 1 KiB cache changed the answers"
serve_stop
# An index replaced by a richer one of the same build-id (the stripped
# binary's, then the full binary's by build --force): the cached stacks are
# not the new index's answers, and must not be given for it.  Before, the
# same response had the module's frames from the new index and the stack's
# "no_symbol" from the cache.
strip -o "$SCRATCH/stripped" "$exe"
SERVE_DB=$SCRATCH/db2
run "$SYMDB" --db "$SERVE_DB" build -q "$SCRATCH/stripped"
((RC == 0)) || fail "symdb build of the stripped copy: exit $RC"
printf '{"modules":[{"build_id":"%s","addresses":["%s"]}],"stacks":[[[0,"%s"]]]}' \
	"$bid" "${addrs[0]}" "${addrs[0]}" >"$SCRATCH/r.json"
serve_start
post "$SCRATCH/r.json"
post "$SCRATCH/r.json" # (now from the cache)
run "$SYMDB" --db "$SERVE_DB" build -q --force "$exe"
((RC == 0)) || fail "symdb build --force of the full binary: exit $RC"
post "$SCRATCH/r.json"
python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
m, s = a["modules"][0]["results"][0], a["stacks"][0][0]
assert m["status"] == "ok" and m["frames"], a
assert (s["status"], s["frames"]) == (m["status"], m["frames"]), (m, s)
' "$OUT" || fail "after the richer index: the stack answers otherwise than the module: $(head -c 600 "$OUT")"
serve_stop
echo "stack cache: hits answer what resolving answers; keys by build-id and index; paths and unknown images never cached"
