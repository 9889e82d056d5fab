#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# addr2line_perf.sh --symdb PATH [--runs N] [--work DIR]
#
# perf 6.1's `perf report --stdio -s dso,sym,srcline` on one profile, with
# binutils' addr2line and with symdb's (a directory holding an `addr2line`
# symlink to PATH first in PATH): runs interleaved, the order alternating
# each round, medians with min and max, wall time from bench/rusage.py, CPU
# as `perf stat -e task-clock` counts it over the whole process tree (perf
# report and every addr2line it started: perf 6.1 kills them at exit without
# reaping, so rusage would miss them), the 1-minute load average beside each
# figure.  The profile: `perf record -e cpu-clock -g` of
# 3 s of pure-Python work (pyenv python3.11 and its libpython, else
# /usr/bin/python3.11), recorded once into WORK with its own $HOME (perf's
# build-id cache).  The files perf names are indexed into WORK/db before the
# runs (a first perf report through a wrapper that logs them); indexing is
# not timed.  Prints a Markdown table on stdout; raw lines go to WORK/raw.txt.
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
runs=7 work=/tmp/symdb-addr2line-perf symdb=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--symdb) symdb=$(realpath "$2"); shift 2 ;;
	*) echo "addr2line_perf.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[ -x "$symdb" ] || { echo "addr2line_perf.sh: --symdb PATH (the built symdb) is required" >&2; exit 2; }
rm -rf "$work"
mkdir -p "$work/home" "$work/symdb-bin" "$work/log"
export HOME=$work/home SYMDB_DIR=$work/db
ln -s "$symdb" "$work/symdb-bin/addr2line"
gnu=$(command -v addr2line)

lib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')
py=/usr/bin/python3.11
[ -x "$lib/../bin/python3.11" ] && [ -f "$lib/libpython3.11.so.1.0" ] && py=$lib/../bin/python3.11
cat >"$work/work.py" <<'EOF'
import time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
t = time.time()
while time.time() - t < 3:
    fib(18); sorted(str(i) for i in range(2000)); {i: i * i for i in range(3000)}
EOF
perf record -q -e cpu-clock -g -o "$work/perf.data" "$py" "$work/work.py" >/dev/null 2>&1

# the files perf names, indexed once
cat >"$work/log/addr2line" <<EOF
#!/bin/sh
printf '%s\n' "\$2" >>"$work/log/files"
exec "$gnu" "\$@"
EOF
chmod +x "$work/log/addr2line"
PATH=$work/log:$PATH perf report -i "$work/perf.data" --stdio -s dso,sym,srcline >/dev/null 2>&1
sort -u "$work/log/files" | while read -r f; do "$symdb" build -q "$f"; done

raw=$work/raw.txt
: >"$raw"
one() { # TOOL DIR: one timed perf report
	local load
	load=$(cut -d' ' -f1 /proc/loadavg)
	PATH=$2:$PATH python3 "$bench/rusage.py" "$work/ru" -- \
		perf stat -x, -e task-clock -o "$work/stat" -- \
		perf report -i "$work/perf.data" --stdio -s dso,sym,srcline >"$work/$1.txt" 2>/dev/null
	# raw: TOOL WALL USER SYS MAXRSS_KB LOAD TASK_CLOCK_MS
	echo "$1 $(cat "$work/ru") $load $(grep task-clock "$work/stat" | cut -d, -f1)" >>"$raw"
}
for ((r = 0; r < runs; r++)); do
	if ((r % 2)); then
		one binutils "$(dirname "$gnu")"; one symdb "$work/symdb-bin"
	else
		one symdb "$work/symdb-bin"; one binutils "$(dirname "$gnu")"
	fi
done

python3 - "$raw" "$runs" "$py" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    t, wall, user, sys_, rss, load, task_ms = line.split()
    rows.setdefault(t, []).append((float(wall), float(task_ms) / 1000, float(load)))
print("| perf report with | wall s, median (min-max) | CPU s (task-clock, all processes), median (min-max) | load avg, median (min-max) |")
print("|---|---|---|---|")
for t in ("symdb", "binutils"):
    r = rows[t]
    f = lambda i, fmt: "%s (%s-%s)" % tuple(fmt % v for v in (statistics.median(x[i] for x in r),
                                                             min(x[i] for x in r), max(x[i] for x in r)))
    name = "symdb addr2line" if t == "symdb" else "binutils 2.40 addr2line"
    print("| %s | %s | %s | %s |" % (name, f(0, "%.2f"), f(1, "%.2f"), f(2, "%.1f")))
print()
print("%s rounds, interleaved; profile of %s, perf %s." % (sys.argv[2], sys.argv[3],
      __import__("subprocess").run(["perf", "--version"], capture_output=True, text=True).stdout.split()[-1]))
EOF
