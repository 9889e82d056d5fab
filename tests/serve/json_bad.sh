#!/bin/bash
# SPDX-License-Identifier: MIT
#
# json_bad.sh: every bad JSON request of issue 14 sent to the real server,
# one assertion each on the documented status and the reason's JSON path
# (README "Refusals"): malformed JSON, wrong types, 1,000-deep nesting,
# build-ids "../../x", "%2e%2e%2f", odd-length and upper-case hex, unknown
# fields, bad stacks, and 10^7 addresses (413 from the value count, the
# server's peak RSS under 256 MiB while it refuses them).  After each, the
# server still answers a good request; the database is unchanged.
# Before the JSON front end existed every request here got 404.
source "$(dirname "$0")/lib.sh"

obj=$FIXTURES/full/c_gcc_O2_pie
run "$SYMDB" --db "$SERVE_DB" build "$obj"
((RC == 0)) || fail "symdb build: $(cat "$ERR")"
id=$(readelf -n "$obj" | awk '/Build ID:/ { print $3; exit }')
before=$(cd "$SERVE_DB" && find . -type f ! -name '*.mdb' -exec sha256sum {} + | sort)
serve_start

post() { # post BODY-FILE: STATUS and $OUT
	serve_req POST /v1/symbolize --header 'Content-Type: application/json' --body-file "$1"
}
n=0
bad() { # bad STATUS 'REASON SUBSTRING' 'BODY'
	local want=$1 reason=$2
	n=$((n + 1))
	printf '%s' "$3" >"$SCRATCH/bad$n.json"
	post "$SCRATCH/bad$n.json"
	((STATUS == want)) || fail "case $n ($3): status $STATUS, want $want: $(head -c 300 "$OUT")"
	grep -qF -- "$reason" "$OUT" || fail "case $n ($3): reason $(head -c 300 "$OUT"), want '$reason'"
}
good() {
	printf '{"modules":[{"build_id":"%s","addresses":["0x0"]}]}' "$id" >"$SCRATCH/good.json"
	post "$SCRATCH/good.json"
	((STATUS == 200)) && grep -q '"status":"ok"' "$OUT" || fail "good request after case $n: $STATUS $(head -c 300 "$OUT")"
}

note "malformed JSON"
bad 400 'body: incomplete JSON' '{"modules":['
# complete JSON that is not an object, a scalar at the very end included
bad 400 'the request: expected an object, got null' 'null'
bad 400 'the request: expected an object, got a boolean' 'true'
bad 400 'the request: expected an object, got a number' '1'
# a lone UTF-16 surrogate is not Unicode text (RFC 8259 §8.2): json-c
# would replace it with U+FFFD and change the path; a pair is text
bad 400 'a lone UTF-16 surrogate' '{"modules":[{"path":"/x\ud800","addresses":["0x1"]}]}'
bad 400 'a lone UTF-16 surrogate' '{"modules":[{"path":"/x\udc00y","addresses":["0x1"]}]}'
printf '%s' '{"modules":[{"build_id":"'"$id"'","addresses":["0x0"]}],"options":{},"x\ud83d\ude00":0}' >"$SCRATCH/pair.json"
post "$SCRATCH/pair.json"
grep -q 'a lone UTF-16 surrogate' "$OUT" && fail "a surrogate pair was refused: $(cat "$OUT")"
bad 400 'body: malformed JSON at byte' '{"modules":]'
bad 400 'body: malformed JSON at byte' '{"modules":[]} trailing'
bad 400 'body: malformed JSON at byte' "{'modules':[]}"
bad 400 'body: malformed JSON at byte' '{"modules":[],}'
good

note "wrong types"
bad 400 'modules: expected an array, got an object' '{"modules":{}}'
bad 400 'modules[0]: expected an object, got a number' '{"modules":[1]}'
bad 400 'modules[3].addresses[7]: expected a string, got a number' \
	'{"modules":[{"build_id":"00"},{"build_id":"00"},{"build_id":"00"},{"build_id":"00","addresses":["0x1","0x2","0x3","0x4","0x5","0x6","0x7",8]}]}'
