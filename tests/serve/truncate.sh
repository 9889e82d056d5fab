#!/bin/bash
# SPDX-License-Identifier: MIT
#
# truncate.sh: an index file truncated under the running server (another
# process truncates a published file; symdb never does).  Two images A and
# B are indexed and every address of both is asked for once (all answered,
# A's index now mapped by the server); A's file is then truncated to half
# its size and the same request is sent again.  The server must answer it:
# every one of A's addresses "damaged", B's
# exactly as before; and it keeps serving (/healthz, a third request).
# Without the SIGBUS handler the server died of SIGBUS during the second
# request (checked: no answer, the server gone).
source "$(dirname "$0")/lib.sh"
require llvm-nm-14

build_pair

printf '{"modules":[{"build_id":"%s","addresses":[%s]},{"build_id":"%s","addresses":[%s]}]}' \
	"$ua" "$(func_addrs_json "$A")" "$ub" "$(func_addrs_json "$B")" >"$SCRATCH/req.json"

serve_start --cache-size 0
post() {
	serve_req POST /v1/symbolize --body-file "$SCRATCH/req.json" \
		--header 'Content-Type: application/json'
}
post
((STATUS == 200)) || fail "first request: status $STATUS: $(head -c 300 "$OUT")"
cp "$OUT" "$SCRATCH/first.json"

size=$(stat -c %s "$fa")
truncate -s $((size / 2)) "$fa"
note "truncated $(basename "$fa") from $size to $((size / 2)) bytes under the server"

post
kill -0 "$SERVE_PID" 2>/dev/null || fail "the server died during the request after the truncation: $(tail -n 3 "$SERVE_ERR")"
((STATUS == 200)) || fail "request after the truncation: status $STATUS: $(head -c 300 "$OUT")"
cp "$OUT" "$SCRATCH/second.json"
python3 - "$SCRATCH/first.json" "$SCRATCH/second.json" <<'PY' || fail "answers after the truncation"
import json, sys
a = json.load(open(sys.argv[1]))["modules"]
b = json.load(open(sys.argv[2]))["modules"]
ok = [r["status"] for r in a[0]["results"]]
assert ok.count("ok") > 50, "first request: %d ok results for A" % ok.count("ok")
assert a[1] == b[1], "B's answers changed after A's truncation"
st = [r["status"] for r in b[0]["results"]]
assert len(st) == len(ok) and all(s == "damaged" for s in st), \
    "A after the truncation: %d results, statuses %s" % (len(st), sorted(set(st)))
print("A: all %d results damaged (module status %s)" % (len(st), b[0]["status"]))
PY
serve_alive
post
((STATUS == 200)) || fail "third request: status $STATUS"
serve_stop TERM
((SERVE_RC == 0)) || fail "exit $SERVE_RC after SIGTERM"
note "server survived the truncation: A damaged, B unchanged, still serving"
