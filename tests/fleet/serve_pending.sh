#!/bin/bash
# SPDX-License-Identifier: MIT
#
# serve_pending.sh: a request's fetch budget.  The upstream store
# (slow_store.py) answers one image 4 s after it is asked (HOLD) and never
# answers for another (HANG: the connection accepted, no reply); a third
# image (LOCAL) is in the node's own database.  With --fetch-budget-ms 300
# and a --fetch-timeout of 6 s:
#   1. one JSON request naming the three: LOCAL "ok" and answered (its
#      frames equal llvm-symbolizer-14's), HOLD and HANG "pending" with
#      every address "pending" -- the request is answered while both
#      fetches are still running
#   2. the same as a binary request: module statuses 0, 7, 7 (SPEC §16.4)
#   3. HOLD: its fetch completes in the background
#      (symdb_serve_fetches_total{source="upstream",result="ok"} 1), and
#      the store saw one GET for it although steps 1 and 2 both asked while
#      it was being fetched (one fetch per build-id at a time), and the next
#      request answers it, equal to llvm-symbolizer-14
#   4. HANG: its fetch ends at --fetch-timeout (result="timeout"), the
#      server alive and answering
# Before serve could fetch, step 1 failed (serve refused --upstream); with
# the budget ignored (the request waiting for its fetches up to half its
# deadline, 15 s) step 1 answered HOLD "ok" after 4 s instead of "pending";
# with every request starting its own fetch, step 3 saw 2 GETs for HOLD.
source "$(dirname "$0")/serve_lib.sh"
require readelf llvm-symbolizer-14 llvm-nm-14
local_obj=$FIXTURES/full/c_gcc_O2_pie hold_obj=$FIXTURES/full/cpp_g++_O2_pie
hang_obj=$FIXTURES/full/lib_gcc_O2.so
LOCAL=$(build_id "$local_obj") HOLD=$(build_id "$hold_obj") HANG=$(build_id "$hang_obj")

note "the store: HOLD answered after 4 s, HANG never answered"
store_tree "$hold_obj" "$hang_obj"
echo 4 >"$tree/delay.$HOLD"
touch "$tree/hang.$HANG"
slow_store_start

SERVE_DB=$SCRATCH/node-db
run "$SYMDB" --db "$SERVE_DB" build "$local_obj"
((RC == 0)) || fail "symdb build: $(cat "$ERR")"
serve_start --upstream "$store" --fetch-budget-ms 300 --fetch-timeout 6 --max-fetches 2
export SERVE_DB SYMDB

addrs() { llvm-nm-14 --defined-only "$1" | awk '$2 ~ /^[tT]$/ { print "0x" $1 }' | head -n 20; }
addrs "$local_obj" >"$SCRATCH/local.addrs"
addrs "$hold_obj" >"$SCRATCH/hold.addrs"

note "1. JSON: LOCAL answered, HOLD and HANG pending"
serve_py "$LOCAL" "$HOLD" "$HANG" "$SCRATCH/local.addrs" "$SCRATCH/hold.addrs" "$local_obj" <<'PY' || fail "JSON request (above)"
import json, subprocess, sys, time, urllib.request
addr, local, hold, hang, la, ha, lobj = sys.argv[1:8]
la = open(la).read().split()
ha = open(ha).read().split()
body = {"modules": [{"build_id": local, "addresses": la}, {"build_id": hold, "addresses": ha},
                    {"build_id": hang, "addresses": ["0x10", "0x20"]}]}
rq = urllib.request.Request("http://" + addr + "/v1/symbolize", data=json.dumps(body).encode(),
                            headers={"Content-Type": "application/json"})
t = time.monotonic()
m = json.load(urllib.request.urlopen(rq, timeout=60))["modules"]
print("answered in %.2f s (budget 0.3 s)" % (time.monotonic() - t))
assert [x["status"] for x in m] == ["ok", "pending", "pending"], [(x["status"], x.get("error")) for x in m]
assert all(r["status"] == "pending" and not r["frames"] for x in m[1:] for r in x["results"]), m[1:]
assert len(m[1]["results"]) == len(ha) and m[2]["error"], m[2]
want = subprocess.run(["llvm-symbolizer-14", "--output-style=JSON", "--obj", lobj],
                      input="\n".join(la) + "\n", capture_output=True, text=True,
                      check=True).stdout.splitlines()
assert len(want) == len(la), want
for r, w in zip(m[0]["results"], want):
    fn = [f["FunctionName"] for f in json.loads(w)["Symbol"]]
    got = [f["function"] for f in r["frames"]]
    assert r["status"] == "ok" and got == fn, (r, w)
PY

note "2. binary: statuses 0, 7, 7"
serve_py "$LOCAL" "$HOLD" "$HANG" "$serve_dir" <<'PY' || fail "binary request (above)"
import sys
addr, local, hold, hang, sdir = sys.argv[1:6]
sys.path.insert(0, sdir)
import batch_client as bc
body = bc.encode_request([{"build_id": local, "addresses": [0x1000]},
                          {"build_id": hold, "addresses": [0x1000, 0x1010]},
                          {"build_id": hang, "addresses": [0x10]}])
st, ct, resp = bc.post("http://" + addr + "/v1/symbolize", body)
assert st == 200, (st, resp[:200])
d = bc.decode_response(resp)
assert [m["status"] for m in d["modules"]] == ["ok", "pending", "pending"], d["modules"]
assert [r["status"] for r in d["modules"][1]["results"]] == ["pending"] * 2, d["modules"][1]
assert resp[4:6] == b"\x01\x01", resp[4:6]
PY

note "3. HOLD: fetched in the background, then answered"
serve_wait_metric 'symdb_serve_fetches_total\{source="upstream",result="ok"\} [1-9][0-9]*'
n=$(grep -c "/$HOLD.symdb" "$SCRATCH/store.log" || true)
((n == 1)) || fail "HOLD: $n GETs on the store, expected 1 (steps 1 and 2 asked while it was fetched)"
serve_wait_metric 'symdb_serve_fetches_total\{source="upstream",result="ok"\} 1'
python3 "$serve_dir/json_oracle.py" "$SERVE_URL" "build_id|$HOLD|$hold_obj" --sample 300 ||
	fail "HOLD after its fetch: answers differ (above)"

note "4. HANG: the fetch ends at --fetch-timeout, the server alive"
serve_wait_metric 'symdb_serve_fetches_total\{source="[a-z_]+",result="timeout"\} 1'
serve_alive
echo "wall time $(echo "$(date +%s.%N) - $t0" | bc) s"
echo "PASS"
