#!/bin/bash
# SPDX-License-Identifier: MIT
#
# verify.sh: `symdb serve` under the verification policy (SPEC §9).  Two
# images A and B are indexed, then one byte in the middle of A's SYMBOLS
# table is flipped (header and directory intact, so only the table checksum
# can tell).  The same request over every function of A and B goes to:
#   1. `serve --verify`: module A "damaged" (every result), B answered;
#   2. `serve` (the default: header and directory only): no crash, A
#      answered from the damaged file (no status asserted), B the same as 1;
#   3. `serve` with SYMDB_OPEN_VERIFY_CHECKSUMS=1: as 1.
# Before --verify existed the server always verified: run 2 then said
# "damaged" too, and opening a large image read all of it (open_rss.sh
# measures that for `symdb query`).
source "$(dirname "$0")/lib.sh"
require llvm-nm-14

build_pair
python3 - "$fa" <<'PY' || fail "cannot flip a byte of SYMBOLS"
import struct, sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
count, = struct.unpack_from(">I", d, 88)
diroff, = struct.unpack_from(">Q", d, 96)
for i in range(count):
    kind, _, _, off, length, _, _ = struct.unpack_from(">IHHQQQQ", d, diroff + 40 * i)
    if kind == 4:  # SYMBOLS (SPEC §6.1)
        d[off + length // 2] ^= 0xFF
        open(p, "wb").write(d)
        sys.exit(0)
sys.exit(1)
PY

printf '{"modules":[{"build_id":"%s","addresses":[%s]},{"build_id":"%s","addresses":[%s]}]}' \
	"$ua" "$(func_addrs_json "$A")" "$ub" "$(func_addrs_json "$B")" >"$SCRATCH/req.json"

# ask NAME: the request, its JSON answer kept as $SCRATCH/NAME.json
ask() {
	serve_req POST /v1/symbolize --body-file "$SCRATCH/req.json" \
		--header 'Content-Type: application/json'
	((STATUS == 200)) || fail "$1: status $STATUS: $(head -c 300 "$OUT")"
	cp "$OUT" "$SCRATCH/$1.json"
	serve_alive
	serve_stop TERM
	((SERVE_RC == 0)) || fail "$1: exit $SERVE_RC after SIGTERM"
}

serve_start --verify --cache-size 0
ask verify
serve_start --cache-size 0
ask plain
SYMDB_OPEN_VERIFY_CHECKSUMS=1 serve_start --cache-size 0
ask env

python3 - "$SCRATCH" <<'PY' || fail "answers"
import json, sys
d = sys.argv[1]
m = {k: json.load(open("%s/%s.json" % (d, k)))["modules"] for k in ("verify", "plain", "env")}
for k in ("verify", "env"):
    a, b = m[k]
    st = {r["status"] for r in a["results"]}
    assert a["status"] == "damaged" and st == {"damaged"}, \
        "%s: A module %s, results %s" % (k, a["status"], sorted(st))
    assert b["status"] == "ok" and len(b["results"]) > 20 and \
        all(r["status"] == "ok" for r in b["results"]), "%s: B module %s" % (k, b["status"])
a, b = m["plain"]
assert b == m["verify"][1] == m["env"][1], "B's answers differ between the servers"
assert a["status"] == "ok" and len(a["results"]) == len(m["verify"][0]["results"]), \
    "plain: A module %s" % a["status"]
print("-- A: damaged with --verify and SYMDB_OPEN_VERIFY_CHECKSUMS=1, answered "
      "(%d ok results) by the default open; B the same in all three"
      % sum(r["status"] == "ok" for r in a["results"]))
PY
echo "PASS serve verify"
