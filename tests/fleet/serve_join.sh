#!/bin/bash
# SPDX-License-Identifier: MIT
#
# serve_join.sh: many requests meeting the same fetches (symdb serve's
# fetch table under load; also run under ThreadSanitizer, label
# `concurrency`).  The store (slow_store.py) answers each of three images
# 1 s after it is asked, and 404 for a fourth id.  symdb serve --upstream
# with --max-fetches 2 (fewer workers than images: the queue is used):
#   1. 16 concurrent requests, each naming the four ids in its own order:
#      every request answers the three images "ok" and the fourth
#      "unknown_image"
#   2. the store saw exactly one GET per id (requests join a fetch queued
#      or in progress; the negative answer is remembered)
#   3. the answers equal llvm-symbolizer-14's (json_oracle.py)
# With every request starting its own fetch, step 2 counts up to 16 GETs.
source "$(dirname "$0")/serve_lib.sh"
require readelf llvm-symbolizer-14
three_images

note "the store: three images, each answered after 1 s"
store_tree "${objs[@]}"
for id in "${ids[@]}" "$absent"; do echo 1 >"$tree/delay.$id"; done
slow_store_start

SERVE_DB=$SCRATCH/node-db
serve_start --upstream "$store" --fetch-budget-ms 30000 --fetch-timeout 30 --max-fetches 2 --threads 8
export SERVE_DB SYMDB

note "1. 16 concurrent requests for the same four ids"
serve_py "${ids[@]}" "$absent" <<'PY' || fail "concurrent requests (above)"
import json, random, sys, threading, urllib.request
url, ids = "http://" + sys.argv[1], sys.argv[2:]
out = [None] * 16
def ask(k):
    order = ids[:]
    random.Random(k).shuffle(order)
    body = json.dumps({"modules": [{"build_id": i, "addresses": ["0x0"]} for i in order]}).encode()
    rq = urllib.request.Request(url + "/v1/symbolize", data=body,
                                headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(rq, timeout=120) as r:
        out[k] = {i: m["status"] for i, m in zip(order, json.load(r)["modules"])}
ts = [threading.Thread(target=ask, args=(k,)) for k in range(16)]
for t in ts: t.start()
for t in ts: t.join()
want = {i: "ok" for i in ids[:3]}
want[ids[3]] = "unknown_image"
for k, o in enumerate(out):
    if o != want:
        sys.exit("request %d: %s" % (k, o))
PY

note "2. one GET per id on the store"
for id in "${ids[@]}" "$absent"; do
	n=$(grep -c "^GET /symdb/v1/${id:0:2}/$id.symdb$" "$SCRATCH/store.log" || true)
	((n == 1)) || fail "$id: $n GETs on the store, expected 1"
done

note "3. the answers against llvm-symbolizer-14"
cases=()
for k in 0 1 2; do cases+=("build_id|${ids[k]}|${objs[k]}"); done
python3 "$serve_dir/json_oracle.py" "$SERVE_URL" "${cases[@]}" --sample 100 || fail "answers differ (above)"
serve_alive
echo "wall time $(echo "$(date +%s.%N) - $t0" | bc) s"
echo "PASS"
