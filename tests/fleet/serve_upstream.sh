#!/bin/bash
# SPDX-License-Identifier: MIT
#
# serve_upstream.sh: `symdb serve --upstream URL` with a second `symdb
# serve` as its upstream index store (GET /symdb/v1/XX/HEX.symdb):
#   1. four concurrent requests name three build-ids the first server does
#      not hold: each is fetched, published and answered ("ok" in all four)
#   2. the answers equal llvm-symbolizer-14's on the local files (and
#      `symdb query` on the first server's database): json_oracle.py
#   3. the upstream's access log shows exactly one GET per image, after the
#      four concurrent requests and the oracle's (later requests find the
#      published image; serve_pending.sh checks that requests meeting a
#      fetch in progress join it)
#   4. a build-id the upstream does not have: "unknown_image", and asked
#      again inside --negative-ttl the upstream sees no second GET; after
#      the TTL it does
#   5. /metrics: symdb_serve_fetches_total{source="upstream",result="ok"} 3
# Before serve could fetch, step 1 failed (serve refused --upstream).
source "$(dirname "$0")/serve_lib.sh"
require readelf llvm-symbolizer-14
three_images

note "the upstream: a symdb serve over a database holding the three images"
SERVE_DB=$SCRATCH/up-db
run "$SYMDB" --db "$SERVE_DB" build "${objs[@]}"
((RC == 0)) || fail "symdb build: $(cat "$ERR")"
SERVE_LOG=$SCRATCH/up-access.log SERVE_ERR=$SCRATCH/up.err
serve_start
UP_URL=$SERVE_URL UP_LOG=$SERVE_LOG UP_PID=$SERVE_PID

note "the node: an empty database, fetching from the upstream"
SERVE_DB=$SCRATCH/node-db SERVE_LOG=$SCRATCH/node-access.log SERVE_ERR=$SCRATCH/node.err
serve_start --upstream "$UP_URL" --fetch-budget-ms 20000 --negative-ttl 2 --threads 4
export SERVE_DB SYMDB

gets() { grep -c "method=GET path=/symdb/v1/${1:0:2}/$1.symdb " "$UP_LOG" || true; }

note "1. four concurrent requests for the three unknown images"
serve_py "${ids[@]}" <<'PY' || fail "concurrent requests (above)"
import json, sys, threading, urllib.request
url, ids = "http://" + sys.argv[1], sys.argv[2:]
body = json.dumps({"modules": [{"build_id": i, "addresses": ["0x0"]} for i in ids]}).encode()
out = [None] * 4
def ask(k):
    rq = urllib.request.Request(url + "/v1/symbolize", data=body,
                                headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(rq, timeout=60) as r:
        out[k] = json.load(r)
ts = [threading.Thread(target=ask, args=(k,)) for k in range(4)]
for t in ts: t.start()
for t in ts: t.join()
for k, o in enumerate(out):
    st = [m["status"] for m in o["modules"]] if o else None
    if st != ["ok"] * 3:
        sys.exit("request %d: %s" % (k, o))
PY

note "2. the answers against llvm-symbolizer-14 and symdb query"
cases=()
for k in 0 1 2; do cases+=("build_id|${ids[k]}|${objs[k]}"); done
python3 "$serve_dir/json_oracle.py" "$SERVE_URL" "${cases[@]}" --sample 300 || fail "answers differ (above)"

note "3. one GET per image on the upstream"
for id in "${ids[@]}"; do
	n=$(gets "$id")
	((n == 1)) || fail "$id: $n GETs on the upstream, expected 1: $(grep "$id" "$UP_LOG")"
done

note "4. an image nobody has: unknown_image, remembered for --negative-ttl"
ask_absent() {
	serve_py "$absent" <<'PY'
import json, sys, urllib.request
rq = urllib.request.Request("http://" + sys.argv[1] + "/v1/symbolize",
    data=json.dumps({"modules": [{"build_id": sys.argv[2], "addresses": ["0x10"]}]}).encode(),
    headers={"Content-Type": "application/json"})
m = json.load(urllib.request.urlopen(rq, timeout=60))["modules"][0]
assert m["status"] == "unknown_image" and m["results"][0]["status"] == "unknown_image", m
print(m.get("error"))
PY
}
ask_absent >"$OUT" || fail "absent image: $(cat "$OUT")"
ask_absent >"$OUT" || fail "absent image, again: $(cat "$OUT")"
n=$(gets "$absent")
((n == 1)) || fail "absent image asked twice inside the TTL: $n GETs on the upstream"
sleep 2.5
ask_absent >"$OUT" || fail "absent image after the TTL: $(cat "$OUT")"
n=$(gets "$absent")
((n == 2)) || fail "absent image after the TTL: $n GETs on the upstream, expected 2"

note "5. the fetch counters"
serve_wait_metric 'symdb_serve_fetches_total\{source="upstream",result="ok"\} 3'
serve_alive
kill -0 "$UP_PID" || fail "the upstream died"
echo "wall time $(echo "$(date +%s.%N) - $t0" | bc) s"
echo "PASS"
