#!/bin/bash
# SPDX-License-Identifier: MIT
#
# serve_fetch_reason.sh: a fetch that fails gives the client its reason.
# The upstream store (slow_store.py) answers HTTP 500 for image FAIL; the
# server reaches it through a URL with a password ("u:secret@").  A JSON
# and a binary request naming FAIL must get the module "unknown_image" with
# the fetch's reason as its error: the store URL (the password masked,
# "u:***@") and "HTTP status 500"; the password must appear in no answer
# and not on the server's stderr.  Before, the client read
# "Input/output error" (another image's index served under FAIL's name:
# "SYMDB_E_INVAL: invalid argument") and the reason was on stderr only,
# with the password.
source "$(dirname "$0")/serve_lib.sh"
require readelf
obj=$FIXTURES/full/c_gcc_O2_pie
FAIL=$(build_id "$obj")
store_tree "$obj"
echo 500 >"$tree/status.$FAIL"
slow_store_start
auth=http://u:secret@${store#http://}
serve_start --upstream "$auth" --fetch-budget-ms 5000 --fetch-timeout 5
export SERVE_DB SYMDB

note "JSON and binary: unknown_image with the fetch's reason"
serve_py "$FAIL" "$serve_dir" <<'PY' || fail "the requests (above)"
import json, sys, urllib.request
addr, fail, sdir = sys.argv[1:4]
sys.path.insert(0, sdir)
import batch_client as bc
def check(what, m):
    e = m.get("error") or ""
    print("%s: %s: %s" % (what, m["status"], e))
    assert m["status"] == "unknown_image", (what, m)
    assert "HTTP status 500" in e and "u:***@127.0.0.1" in e and "secret" not in e, (what, e)
body = {"modules": [{"build_id": fail, "addresses": ["0x1000"]}]}
rq = urllib.request.Request("http://" + addr + "/v1/symbolize", data=json.dumps(body).encode(),
                            headers={"Content-Type": "application/json"})
raw = urllib.request.urlopen(rq, timeout=60).read()
assert b"secret" not in raw, raw
check("JSON", json.loads(raw)["modules"][0])
st, ct, resp = bc.post("http://" + addr + "/v1/symbolize",
                       bc.encode_request([{"build_id": fail, "addresses": [0x1000]}]))
assert st == 200 and b"secret" not in resp, (st, resp[:200])
check("binary", bc.decode_response(resp)["modules"][0])
PY
grep -q 'HTTP status 500' "$SERVE_ERR" || fail "the reason is not on the server's stderr: $(cat "$SERVE_ERR")"
! grep -q secret "$SERVE_ERR" || fail "the password is on the server's stderr: $(grep secret "$SERVE_ERR" | head -2)"
serve_alive
echo "PASS"
