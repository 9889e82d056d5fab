#!/bin/bash
# SPDX-License-Identifier: MIT
#
# serve_hung_upstream.sh: requests waiting for a fetch hold no pool thread.
# The upstream store (slow_store.py) accepts the connection for HANG and
# never answers; LOCAL is in the node's own database.  symdb serve with
# --threads 2, --fetch-budget-ms 5000 and a --fetch-timeout above it:
#   1. 6 concurrent requests naming HANG (each on its own connection: more
#      than the pool's threads); while they wait, GET /healthz and a request
#      for LOCAL (its frames equal llvm-symbolizer-14's) are each answered
#      within 1.5 s; the 6 are answered "pending" after about the budget;
#      symdb_serve_modules_pending_total counts each of them once and the
#      store saw one GET for HANG
#   2. --max-fetch-waiters 2: of 5 concurrent requests naming HANG, 3 are
#      answered "pending" at once (no thread of their own to wait on) and 2
#      after the budget; SIGTERM while those 2 wait: they are answered, and
#      the server exits 0 about when their budget ends
# After each stop DB/tmp is empty: the fetch still waiting on the store is
# cancelled and removes its files.
# Before requests waited on threads of their own, step 1 answered /healthz
# after 14.0 s (every pool thread waiting for HANG's fetch, the 6 answered
# two at a time at 5, 10 and 15 s); with them, within 0.01 s.
source "$(dirname "$0")/serve_lib.sh"
require readelf llvm-symbolizer-14 llvm-nm-14
local_obj=$FIXTURES/full/c_gcc_O2_pie hang_obj=$FIXTURES/full/lib_gcc_O2.so
LOCAL=$(build_id "$local_obj") HANG=$(build_id "$hang_obj")

note "the store: HANG accepted and never answered"
store_tree "$hang_obj"
touch "$tree/hang.$HANG"
slow_store_start

SERVE_DB=$SCRATCH/node-db
run "$SYMDB" --db "$SERVE_DB" build "$local_obj"
((RC == 0)) || fail "symdb build: $(cat "$ERR")"
export SERVE_DB SYMDB
llvm-nm-14 --defined-only "$local_obj" | awk '$2 ~ /^[tT]$/ { print "0x" $1 }' | head -n 20 \
	>"$SCRATCH/local.addrs"
hang_gets() { grep -c "/$HANG.symdb" "$SCRATCH/store.log" || true; }
# The fetch in progress when the server stops removes what it wrote in
# DB/tmp (before, it was left running and its download stayed for gc).
tmp_empty() {
	local left
	left=$(ls -A "$SERVE_DB/tmp")
	[[ -z $left ]] || fail "step $1: DB/tmp after the stop: $left"
}

# hung.py N: N concurrent requests naming HANG (and LOCAL) on connections
# of their own; prints "ELAPSED STATUS" per request as it is answered, in
# the order they end.  With --probe, /healthz and a LOCAL request are timed
# while the N wait, the LOCAL answer checked against llvm-symbolizer-14.
cat >"$SCRATCH/hung.py" <<'PY'
import json, os, signal, subprocess, sys, threading, time, urllib.request
addr, local, hang, la_file, lobj, n, mode = sys.argv[1:8]
url = "http://" + addr
la = open(la_file).read().split()

