#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# perf_vs_report.sh: `symdb perf` against perf's own symbolization of one
# perf.data, every way writing its output to a file.  One profile is
# recorded (`perf record -e cpu-clock -c PERIOD -g` of Debian's python3.11
# on json/re/zlib work for SECONDS), then ROUNDS rounds, the order of the
# ways rotated each round:
#   report      perf report --no-children --stdio (callchains, perf's symbols)
#   script-sym  perf script -F comm,pid,tid,time,period,event,ip,sym,dso
#               (perf names every frame: what stackcollapse-perf.pl reads)
#   script      perf script -F comm,pid,tid,time,period,event,ip,dso (no
#               symbols: symdb perf's input, README "Profiles")
#   symdb       symdb perf on that text, the database warm (indexed before)
#   pipeline    perf script (no symbols) | symdb perf, warm
#   symdb-cold  symdb perf with an empty database (first-sight indexing)
# Raw lines "WAY WALL USER SYS MAXRSS_KB LOAD1" (rusage.py: the process and
# its children) go to WORK/raw.txt; a table of medians to stdout.
# usage: perf_vs_report.sh --symdb SYMDB [--seconds S] [--period NS] [--rounds N] [--work DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
symdb= seconds=20 period=20000 rounds=3 work=/tmp/symdb-perf-bench
while (($#)); do
	case $1 in
	--symdb) symdb=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--period) period=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done
[[ -x $symdb ]] || { echo "--symdb BUILD/tools/symdb is needed" >&2; exit 2; }
symdb=$(cd "$(dirname "$symdb")" && pwd)/$(basename "$symdb")
mkdir -p "$work"
cd "$work"
export HOME=$work/home # perf's build-id cache: this run's own
mkdir -p "$HOME"
cat >work.py <<PY
import hashlib, json, re, time, zlib
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
data = [{"k": i, "v": str(i) * 3, "l": list(range(i % 17))} for i in range(20000)]
pat = re.compile(r"(\d+)-(\w+)")
end = time.time() + $seconds
while time.time() < end:
    fib(18)
    s = json.dumps(data[:3000]); json.loads(s)
    sorted(data[:5000], key=lambda d: d["v"])
    pat.findall("12-ab 34-cd 56-ef " * 200)
    zlib.compress(s.encode()); hashlib.sha256(s.encode()).hexdigest()
PY
if [[ ! -f perf.data ]]; then
	perf record -q -e cpu-clock -c "$period" -g -o perf.data /usr/bin/python3.11 work.py >/dev/null
fi
perf script -F comm,pid,tid,time,period,event,ip,dso --show-mmap-events -i perf.data >script.txt 2>/dev/null
export SYMDB_DIR=$work/db
"$symdb" perf -q script.txt -o warm.folded # warm the database
samples=$(grep -c 'cpu-clock:' script.txt)
echo "perf.data: $(du -m perf.data | cut -f1) MiB, $samples samples; perf script text: $(du -m script.txt | cut -f1) MiB"

way() { # NAME: the command of one way, output to out.NAME
	case $1 in
	report) perf report --no-children --stdio -i perf.data >out.report 2>/dev/null ;;
	script-sym) perf script -F comm,pid,tid,time,period,event,ip,sym,dso -i perf.data >out.script-sym 2>/dev/null ;;
	script) perf script -F comm,pid,tid,time,period,event,ip,dso --show-mmap-events -i perf.data >out.script 2>/dev/null ;;
	symdb) "$symdb" perf -q script.txt -o out.symdb ;;
	pipeline) perf script -F comm,pid,tid,time,period,event,ip,dso --show-mmap-events -i perf.data 2>/dev/null |
		"$symdb" perf -q -o out.pipeline ;;
	symdb-cold) rm -rf cold && SYMDB_DIR=$work/cold "$symdb" perf -q script.txt -o out.symdb-cold ;;
	esac
}
export -f way
export symdb work
ways=(report script-sym script symdb pipeline symdb-cold)
: >raw.txt
for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < ${#ways[@]}; k++)); do
		w=${ways[$(((k + r) % ${#ways[@]}))]}
		load=$(cut -d' ' -f1 /proc/loadavg)
		python3 "$here/rusage.py" ru.txt -- bash -c "way $w"
		echo "$w $(cat ru.txt) $load" >>raw.txt
	done
done
python3 - "$samples" <<'PY'
import statistics, sys
rows = {}
for line in open("raw.txt"):
    w, wall, user, sys_, rss, load = line.split()
    rows.setdefault(w, []).append((float(wall), float(user) + float(sys_), int(rss), float(load)))
print("| way | wall s, median (min-max) | CPU s, median (min-max) | max RSS MiB | load avg (1 min) |")
print("|---|---|---|---|---|")
for w in ["report", "script-sym", "script", "symdb", "pipeline", "symdb-cold"]:
    r = rows[w]
    walls, cpus = [x[0] for x in r], [x[1] for x in r]
    print(f"| {w} | {statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) | "
          f"{statistics.median(cpus):.2f} ({min(cpus):.2f}-{max(cpus):.2f}) | "
          f"{max(x[2] for x in r) // 1024} | {statistics.median(x[3] for x in r):.1f} |")
PY
