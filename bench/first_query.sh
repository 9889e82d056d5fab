#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# first_query.sh [--runs N] [--big-runs N] [--work DIR] [--build DIR]
#                [--rev REV] [--only NAME]...
#
# First-query latency for an image that is not indexed yet (issue 13): how
# long until the first answer, starting each run from a fresh, empty
# database (the directory removed), four ways:
#   a  first-sight  `symdb --db DB query --obj FILE ADDR`, the query
#                   indexing FILE itself (skipped, with a message, when this
#                   symdb has no index on first sight: `query --no-build`,
#                   the option that turns it off, is a usage error)
#   b  build+query  `symdb --db DB build -q FILE`, then the same query; the
#                   figure is the sum of the two processes
#   c  llvm         `llvm-symbolizer-14 --obj FILE ADDR`: its first answer
#                   (one address, so it exits after answering)
#   d  indexed      the same query again on the database that b (and a)
#                   left: a later run that hits the index, for reference
# Like for like: the same address and the same sink for every way (stdout
# to WORK/answer.txt, a regular file; stderr to WORK/stderr.txt), runs
# interleaved with the order of a, b, c rotating each round, one untimed
# warm-up round per input first (so every way reads its inputs from the
# page cache), medians with min-max, CPU = user+sys from rusage
# (bench/rusage.py: the process and every child it waited for, i.e. the
# spawned symdb-indexer too), max RSS of the process tree's largest
# member, and the 1-minute load average read just before each run.  Each
# way's answer is compared byte for byte with llvm-symbolizer-14's.
#
# Inputs (an input whose files are missing is skipped with a message):
#   libpython  pyenv libpython3.11.so.1.0 (unstripped, DWARF 5);
#              ADDR = middle of _PyEval_EvalFrameDefault
#   libc       Debian /lib/x86_64-linux-gnu/libc.so.6 (stripped; DWARF from
#              libc6-dbg's build-id file, found by symdb and llvm alike);
#              ADDR = middle of malloc
#   ceph-osd   ceph-osd-dbg's .debug file of /usr/bin/ceph-osd, given
#              directly (C++, 230 MB with zlib-compressed DWARF, 624 MB
#              inflated); ADDR = middle of main.  --big-runs sets its
#              number of rounds (default: --runs)
# Symbols come from llvm-nm-14, so the addresses are the same every run.
#
# It builds symdb (Release, clean export of --rev, else the work tree) in
# --build (default WORK/build) and runs that tree's symdb with its
# symdb-indexer (SYMDB_INDEXER).  Prints a Markdown table on stdout; raw
# lines go to WORK/raw.txt.  About 4 minutes at --runs 5 on an idle
# 2-core machine, 85% of it ceph-osd.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmdline="bench/first_query.sh${*:+ $*}"
runs=5 big_runs= work=/tmp/symdb-first-query build= rev= only=()
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--big-runs) big_runs=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--rev) rev=$2; shift 2 ;;
	--only) only+=("$2"); shift 2 ;;
	-h|--help) sed -n '4,/^set -euo/p' "$0" | grep '^#' | cut -c3-; exit 0 ;;
	*) echo "first_query.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
big_runs=${big_runs:-$runs}
mkdir -p "$work"
work=$(cd "$work" && pwd)
build=${build:-$work/build}
raw=$work/raw.txt
: > "$raw"
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
command -v llvm-symbolizer-14 >/dev/null && command -v llvm-nm-14 >/dev/null || {
	echo "first_query.sh: needs llvm-symbolizer-14 and llvm-nm-14 (llvm-14)" >&2; exit 1; }

# ---- build ------------------------------------------------------------------
if [ -n "$rev" ]; then
	# a clean export, kept while WORK holds that revision's
	src=$work/src
	commit=$(git -C "$root" rev-parse --short "$rev")
	if [ "$(cat "$work/src.rev" 2>/dev/null)" != "$commit" ]; then
		rm -rf "$src" "$work/src.rev" && mkdir -p "$src"
		git -C "$root" archive "$rev" | tar -x -C "$src"
		echo "$commit" > "$work/src.rev"
	fi
else
	src=$root
	commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
fi
log "building $commit in $build (Release)"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSYMDB_BUILD_TESTS=OFF \
	> "$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
cmake --build "$build" -j2 --target symdb_cli symdb_indexer_exe \
	> "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
symdb=$build/tools/symdb
export SYMDB_INDEXER=$build/tools/symdb-indexer
# index on first sight comes with --no-build: an older symdb refuses that
# option as a usage error (exit 2)
st=0
"$symdb" --db "$work/no-db" query --no-build --obj /nonexistent 0 </dev/null >/dev/null 2>&1 || st=$?
if [ "$st" != 2 ]; then
	ways=(a b c)
else
	ways=(b c)
	log "(a) skipped: this symdb has no index on first sight ('symdb query --no-build' is a usage error)"
fi
echo "meta commit=$commit ways=${ways[*]}" >> "$raw"

