#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# perf_node.sh: JIT frames in `symdb perf`.  `perf record -e cpu-clock -g`
# of node --perf-basic-prof running two hot JavaScript functions (the JIT
# names its code in /tmp/perf-PID.map, which perf script shows as the DSO of
# those frames); `perf script` as README "Profiles" runs it, into symdb perf.
# The oracle is `perf report --no-children --sort dso,sym`, which names the
# same samples from the same map: the "_[j]" leaves of symdb's folded stacks
# must agree with perf's "[JIT]" samples on >= 99 % of their weight
# (perf_compare.py --jit), and both hot functions must be among them.  The
# map is removed at exit (node leaves it behind).  Label `slow`.
. "$(dirname "$0")/../cli/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
require perf node python3
export HOME=$SCRATCH/home # perf's build-id cache: this test's own
mkdir -p "$HOME"
cat >"$SCRATCH/hot.js" <<'JS'
const end = Date.now() + 2000;
function hotJitFunction(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
function strWork(n) { const a = []; for (let i = 0; i < n; i++) a.push(String(i)); return a.join(",").length; }
let t = 0;
while (Date.now() < end) { t += hotJitFunction(200000); t += strWork(20000); }
console.log(t);
JS
cleanup() { rm -f /tmp/perf-"$(cat "$SCRATCH/node.pid" 2>/dev/null || echo none)".map; }
trap cleanup EXIT
data=$SCRATCH/perf.data
# The pid of node: perf record runs it as its child (sh -c exec keeps it).
if ! perf record -q -e cpu-clock -g -o "$data" sh -c 'echo $$ >"$1"; exec node --perf-basic-prof "$2"' \
	sh "$SCRATCH/node.pid" "$SCRATCH/hot.js" >"$SCRATCH/record.log" 2>&1; then
	echo "SKIP: perf record does not work here: $(tail -1 "$SCRATCH/record.log")"
	exit 77
fi
perf report -i "$data" --no-children --stdio -n --sort dso,sym -g none >"$SCRATCH/report.txt" \
	2>"$SCRATCH/report.err" || fail "perf report: $(tail -1 "$SCRATCH/report.err")"
perf script -F comm,pid,tid,time,period,event,ip,dso --show-mmap-events -i "$data" \
	>"$SCRATCH/script.txt" 2>/dev/null || fail "perf script failed"
run "$SYMDB" perf "$SCRATCH/script.txt" -o "$SCRATCH/out.folded"
[[ $RC == 0 ]] || fail "symdb perf exited $RC"
note "$(cat "$ERR")"
python3 "$here/perf_compare.py" --jit "$SCRATCH/out.folded" "$SCRATCH/report.txt" 99 ||
	fail "symdb perf's JIT frames disagree with perf report's"
for f in hotJitFunction strWork; do
	grep -q "$f[^;]*_\[j\] [0-9]*$" "$SCRATCH/out.folded" || fail "no JIT leaf frame for $f"
done
echo ok
