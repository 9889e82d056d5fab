#!/bin/bash
# SPDX-License-Identifier: MIT
#
# json_examples.sh: the README's Python and Go clients of POST /v1/symbolize
# (the code blocks after "<!-- example: python" and "<!-- example: go",
# extracted from README.md here, so the README cannot drift from what
# runs) against the real server: each prints, for a fixture's addresses,
# one line per frame that matches llvm-symbolizer-14's frames for the same
# addresses ("ADDRESS FUNCTION FILE:LINE", "??" where it prints ""), and
# each exits non-zero with the module's status for an unknown build-id.
# The curl example's request is sent too (with a real build-id).
# Without the JSON endpoint both clients failed (HTTP 404).
source "$(dirname "$0")/lib.sh"
require go
readme=$(cd "$(dirname "$0")/../.." && pwd)/README.md

extract() { # extract LANG FILE: the first fenced block after the marker
	awk -v lang="$1" '
		$0 ~ "^<!-- example: " lang " " { found = 1; next }
		found && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }
	' "$readme" >"$2"
	[[ -s $2 ]] || fail "README.md: no '$1' example block"
}
extract python "$SCRATCH/symbolize.py"
extract go "$SCRATCH/symbolize.go"

obj=$FIXTURES/full/cpp_g++_O2_pie
id=$(readelf -n "$obj" | awk '/Build ID:/ { print $3; exit }')
run "$SYMDB" --db "$SERVE_DB" build "$obj"
((RC == 0)) || fail "symdb build: $(cat "$ERR")"
main=$(llvm-nm-14 --defined-only "$obj" | awk '$3 == "main" { print $1 }')
addrs=()
for off in 0 7 19 64; do addrs+=("$(printf '0x%x' $((16#$main + off)))"); done
addrs+=(0x0)
printf '%s\n' "${addrs[@]}" | llvm-symbolizer-14 --output-style=JSON --obj "$obj" |
	python3 -c '
import json, sys
for line in sys.stdin:
    a = json.loads(line)
    for f in a["Symbol"]:
        print(a["Address"], f["FunctionName"] or "??", "%s:%d" % (f["FileName"] or "??", f["Line"]))
' >"$SCRATCH/want"
grep -q " main " "$SCRATCH/want" || fail "llvm-symbolizer-14 does not name main: $(cat "$SCRATCH/want")"

serve_start

note "python"
run python3 "$SCRATCH/symbolize.py" "$SERVE_URL" "$id" "${addrs[@]}"
((RC == 0)) || fail "symbolize.py: exit $RC: $(cat "$ERR")"
diff -u "$SCRATCH/want" "$OUT" || fail "symbolize.py: output differs from llvm-symbolizer-14's frames"
run python3 "$SCRATCH/symbolize.py" "$SERVE_URL" 0011223344 0x1
((RC != 0)) && grep -q 'unknown_image' "$ERR" || fail "symbolize.py, unknown id: exit $RC, $(cat "$ERR")"

note "go"
export GOCACHE=$SCRATCH/go-cache GOPATH=$SCRATCH/go GO111MODULE=auto GOFLAGS= GOTOOLCHAIN=local
run go run "$SCRATCH/symbolize.go" "$SERVE_URL" "$id" "${addrs[@]}"
((RC == 0)) || fail "symbolize.go: exit $RC: $(cat "$ERR")"
diff -u "$SCRATCH/want" "$OUT" || fail "symbolize.go: output differs from llvm-symbolizer-14's frames"
run go run "$SCRATCH/symbolize.go" "$SERVE_URL" 0011223344 0x1
((RC != 0)) && grep -q 'unknown_image' "$ERR" || fail "symbolize.go, unknown id: exit $RC, $(cat "$ERR")"

note "curl"
if command -v curl >/dev/null; then
	body=$(awk '/^curl -s -H .Content-Type: application\/json. http/ { f = 1; sub(/.*-d .\{/, "{"); }
		f { print } f && /^\}'"'"'$/ { exit }' "$readme" | sed "s/'\$//")
	[[ -n $body ]] || fail "README.md: no curl example"
	body=${body//2f6c3c9e8a1d4b07/$id}
	run curl -s -o "$SCRATCH/curl.json" -w '%{http_code}' -H 'Content-Type: application/json' \
		"$SERVE_URL/v1/symbolize" -d "$body"
	[[ $(cat "$OUT") == 200 ]] || fail "curl example: HTTP $(cat "$OUT"): $(cat "$SCRATCH/curl.json")"
	grep -q '"status":"ok"' "$SCRATCH/curl.json" || fail "curl example: $(cat "$SCRATCH/curl.json")"
else
	skip_part "curl is not installed"
fi
serve_alive
echo "PASS"