# ---- inputs -----------------------------------------------------------------
# mid NMARGS... SYMBOL: the address in the middle of the function SYMBOL
# (llvm-nm-14 -S; a versioned dynamic name matches too)
mid() {
	local sym=${*: -1}
	llvm-nm-14 -S --defined-only "${@:1:$#-1}" 2>/dev/null | python3 -c '
import sys
for f in map(str.split, sys.stdin):
    if len(f) == 4 and f[2] in "Tt" and f[3].split("@")[0] == sys.argv[1]:
        print(hex(int(f[0], 16) + int(f[1], 16) // 2))
        break' "$sym"
}
# add_input NAME FILE ADDR RUNS DWARF_FILE (the file holding the DWARF)
names=() files=() addrs=() nruns=() dwarfs=()
add_input() { names+=("$1"); files+=("$2"); addrs+=("$3"); nruns+=("$4"); dwarfs+=("$5"); }
wanted() {
	((${#only[@]} == 0)) && return 0
	local o; for o in "${only[@]}"; do [ "$o" = "$1" ] && return 0; done; return 1
}
skip() { log "$1 skipped: $2"; echo "skip $1 $2" | tr -s ' ' >> "$raw"; }

if wanted libpython; then
	pylib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))' 2>/dev/null)/libpython3.11.so.1.0
	if [ -f "$pylib" ]; then
		add_input libpython "$pylib" "$(mid "$pylib" _PyEval_EvalFrameDefault)" "$runs" "$pylib"
	else
		skip libpython "no $pylib (the pyenv Python 3.11, bench/README.md)"
	fi
fi
if wanted libc; then
	libc=/lib/x86_64-linux-gnu/libc.so.6
	dbg=$(python3 "$root/bench/elfinfo.py" debug-file "$libc" 2>/dev/null || true)
	if [ -n "$dbg" ] && [ -f "$dbg" ]; then
		add_input libc "$libc" "$(mid -D "$libc" malloc)" "$runs" "$dbg"
	else
		skip libc "no libc6-dbg debug file for $libc (apt-get install libc6-dbg)"
	fi
fi
if wanted ceph-osd; then
	dbg=
	[ -f /usr/bin/ceph-osd ] && dbg=$(python3 "$root/bench/elfinfo.py" debug-file /usr/bin/ceph-osd 2>/dev/null || true)
	if [ -n "$dbg" ] && [ -f "$dbg" ]; then
		add_input ceph-osd "$dbg" "$(mid "$dbg" main)" "$big_runs" "$dbg"
	else
		skip ceph-osd "no debug file for /usr/bin/ceph-osd (apt-get install ceph-osd-dbg)"
	fi
fi
((${#names[@]})) || { echo "first_query.sh: no input available" >&2; exit 1; }

# ---- measuring ----------------------------------------------------------------
ans=$work/answer.txt err=$work/stderr.txt ru=$work/ru db=$work/db
# timed NAME WAY TIMED CMD...: run CMD, stdout to the answer file; when TIMED
# is 1 append "run NAME WAY WALL USER SYS MAXRSS LOAD STATUS" to raw.txt
timed() {
	local name=$1 way=$2 t=$3 load st=0
	shift 3
	load=$(cut -d' ' -f1 /proc/loadavg)
	python3 "$root/bench/rusage.py" "$ru" -- "$@" > "$ans" 2> "$err" || st=$?
	((t)) && echo "run $name $way $(cat "$ru") $load $st" >> "$raw"
	return 0
}
# keep NAME WAY: the answer of the last run, for the comparison
keep() { cp "$ans" "$work/out.$1.$2.txt"; cp "$err" "$work/err.$1.$2.txt"; }
# one NAME FILE ADDR WAY TIMED
one() {
	local name=$1 file=$2 addr=$3 way=$4 t=$5
	case $way in
	a)
		rm -rf "$db"
		timed "$name" a "$t" "$symdb" --db "$db" query --obj "$file" "$addr"; keep "$name" a
		timed "$name" da "$t" "$symdb" --db "$db" query --obj "$file" "$addr"; keep "$name" da ;;
	b)
		rm -rf "$db"
		timed "$name" build "$t" "$symdb" --db "$db" build -q "$file"
		timed "$name" b "$t" "$symdb" --db "$db" query --obj "$file" "$addr"; keep "$name" b
		timed "$name" d "$t" "$symdb" --db "$db" query --obj "$file" "$addr"; keep "$name" d ;;
	c)
		timed "$name" c "$t" llvm-symbolizer-14 --obj "$file" "$addr"; keep "$name" c ;;
	esac
}

for ((i = 0; i < ${#names[@]}; i++)); do
	name=${names[$i]} file=${files[$i]} addr=${addrs[$i]} n=${nruns[$i]}
	echo "input $name $addr $(stat -c %s "$file") $(python3 "$root/bench/elfinfo.py" dwarf-bytes "${dwarfs[$i]}") $file ${dwarfs[$i]}" >> "$raw"
	log "$name: $file $addr, warm-up + $n rounds"
	for w in "${ways[@]}"; do one "$name" "$file" "$addr" "$w" 0; done
	for ((k = 0; k < n; k++)); do
		nw=${#ways[@]}
		for ((j = 0; j < nw; j++)); do
			one "$name" "$file" "$addr" "${ways[$(((j + k) % nw))]}" 1
		done
	done
	for w in a da b d; do
		[ -f "$work/out.$name.$w.txt" ] || continue
		if cmp -s "$work/out.$name.$w.txt" "$work/out.$name.c.txt"; then same=yes; else same=no; fi
		echo "same $name $w $same" >> "$raw"
	done
done
rm -rf "$db"

# ---- report -------------------------------------------------------------------
echo "Produced by \`$cmdline\` on commit \`$commit\`, $(date -u '+%Y-%m-%d %H:%M') UTC; $(nproc) CPUs."
echo
python3 - "$raw" <<'EOF'
import statistics, sys
runs, inputs, same, skips = {}, [], {}, []
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "run":
        _, name, way, wall, user, sys_, rss, load, st = f
        runs.setdefault((name, way), []).append(
            (float(wall), float(user) + float(sys_), int(rss), float(load), int(st)))
    elif f[0] == "input":
        inputs.append((f[1], f[2], int(f[3]), int(f[4]), int(f[5]), f[6], f[7]))
    elif f[0] == "same":
        same[(f[1], f[2])] = f[3]
    elif f[0] == "skip":
        skips.append(" ".join(f[1:]))

def med(xs):
    return statistics.median(xs)

def fmt(xs):
    return f"{med(xs)*1000:.0f} ({min(xs)*1000:.0f}-{max(xs)*1000:.0f})"

def series(name, ways):
    """Per-round (wall, cpu, rss, load, status) summed over WAYS (b = build +
    query: wall and CPU add up, RSS is the larger, load the first's)."""
    parts = [runs.get((name, w)) for w in ways]
    if not all(parts) or len({len(p) for p in parts}) != 1:
        return None
    out = []
    for rs in zip(*parts):
        out.append((sum(r[0] for r in rs), sum(r[1] for r in rs), max(r[2] for r in rs),
                    rs[0][3], max(r[4] for r in rs)))
    return out

label = {
    "a": "(a) `query`, index on first sight",
    "b": "(b) `build` + `query`",
    "c": "(c) `llvm-symbolizer-14`",
    "d": "(d) `query` again (index hit, after b)",
    "da": "(d) `query` again (index hit, after a)",
}
print("| input | way | wall ms, median (min-max) | CPU user+sys ms | max RSS MiB | wall / CPU vs (b) | same bytes as llvm | load avg, median (min-max) | runs |")
print("|---|---|---|---|---|---|---|---|---|")
for name, addr, size, stored, inflated, path, dpath in inputs:
    b = series(name, ["build", "b"])
    for way, parts in (("a", ["a"]), ("b", ["build", "b"]), ("c", ["c"]), ("d", ["d"]), ("da", ["da"])):
        s = series(name, parts)
        if not s:
            continue
        w = [x[0] for x in s]; c = [x[1] for x in s]; l = [x[3] for x in s]
        bad = sum(1 for x in s if x[4] != 0)
        ratio = f"{med(w)/med([x[0] for x in b]):.2f} / {med(c)/med([x[1] for x in b]):.2f}" if b else "-"
        note = f" ({bad} runs exited non-zero)" if bad else ""
        print(f"| {name} | {label[way]}{note} | {fmt(w)} | {fmt(c)} | {max(x[2] for x in s)/1024:.0f} "
              f"| {ratio} | {same.get((name, way), '-') if way != 'c' else '(itself)'} "
              f"| {med(l):.2f} ({min(l):.2f}-{max(l):.2f}) | {len(s)} |")
print()
for name, addr, size, stored, inflated, path, dpath in inputs:
    bs, bq = runs.get((name, "build")), runs.get((name, "b"))
    parts = f"; (b) is `build` {fmt([x[0] for x in bs])} ms + `query` {fmt([x[0] for x in bq])} ms wall" if bs and bq else ""
    where = "" if dpath == path else f" in `{dpath}`"
    print(f"- {name}: `{path}`, {size/1e6:.1f} MB; DWARF{where} {inflated/1e6:.1f} MB inflated "
          f"({stored/1e6:.1f} MB as stored); address {addr}{parts}")
for s in skips:
    print(f"- skipped: {s}")
a, b = series("libpython", ["a"]), series("libpython", ["build", "b"])
if a and b:
    r = med([x[0] for x in a]) / med([x[0] for x in b])
    rc = med([x[1] for x in a]) / med([x[1] for x in b])
    print(f"\nTarget (libpython first answer <= 1.5x `build` + `query`): {r:.2f}x wall, {rc:.2f}x CPU: "
          f"**{'met' if r <= 1.5 else 'missed'}**.")
EOF
