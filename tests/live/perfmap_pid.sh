#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# perfmap_pid.sh: `symdb query --pid` names JIT code from the process's perf
# map.  A real `node --perf-basic-prof` (perfmap_hot.js); for the first,
# middle and last byte of each optimized (JS:*) entry of its map that lies
# in an anonymous executable mapping of /proc/PID/maps, the name must be the
# one the latest line covering the address records (perfmap_check.py's
# rule, computed here by the test from the map text), in the LLVM style and
# in JSON.  Then one long-running `symdb query --pid` fed through a pipe
# names a function node compiles only after the query started: the map
# was refreshed.  The map is removed at exit.
set -euo pipefail
: "${SYMDB:?}" "${SCRATCH:?}"
case $SCRATCH in */scratch/*) ;; *) echo "refusing SCRATCH=$SCRATCH" >&2; exit 2 ;; esac
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || { echo "SKIP: node not found"; exit 77; }

node_pid=
sq_pid=
cleanup() {
	[[ -n $sq_pid ]] && kill "$sq_pid" 2>/dev/null || true
	if [[ -n $node_pid ]]; then
		kill "$node_pid" 2>/dev/null || true
		wait "$node_pid" 2>/dev/null || true
		rm -f "/tmp/perf-$node_pid.map"
	fi
}
trap cleanup EXIT

cd "$SCRATCH"
go=$SCRATCH/go
node --perf-basic-prof "$here/perfmap_hot.js" "$go" 120 >"$SCRATCH/node.out" 2>&1 &
node_pid=$!
map=/tmp/perf-$node_pid.map
wait_for() {
	for _ in $(seq 1 300); do
		[[ -f $map ]] && grep -q -- "$1" "$map" && return 0
		kill -0 "$node_pid" 2>/dev/null || fail "node exited: $(cat "$SCRATCH/node.out")"
		sleep 0.1
	done
	fail "no line matching '$1' in $map after 30 s"
}
wait_for ' JS:\*hotJitFunction '

# Addresses and the names the map gives them, from the map and
# /proc/PID/maps only.
cp "$map" "$SCRATCH/snapshot.map"
python3 - "$SCRATCH/snapshot.map" "/proc/$node_pid/maps" >"$SCRATCH/want.txt" <<'EOF'
import sys
ents = []
for raw in open(sys.argv[1], 'rb').read().split(b'\n')[:-1]:
    p = raw.decode('utf-8', 'surrogateescape').split(' ', 2)
    try:
        ents.append((int(p[0], 16), int(p[1], 16), p[2]))
    except (IndexError, ValueError):
        pass
anon_x = []
for line in open(sys.argv[2]):
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split('-'))
    if 'x' in f[1] and len(f) < 6:
        anon_x.append((lo, hi))
n = 0
for s, z, name in ents:
    if not name.startswith('JS:*') or z == 0:
        continue
    for a in (s, s + z // 2, s + z - 1):
        if not any(lo <= a < hi for lo, hi in anon_x):
            continue
        cover = [e for e in ents if (a == e[0] if e[1] == 0 else e[0] <= a < e[0] + e[1])]
        print('0x%x %s' % (a, cover[-1][2]))
        n += 1
if not n:
    sys.exit('no JS:* entry in an anonymous executable mapping')
EOF
cut -d' ' -f1 "$SCRATCH/want.txt" >"$SCRATCH/addrs"
"$SYMDB" query --pid "$node_pid" <"$SCRATCH/addrs" >"$SCRATCH/out" 2>"$SCRATCH/err" ||
	fail "query --pid exit $?: $(head -3 "$SCRATCH/err")"
awk 'NR % 3 == 1' "$SCRATCH/out" | paste -d' ' "$SCRATCH/addrs" - >"$SCRATCH/got.txt"
diff -u "$SCRATCH/want.txt" "$SCRATCH/got.txt" >&2 || fail "names differ from the map's"
grep -q hotJitFunction "$SCRATCH/got.txt" || fail "the hot function was not among them"
echo "$(wc -l <"$SCRATCH/want.txt") JIT addresses named as the map names them"
a=$(head -1 "$SCRATCH/addrs")
"$SYMDB" query --pid "$node_pid" --output-style=JSON "$a" >"$SCRATCH/out.json"
python3 - "$SCRATCH/out.json" "$(head -1 "$SCRATCH/want.txt" | cut -d' ' -f2-)" <<'EOF' ||
import json, sys
o = json.load(open(sys.argv[1]))[0]
sys.exit(0 if o['Symbol'][0]['FunctionName'] == sys.argv[2] else 'JSON: %r' % o)
EOF
	fail "JSON answer"

# One running query, a function compiled after it started.
coproc SQ { "$SYMDB" query --pid "$node_pid" 2>"$SCRATCH/query.err"; }
sq_pid=$SQ_PID
ask() {
	local name loc blank
	printf '%s\n' "$1" >&"${SQ[1]}"
	IFS= read -r -t 60 name <&"${SQ[0]}" || fail "no answer for $1"
	IFS= read -r -t 60 loc <&"${SQ[0]}" || fail "no answer for $1"
	IFS= read -r -t 60 blank <&"${SQ[0]}" || fail "no answer for $1"
	printf '%s\n' "$name"
}
got=$(ask "$a")
[[ $got == "JS:*hotJitFunction "* ]] || fail "$a: got '$got'"
touch "$go"
wait_for ' JS:\*lateJitFunction '
late=$(awk '$3 == "JS:*lateJitFunction" { a = "0x" $1 } END { print a }' "$map")
got=$(ask "$late")
[[ $got == "JS:*lateJitFunction "* ]] || fail "$late (compiled while symdb ran): got '$got'"
echo "appended line picked up through --pid: $late -> $got"
exec {SQ[1]}>&-
wait "$sq_pid" || true
sq_pid=
echo PASS