bad 400 'modules[0].addresses[0]: expected a hex address' '{"modules":[{"build_id":"00","addresses":["main"]}]}'
bad 400 'modules[0].build_id: expected a string, got a number' '{"modules":[{"build_id":12}]}'
bad 400 'options.inlines: expected true or false, got a string' '{"modules":[],"options":{"inlines":"yes"}}'
bad 400 'stacks[0][0]: expected [module, \"0x...\"], got an array of length 1' '{"modules":[{"build_id":"00"}],"stacks":[[["0x1"]]]}'
bad 400 'stacks[0][0]: expected [module, \"0x...\"], got a string' '{"modules":[{"build_id":"00"}],"stacks":[["0x1"]]}'
bad 400 'stacks[0][0][0]: module index 1 names no module (the request has 1, from 0)' '{"modules":[{"build_id":"00"}],"stacks":[[[1,"0x1"]]]}'
bad 400 'stacks[0][0][0]: module index -1 names no module (the request has 1, from 0)' '{"modules":[{"build_id":"00"}],"stacks":[[[-1,"0x1"]]]}'
bad 400 'stacks[0][0][0]: expected a module index (an integer below 1), got a string' '{"modules":[{"build_id":"00"}],"stacks":[[["0","0x1"]]]}'
bad 400 'stacks[0][0][0]: expected a module index (an integer below 1), got a fraction' '{"modules":[{"build_id":"00"}],"stacks":[[[0.5,"0x1"]]]}'
bad 400 'modules[0].adresses: unknown field' '{"modules":[{"build_id":"00","adresses":[]}]}'
# a reason quoting the request keeps its UTF-8 (it was escaped byte by
# byte, as if Latin-1: "modul\u00c3\u00a9s"), and escapes control characters
bad 400 '"modulés: unknown field"' '{"modulés":[]}'
bad 400 '"modules[0].o\u001bx\": unknown field"' '{"modules":[{"build_id":"00","o\u001bx\"":1}]}'
good

note "nesting 1,000 deep"
printf '%*s' 1000 '' | tr ' ' '[' >"$SCRATCH/deep.json"
printf '%*s' 1000 '' | tr ' ' ']' >>"$SCRATCH/deep.json"
post "$SCRATCH/deep.json"
((STATUS == 400)) && grep -qF 'JSON nested deeper than 32 levels' "$OUT" || fail "1,000 deep: $STATUS $(cat "$OUT")"
good

note "image ids"
bad 400 'modules[0].build_id: expected 2 to 64 lowercase hex digits' '{"modules":[{"build_id":"../../x","addresses":["0x1"]}]}'
bad 400 'modules[0].build_id: expected 2 to 64 lowercase hex digits' '{"modules":[{"build_id":"%2e%2e%2f","addresses":["0x1"]}]}'
bad 400 'modules[0].build_id: expected 2 to 64 lowercase hex digits' '{"modules":[{"build_id":"abc"}]}'
bad 400 'modules[0].build_id: expected 2 to 64 lowercase hex digits' "{\"modules\":[{\"build_id\":\"${id^^}\"}]}"
bad 400 'modules[0].uuid: expected 2 to 64 lowercase hex digits' '{"modules":[{"uuid":"0123-4567"}]}'
bad 400 'modules[0].build_id: expected 2 to 64 lowercase hex digits' "{\"modules\":[{\"build_id\":\"${id}00${id}\"}]}"
good

note "10^7 addresses"
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    f.write("{\"modules\":[{\"build_id\":\"00\",\"addresses\":[")
    f.write(",".join(["\"0x1\""] * 10000000))
    f.write("]}]}")
' "$SCRATCH/big.json"
post "$SCRATCH/big.json"
((STATUS == 413)) && grep -qF 'too many addresses' "$OUT" || fail "10^7 addresses: $STATUS $(head -c 300 "$OUT")"
hwm=$(serve_hwm_kb)
echo "peak RSS after 10^7 addresses: $hwm KiB"
((hwm < 256 * 1024)) || fail "peak RSS $hwm KiB over 256 MiB"
good

serve_alive
after=$(cd "$SERVE_DB" && find . -type f ! -name '*.mdb' -exec sha256sum {} + | sort)
[[ $before == "$after" ]] || fail "the database's index files changed"
echo "PASS: $n refusals"
