#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# sandbox_cost.sh [--runs N] [--work DIR] [--rev TAG=REV]...
#
# What the indexer's sandbox costs per input: `symdb build` of the same
# inputs into a fresh database with three revisions, like for like (Release
# builds from a clean `git archive` of each, runs interleaved with the
# order rotating each round, medians with min and max, CPU from rusage -
# the symdb process and the indexers it waited for, bench/rusage.py - and
# the load average beside each figure):
#   fork     cedc4de: the cage was a fork of the symdb process with rlimits
#   spawn    207182b: the symdb-indexer executable, posix_spawn, rlimits,
#            the caller's environment, no filter
#   sandbox  HEAD: the same plus an empty environment, its own process
#            group, NPROC/NOFILE, NO_NEW_PRIVS and the seccomp filter
# Inputs: 50 small C programs compiled here with -g (distinct build-ids),
# one `symdb build` of all 50 (serial: one indexer after another); and the
# pyenv libpython3.11.so.1.0 (23 MB, DWARF), one build.
# Prints a Markdown table on stdout; raw lines go to WORK/raw.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=9 work=/tmp/symdb-sandbox-cost
revs=(fork=cedc4de spawn=207182b sandbox=HEAD)
user_revs=()
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--rev) user_revs+=("$2"); shift 2 ;;
	*) echo "sandbox_cost.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
((${#user_revs[@]})) && revs=("${user_revs[@]}")
mkdir -p "$work"
raw=$work/raw.txt
: > "$raw"

# build TAG REV: a clean export of REV, Release (kept when WORK already
# holds that revision's build)
build() {
	local tag=$1 rev=$2 src=$work/src-$1 bld=$work/build-$1 id
	id=$(git -C "$root" rev-parse --short "$rev")
	if [ "$(cat "$work/rev-$tag" 2>/dev/null)" != "$id" ] || [ ! -x "$bld/tools/symdb" ]; then
		rm -rf "$src" "$bld" && mkdir -p "$src"
		git -C "$root" archive "$rev" | tar -x -C "$src"
		cmake -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=Release -DSYMDB_BUILD_TESTS=OFF >/dev/null
		cmake --build "$bld" -j2 >/dev/null
		echo "$id" > "$work/rev-$tag"
	fi
	echo "rev $tag=$id" >> "$raw"
}
tags=()
for tr in "${revs[@]}"; do
	tags+=("${tr%%=*}")
	build "${tr%%=*}" "${tr#*=}"
done

# 50 small programs, each its own build-id
small=$work/small
mkdir -p "$small"
for i in $(seq -w 1 50); do
	[ -x "$small/p$i" ] && continue
	printf 'static int f%s(int x) { return x * %d + 1; }\nint main(int c, char **v) { (void)v; return f%s(c); }\n' \
		"$i" "$((10#$i))" "$i" > "$small/p$i.c"
	cc -g -O1 -o "$small/p$i" "$small/p$i.c"
done
pydir=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')
libpython=$pydir/libpython3.11.so.1.0

# one TAG WHAT: one `symdb build` into a fresh database; appends a raw line
one() {
	local tag=$1 what=$2 db=$work/db-$1 r=$work/ru
	rm -rf "$db"
	local load
	load=$(cut -d' ' -f1 /proc/loadavg)
	if [ "$what" = small ]; then
		python3 "$root/bench/rusage.py" "$r" -- "$work/build-$tag/tools/symdb" --db "$db" \
			build -q "$small"/p?? >/dev/null
	else
		python3 "$root/bench/rusage.py" "$r" -- "$work/build-$tag/tools/symdb" --db "$db" \
			build -q "$libpython" >/dev/null
	fi
	echo "$tag $what $(cat "$r") $load" >> "$raw"
}

for ((k = 0; k < runs; k++)); do
	n=${#tags[@]}
	for ((j = 0; j < n; j++)); do
		t=${tags[$(((j + k) % n))]}
		one "$t" small
		one "$t" libpython
	done
done

python3 - "$raw" "${tags[@]}" <<'EOF'
import statistics, sys
raw, tags = sys.argv[1], sys.argv[2:]
rows = {}
revs = {}
for line in open(raw):
    f = line.split()
    if f[0] == "rev":
        k, v = f[1].split("=")
        revs[k] = v
        continue
    tag, what, wall, user, sys_, rss, load = f
    rows.setdefault((tag, what), []).append((float(wall), float(user) + float(sys_), float(load)))
def fmt(xs, scale, unit):
    m = statistics.median(xs)
    return f"{m*scale:.1f} {unit} ({min(xs)*scale:.1f}-{max(xs)*scale:.1f})"
print("| input | revision | wall, median (min-max) | CPU user+sys | per input, wall / CPU | load avg (median, range) | runs |")
print("|---|---|---|---|---|---|---|")
for what, n in (("small", 50), ("libpython", 1)):
    for t in tags:
        xs = rows.get((t, what), [])
        if not xs:
            continue
        w = [x[0] for x in xs]; c = [x[1] for x in xs]; l = [x[2] for x in xs]
        per = f"{statistics.median(w)/n*1000:.2f} / {statistics.median(c)/n*1000:.2f} ms"
        name = "50 small programs" if what == "small" else "libpython3.11.so.1.0"
        print(f"| {name} | {t} `{revs.get(t, '?')}` | {fmt(w, 1000, 'ms')} | {fmt(c, 1000, 'ms')} | {per} "
              f"| {statistics.median(l):.2f} ({min(l):.2f}-{max(l):.2f}) | {len(xs)} |")
EOF
