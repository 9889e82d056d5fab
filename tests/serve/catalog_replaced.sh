#!/bin/bash
# SPDX-License-Identifier: MIT
#
# catalog_replaced.sh: the catalog made anew under a running server (SPEC
# §12.1, "A replaced catalog").  `symdb reindex` creates DB/catalog again
# when it was deleted, and moves a damaged one aside for a new one.  A server
# started on image A (its index file kept) must follow both:
#   1. DB/catalog deleted, `symdb reindex`, then `symdb build B`: within a
#      few seconds (the server looks at most once a second) B is answered,
#      equal to llvm-symbolizer-14, and A still is;
#   2. an upload (POST /v1/images, image C) is written to the new catalog:
#      `symdb list` in a new process shows it, and the server answers it;
#   3. DB/catalog moved aside (as reindex moves a damaged one) and made
#      again by `symdb reindex`, then `symdb build D`: the server follows
#      the second new catalog too.
# Meanwhile two clients ask for A without a pause: every answer is "ok".
# Before, the server kept reading the deleted catalog's last snapshot: step 1
# answered B "unknown_image" for as long as it ran, and step 2's upload was
# refused (the lock file it had opened was gone).
source "$(dirname "$0")/lib.sh"
require llvm-symbolizer-14 llvm-nm-14 readelf

here=$(cd "$(dirname "$0")" && pwd)
A=$FIXTURES/full/c_gcc_O2_pie
B=$FIXTURES/full/cpp_g++_O2_pie
C=$FIXTURES/full/lib_gcc_O2.so
D=$FIXTURES/full/c_clang_O2_pie
ua=$(build_id "$A") ub=$(build_id "$B") uc=$(build_id "$C") ud=$(build_id "$D")

run "$SYMDB" build --db "$SERVE_DB" "$A"
expect_ok "build A"
serve_start

# module_status ID BIN: the status of ID's module for BIN's first function
module_status() {
	local addr
	addr=$(func_addrs_json "$2" | cut -d, -f1)
	printf '{"modules":[{"build_id":"%s","addresses":[%s]}]}' "$1" "$addr" >"$SCRATCH/one.json"
	serve_req POST /v1/symbolize --body-file "$SCRATCH/one.json" \
		--header 'Content-Type: application/json'
	((STATUS == 200)) || fail "request for $1: status $STATUS: $(head -c 300 "$OUT")"
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["modules"][0]["status"])' "$OUT"
}
# wait_ok ID BIN: ID's module answered "ok" within 10 s
wait_ok() {
	local i st
	for ((i = 0; i < 50; i++)); do
		st=$(module_status "$1" "$2")
		[[ $st == ok ]] && return 0
		sleep 0.2
	done
	fail "$(basename "$2") ($1) still '$st' after 10 s: the server does not see the new catalog"
}
[[ $(module_status "$ub" "$B") == unknown_image ]] || fail "B answered before it was built"

# Two clients ask for A without a pause while the catalogs are swapped under
# the server's threads: every answer must be A's, "ok" (the swap waits for
# the transactions in flight; under ThreadSanitizer, label concurrency).
printf '{"modules":[{"build_id":"%s","addresses":[%s]}]}' "$ua" "$(func_addrs_json "$A")" \
	>"$SCRATCH/a.json"
load() {
	python3 - "$SERVE_URL" "$SCRATCH/a.json" "$SCRATCH/stop" <<'PY'
import json, os, sys, urllib.request
url, body, stop = sys.argv[1], open(sys.argv[2], "rb").read(), sys.argv[3]
n = bad = 0
while not os.path.exists(stop) and n < 20000:
    rq = urllib.request.Request(url + "/v1/symbolize", data=body,
                                headers={"Content-Type": "application/json"})
    m = json.load(urllib.request.urlopen(rq, timeout=30))["modules"][0]
    n += 1
    if m["status"] != "ok" or any(r["status"] != "ok" for r in m["results"]):
        bad += 1
print(n, bad)
PY
}
load >"$SCRATCH/load1" 2>&1 &
load1=$!
load >"$SCRATCH/load2" 2>&1 &
load2=$!

note "1. DB/catalog deleted, reindex, build B"
sleep 1.1 # past the server's first look, so that this one is a later one
rm -rf "$SERVE_DB/catalog"
run "$SYMDB" reindex --db "$SERVE_DB"
expect_ok "reindex"
run "$SYMDB" build --db "$SERVE_DB" "$B"
expect_ok "build B into the new catalog"
wait_ok "$ub" "$B"
SERVE_DB=$SERVE_DB python3 "$here/json_oracle.py" "$SERVE_URL" "build_id|$ub|$B" "build_id|$ua|$A" --sample 100 ||
	fail "answers after the catalog was replaced differ (above)"

note "2. an upload goes to the new catalog"
serve_req POST /v1/images --body-file "$C" --header 'Content-Type: application/octet-stream'
((STATUS == 201)) || fail "upload of C: status $STATUS: $(head -c 300 "$OUT")"
run "$SYMDB" list --db "$SERVE_DB"
expect_ok "list"
grep -q "^$uc " "$OUT" || fail "the upload is not in the catalog on disk: $(cat "$OUT")"
wait_ok "$uc" "$C"

note "3. DB/catalog moved aside, reindex, build D"
[[ $(module_status "$ud" "$D") == unknown_image ]] || fail "D answered before it was built"
sleep 1.1
mv "$SERVE_DB/catalog" "$SCRATCH/catalog.aside"
run "$SYMDB" reindex --db "$SERVE_DB"
expect_ok "second reindex"
run "$SYMDB" build --db "$SERVE_DB" "$D"
expect_ok "build D"
wait_ok "$ud" "$D"
SERVE_DB=$SERVE_DB python3 "$here/json_oracle.py" "$SERVE_URL" "build_id|$ud|$D" "build_id|$uc|$C" --sample 100 ||
	fail "answers after the second replacement differ (above)"
touch "$SCRATCH/stop"
wait "$load1" || fail "client 1 failed: $(tail -n 3 "$SCRATCH/load1")"
wait "$load2" || fail "client 2 failed: $(tail -n 3 "$SCRATCH/load2")"
for f in load1 load2; do
	read -r n bad <"$SCRATCH/$f"
	note "$f: $n requests for A during the swaps, $bad not ok"
	((n > 0 && bad == 0)) || fail "$f: $bad of $n answers for A were not ok"
done
serve_alive
serve_stop TERM
((SERVE_RC == 0)) || fail "exit $SERVE_RC after SIGTERM"
note "the server followed two new catalogs; the upload landed in the new one"
