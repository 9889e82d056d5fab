#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# perfmap_node.sh: a real JIT.  `node --perf-basic-prof --perf-prof` runs a hot
# JavaScript function (perfmap_hot.js) and writes /tmp/perf-PID.map and
# ./jit-PID.dump (perf's jitdump format) as it compiles.
#  1. While node is stopped (so the map holds still), `perf record` samples
#     taken just before are named by `perf script`, and a copy of the map is
#     checked by perfmap_check.py: the first, middle and last address of every
#     entry must resolve, through `symdb query --perf-map`, to the name of the
#     latest line covering it, the hot function among them; each perf sample
#     that one entry covers must get perf's own name.  The same for a copy
#     of the jitdump (parsed by perfmap_check.py with struct), whose names
#     must also be the perf map's at the same start and size.
#  2. A `symdb query --perf-map` started on the live map, reading addresses
#     from a pipe, answers the hot function; then node is told to start a
#     second function, and once its line is in the map the same running
#     query must name it: the appended line was picked up on refresh.
# The map is removed at exit (node leaves it behind).
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
		kill -CONT "$node_pid" 2>/dev/null || true
		kill "$node_pid" 2>/dev/null || true
		wait "$node_pid" 2>/dev/null || true
		rm -f "/tmp/perf-$node_pid.map"
	fi
}
trap cleanup EXIT

go=$SCRATCH/go
cd "$SCRATCH" # node writes isolate-*-v8.log files into its working directory
node --perf-basic-prof --perf-prof "$here/perfmap_hot.js" "$go" 120 >"$SCRATCH/node.out" 2>&1 &
node_pid=$!
map=/tmp/perf-$node_pid.map

# wait_for PATTERN: until the live map has a complete line matching it.
wait_for() {
	for _ in $(seq 1 300); do
		[[ -f $map ]] && grep -q -- "$1" "$map" && return 0
		kill -0 "$node_pid" 2>/dev/null || fail "node exited: $(cat "$SCRATCH/node.out")"
		sleep 0.1
	done
	fail "no line matching '$1' in $map after 30 s"
}
wait_for ' JS:\*hotJitFunction '

# 1. perf's names and the map's, with the map held still.
perf_args=()
if command -v perf >/dev/null &&
	perf record -q -e cpu-clock -p "$node_pid" -o "$SCRATCH/perf.data" -- sleep 1 \
		>"$SCRATCH/record.log" 2>&1; then
	kill -STOP "$node_pid"
	HOME=$SCRATCH perf script -i "$SCRATCH/perf.data" -F ip,sym,dso >"$SCRATCH/perf.script" \
		2>"$SCRATCH/script.log" || fail "perf script: $(tail -1 "$SCRATCH/script.log")"
	perf_args=(--perf-script "$SCRATCH/perf.script")
else
	echo "SKIP part: perf record does not work here: $(tail -1 "$SCRATCH/record.log" 2>/dev/null)"
	kill -STOP "$node_pid"
fi
cp "$map" "$SCRATCH/snapshot.map"
dump=$SCRATCH/jit-$node_pid.dump
[[ -f $dump ]] && cp "$dump" "$SCRATCH/snapshot.dump"
kill -CONT "$node_pid"
python3 "$here/perfmap_check.py" --symdb "$SYMDB" --map "$SCRATCH/snapshot.map" \
	--want hotJitFunction "${perf_args[@]}" || fail "symdb disagrees with the map or perf"
[[ -f $SCRATCH/snapshot.dump ]] || fail "node --perf-prof wrote no $dump"
python3 "$here/perfmap_check.py" --symdb "$SYMDB" --map "$SCRATCH/snapshot.dump" --jitdump \
	--same-as "$SCRATCH/snapshot.map" --want hotJitFunction ||
	fail "symdb disagrees with the jitdump"

# 2. A running query picks up a line appended after it read the map.
coproc SQ { "$SYMDB" query --perf-map "$map" 2>"$SCRATCH/query.err"; }
sq_pid=$SQ_PID
# ask ADDR: the function name the running query prints (LLVM style: name,
# "??:0:0", blank line).
ask() {
	local name loc blank
	printf '%s\n' "$1" >&"${SQ[1]}"
	IFS= read -r -t 30 name <&"${SQ[0]}" || fail "no answer for $1"
	IFS= read -r -t 30 loc <&"${SQ[0]}" || fail "no answer for $1"
	IFS= read -r -t 30 blank <&"${SQ[0]}" || fail "no answer for $1"
	[[ $loc == '??:0:0' && -z $blank ]] || fail "unexpected answer shape for $1: '$name' '$loc' '$blank'"
	printf '%s\n' "$name"
}
hot=$(awk '$3 ~ /^JS:\*hotJitFunction$/ { print "0x" $1; exit }' "$SCRATCH/snapshot.map")
got=$(ask "$hot")
[[ $got == "JS:*hotJitFunction "* ]] || fail "$hot: got '$got'"
grep -q 'lateJitFunction' "$map" && fail "lateJitFunction compiled before it was asked for"
touch "$go"
wait_for ' JS:[*^~]*lateJitFunction '
late=$(awk '$3 ~ /lateJitFunction$/ { a = "0x" $1 } END { print a }' "$map")
got=$(ask "$late")
[[ $got == *lateJitFunction* ]] || fail "$late (appended while symdb ran): got '$got'"
echo "appended line picked up: $late -> $got"
exec {SQ[1]}>&-
wait "$sq_pid" || fail "query exited $?: $(cat "$SCRATCH/query.err")"
sq_pid=
echo PASS