def post(body, timeout=60):
    rq = urllib.request.Request(url + "/v1/symbolize", data=json.dumps(body).encode(),
                                headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(rq, timeout=timeout) as r:
        return json.load(r)["modules"]

ends = []
lock = threading.Lock()
def ask(k):
    t = time.monotonic()
    try:
        m = post({"modules": [{"build_id": hang, "addresses": ["0x10", "0x20"]},
                              {"build_id": local, "addresses": la[:2]}]})
        st = ",".join(x["status"] for x in m)
        if m[0]["status"] == "pending":
            assert all(r["status"] == "pending" for r in m[0]["results"]), m[0]
    except Exception as e:
        st = "error:%s" % e
    with lock:
        ends.append((time.monotonic() - t, st))
        print("%.2f %s" % ends[-1], flush=True)

ts = [threading.Thread(target=ask, args=(k,)) for k in range(int(n))]
for t in ts:
    t.start()
time.sleep(1.0) # (every request is in by now: python's connect + send take ms)
if mode == "probe":
    t = time.monotonic()
    with urllib.request.urlopen(url + "/healthz", timeout=60) as r:
        assert r.status == 200, r.status
    hz = time.monotonic() - t
    t = time.monotonic()
    m = post({"modules": [{"build_id": local, "addresses": la}]})
    lt = time.monotonic() - t
    print("probe healthz %.2f s, LOCAL %.2f s" % (hz, lt), flush=True)
    want = subprocess.run(["llvm-symbolizer-14", "--output-style=JSON", "--obj", lobj],
                          input="\n".join(la) + "\n", capture_output=True, text=True,
                          check=True).stdout.splitlines()
    assert len(want) == len(la) and m[0]["status"] == "ok", (want, m)
    for r, w in zip(m[0]["results"], want):
        fn = [f["FunctionName"] for f in json.loads(w)["Symbol"]]
        assert r["status"] == "ok" and [f["function"] for f in r["frames"]] == fn, (r, w)
    assert hz < 1.5 and lt < 1.5, "answered while HANG's fetch is waited for: too slow"
elif mode.startswith("term="):
    os.kill(int(mode[5:]), signal.SIGTERM)
for t in ts:
    t.join()
PY

note "1. 6 requests wait for HANG (2 pool threads): /healthz and LOCAL answered meanwhile"
serve_start --upstream "$store" --threads 2 --fetch-budget-ms 5000 --fetch-timeout 60
serve_py "$LOCAL" "$HANG" "$SCRATCH/local.addrs" "$local_obj" 6 probe <"$SCRATCH/hung.py" \
	>"$SCRATCH/step1.out" || { cat "$SCRATCH/step1.out"; fail "step 1 (above)"; }
cat "$SCRATCH/step1.out"
n=$(grep -c '^[0-9.]* pending,ok$' "$SCRATCH/step1.out" || true)
((n == 6)) || fail "$n of 6 requests answered pending,ok"
awk '/^[0-9.]* / && ($1 < 4 || $1 > 12) { exit 1 }' "$SCRATCH/step1.out" ||
	fail "the waiting requests were not answered after about the 5 s budget"
serve_wait_metric 'symdb_serve_modules_pending_total 6'
n=$(hang_gets)
((n == 1)) || fail "HANG: $n GETs on the store, expected 1 (one fetch per build-id)"
serve_alive
serve_stop
((SERVE_RC == 0)) || fail "symdb serve exited $SERVE_RC"
tmp_empty 1

note "2. --max-fetch-waiters 2: 3 of 5 answered pending at once; SIGTERM while 2 wait"
before=$(hang_gets)
serve_start --upstream "$store" --threads 2 --fetch-budget-ms 5000 --fetch-timeout 60 \
	--max-fetch-waiters 2
t=$(date +%s.%N)
serve_py "$LOCAL" "$HANG" "$SCRATCH/local.addrs" "$local_obj" 5 "term=$SERVE_PID" \
	<"$SCRATCH/hung.py" >"$SCRATCH/step2.out" || { cat "$SCRATCH/step2.out"; fail "step 2 (above)"; }
serve_stop wait
stopped=$(echo "$(date +%s.%N) - $t" | bc)
cat "$SCRATCH/step2.out"
echo "stopped after $stopped s"
((SERVE_RC == 0)) || fail "symdb serve exited $SERVE_RC after SIGTERM"
n=$(awk '$2 == "pending,ok" && $1 < 1.5' "$SCRATCH/step2.out" | wc -l)
((n == 3)) || fail "$n requests answered pending at once, expected 3"
n=$(awk '$2 == "pending,ok" && $1 >= 4 && $1 < 12' "$SCRATCH/step2.out" | wc -l)
((n == 2)) || fail "$n requests answered pending after the budget, expected 2"
(($(echo "$stopped < 12" | bc))) || fail "the stop took $stopped s"
tmp_empty 2
n=$(hang_gets)
((n == before + 1)) || fail "HANG: $((n - before)) GETs on the store, expected 1"
echo "wall time $(echo "$(date +%s.%N) - $t0" | bc) s"
echo "PASS"
