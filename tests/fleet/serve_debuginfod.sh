#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# serve_debuginfod.sh: `symdb serve --debuginfod URL` against a real
# debuginfod on loopback serving a stripped binary and its .debug file
# (fleet_fixture, built here):
#   1. a POST /v1/symbolize naming the unknown build-id: fetched, indexed in
#      the sandbox and answered "ok" within the (generous) fetch budget; the
#      debuginfod log shows the request
#   2. the answers equal llvm-symbolizer-14's on the local files (and symdb
#      query's on the server's database): json_oracle.py
#   3. later requests (the oracle's) reach debuginfod no more
#   4. a build-id debuginfod does not have: "unknown_image"; asked again
#      inside --negative-ttl, debuginfod sees no new request
#   5. rm DB/misses/HEX: the server asks debuginfod again at the next
#      request a second later (it kept its answer in memory for the TTL)
# Before serve could fetch, step 1 failed (serve refused --debuginfod).
source "$(dirname "$0")/../serve/lib.sh"
source "$(dirname "$0")/lib.sh" # its EXIT trap replaces serve/lib.sh's
require gcc objcopy curl llvm-symbolizer-14 llvm-nm-14
here=$(cd "$(dirname "$0")" && pwd)
serve_dir=$(cd "$here/../serve" && pwd)
t0=$(date +%s%N)

fleet_fixture "$SCRATCH/fx"
dbgd_start "$SCRATCH/fx/srv" 2
fleet_addrs "$SCRATCH/fx/prog" >"$SCRATCH/addrs"
(($(wc -l <"$SCRATCH/addrs") >= 3)) || fail "too few addresses in the fixture"
U=0123456789abcdef0123456789abcdef01234567

SERVE_DB=$SCRATCH/node-db
serve_start --debuginfod "$DBGD_URL" --fetch-budget-ms 20000 --fetch-timeout 20 --negative-ttl 600
FLEET_PIDS+=("$SERVE_PID")
export SERVE_DB SYMDB

# ask ID STATUS ADDRS-FILE: one JSON request for ID; its module status must be STATUS
ask() {
	serve_py "$@" <<'PY'
import json, sys, urllib.request
addr, bid, want, af = sys.argv[1:5]
addrs = open(af).read().split()
rq = urllib.request.Request("http://" + addr + "/v1/symbolize",
    data=json.dumps({"modules": [{"build_id": bid, "addresses": addrs}]}).encode(),
    headers={"Content-Type": "application/json"})
m = json.load(urllib.request.urlopen(rq, timeout=60))["modules"][0]
st = [r["status"] for r in m["results"]]
assert m["status"] == want and len(st) == len(addrs), (m["status"], m.get("error"), st)
if want == "ok":
    assert any(r["frames"] for r in m["results"]), m
else:
    assert set(st) == {want}, st
PY
}
# debuginfod logs a request when it ends: let the log settle before counting
settled_gets() { sleep 0.5; dbgd_gets "$1"; }

note "1. an unknown build-id in POST /v1/symbolize: fetched from debuginfod, answered"
ask "$PROG_ID" ok "$SCRATCH/addrs" || fail "first request (above): $(tail -n 3 "$SERVE_ERR")"
n1=$(settled_gets "$PROG_ID")
((n1 >= 1)) || fail "the debuginfod log shows no request for $PROG_ID"
ls "$SERVE_DB/images" | grep -q . || fail "nothing published in the server's database"

note "2. the answers against llvm-symbolizer-14 on the local files and symdb query"
python3 "$serve_dir/json_oracle.py" "$SERVE_URL" "build_id|$PROG_ID|$SCRATCH/fx/srv/prog" --sample 200 ||
	fail "answers differ (above)"

note "3. later requests do not reach debuginfod"
ask "$PROG_ID" ok "$SCRATCH/addrs" || fail "second request (above)"
n=$(settled_gets "$PROG_ID")
((n == n1)) || fail "later requests reached debuginfod: $n requests for $PROG_ID, $n1 after the first"

note "4. a build-id debuginfod does not have: unknown_image, remembered inside the TTL"
echo 0x1000 >"$SCRATCH/u.addrs"
ask "$U" unknown_image "$SCRATCH/u.addrs" || fail "unknown build-id (above)"
u1=$(settled_gets "$U")
((u1 >= 1)) || fail "the unknown build-id was not asked of debuginfod"
ask "$U" unknown_image "$SCRATCH/u.addrs" || fail "unknown build-id, again (above)"
u2=$(settled_gets "$U")
((u2 == u1)) || fail "a request inside --negative-ttl reached debuginfod ($u2 requests, $u1 before)"

note "5. rm DB/misses/HEX forgets the answer for the server too (within a second), not after the TTL"
[[ -f $SERVE_DB/misses/$U ]] || fail "no DB/misses/$U"
rm "$SERVE_DB/misses/$U"
sleep 1.2
ask "$U" unknown_image "$SCRATCH/u.addrs" || fail "unknown build-id after rm (above)"
u3=$(settled_gets "$U")
((u3 > u2)) || fail "after rm DB/misses/$U the server did not ask debuginfod again ($u3 requests)"
[[ -f $SERVE_DB/misses/$U ]] || fail "the new answer is not remembered in DB/misses/$U"

serve_alive
kill -0 "$DBGD_PID" || fail "debuginfod died"
note "wall time: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
echo PASS
