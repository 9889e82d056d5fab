#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare_revs.sh [--old REV] [--new REV] [--runs N] [--work DIR] [--size N]
#                  [--kinds profile,uniform]
#
# Old symdb against new symdb, like for like: the same binaries, the same
# address files, the same output sink (a file in WORK for both), the same
# build flags (Release, from a clean `git archive` of each revision), runs
# interleaved (the order alternates each round), medians with min and max,
# CPU time from rusage, the load average beside each figure.
#
# Three measurements per binary and revision:
#   lib  bench_resolve resolve (the library through symdb.h: full inline
#        chain + file:line, no printing), CPU time of its timing thread;
#   cli  `symdb query --obj BIN < ADDRS > FILE` (LLVM style, demangled, the
#        whole process), user+sys CPU and max RSS from the child's rusage (bench/rusage.py).
#   build `symdb build BIN` into a fresh database: wall, user+sys CPU (the
#        process and what it waited for), max RSS.
# The two revisions' CLI outputs must be byte-identical; the script says so
# and stops if they are not.
#
# Defaults: --old HEAD~1 --new HEAD --runs 7 --size 1000000, WORK
# /tmp/symdb-revs.  Binaries: the pyenv libpython3.11.so.1.0 and Debian's
# libc.so.6 (with libc6-dbg's debug file for the address set), address sets
# from gen_addrs.py of each of --kinds (default profile: profile-like; uniform:
# uniform over the text); lib and cli are measured on each set, build once
# per binary.  Prints a Markdown table on stdout; raw lines go to
# WORK/raw.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=HEAD~1 new=HEAD runs=7 work=/tmp/symdb-revs size=1000000 kinds=profile
while [ $# -gt 0 ]; do
	case $1 in
	--old) old=$2; shift 2 ;;
	--new) new=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--kinds) kinds=$2; shift 2 ;;
	*) echo "compare_revs.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
mkdir -p "$work"
raw=$work/raw.txt
: > "$raw"

# build TAG REV: a clean export of REV, Release, CLI + library benchmark.
build() {
	local tag=$1 rev=$2 src=$work/src-$1 bld=$work/build-$1
	rm -rf "$src" && mkdir -p "$src"
	git -C "$root" archive "$rev" | tar -x -C "$src"
	cmake -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=Release -DSYMDB_BUILD_BENCH=ON \
		-DSYMDB_BUILD_TESTS=OFF >/dev/null
	cmake --build "$bld" -j2 >/dev/null # everything: newer trees need symdb-indexer
	echo "rev $tag=$(git -C "$root" rev-parse --short "$rev")" >> "$raw"
}
build old "$old"
build new "$new"

pydir=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')
libpython=$pydir/libpython3.11.so.1.0
libc=/lib/x86_64-linux-gnu/libc.so.6
libc_debug=$(python3 "$root/bench/elfinfo.py" debug-file "$libc" 2>/dev/null || true)
sets=$work/sets
mkdir -p "$sets"
python3 "$root/bench/gen_addrs.py" "$libpython" "$sets" --name libpython \
	--sizes "$size" --kinds "$kinds" >/dev/null
if [ -n "$libc_debug" ] && [ -f "$libc_debug" ]; then
	python3 "$root/bench/gen_addrs.py" "$libc" "$sets" --name libc --symfile "$libc_debug" \
		--sizes "$size" --kinds "$kinds" >/dev/null
	bins="libpython libc"
else
	echo "compare_revs.sh: no libc6-dbg debug file for $libc: libc rows skipped" >&2
	bins="libpython"
fi
binpath() { if [ "$1" = libc ]; then echo "$libc"; else echo "$libpython"; fi; }

for tag in old new; do
	rm -rf "$work/db-$tag"
	for b in $bins; do
		"$work/build-$tag/tools/symdb" --db "$work/db-$tag" build "$(binpath "$b")" >/dev/null
	done
done

load() { cut -d' ' -f1 /proc/loadavg; }

# one TAG BIN KIND: one library and one CLI measurement on BIN's KIND set,
# and with the first kind one build of BIN, appended to raw.
one() {
	local tag=$1 b=$2 kind=$3 bin addrs out line
	bin=$(binpath "$b")
	addrs=$sets/$b.$kind.$size.unsorted.txt
	out=$work/out-$tag-$b-$kind.txt
	line=$("$work/build-$tag/bench/bench_resolve" resolve --db "$work/db-$tag" --obj "$bin" \
		--runs 1 "$addrs" | grep ' resolve ' | tail -1) ||
		{ echo "compare_revs.sh: $tag: bench_resolve on $b failed" >&2; exit 1; }
	echo "lib tag=$tag bin=$b/$kind load=$(load) $(echo "$line" | tr ' ' '\n' |
		grep -E '^(median_s|cpu_median_s|sort_median_s)=' | tr '\n' ' ')" >> "$raw"
	local l0
	l0=$(load)
	python3 "$root/bench/rusage.py" "$work/time.txt" -- \
		"$work/build-$tag/tools/symdb" --db "$work/db-$tag" query --obj "$bin" \
		< "$addrs" > "$out"
	read -r wall user sys rss < "$work/time.txt"
	echo "cli tag=$tag bin=$b/$kind load=$l0 wall=$wall user=$user sys=$sys rss_kb=$rss" >> "$raw"
	[ "$kind" = "${kinds%%,*}" ] || return 0
	# indexing: a fresh database each time (the CPU includes the indexer
	# process of a tree that spawns one: it is waited for)
	rm -rf "$work/db-build-$tag"
	l0=$(load)
	python3 "$root/bench/rusage.py" "$work/time.txt" -- \
		"$work/build-$tag/tools/symdb" --db "$work/db-build-$tag" build "$bin" > /dev/null
	read -r wall user sys rss < "$work/time.txt"
	echo "build tag=$tag bin=$b load=$l0 wall=$wall user=$user sys=$sys rss_kb=$rss" >> "$raw"
}

for ((i = 1; i <= runs + 1; i++)); do
	for b in $bins; do
		for k in ${kinds//,/ }; do
			if ((i % 2)); then one old "$b" "$k"; one new "$b" "$k"; else one new "$b" "$k"; one old "$b" "$k"; fi
		done
	done
	# the first round is a warm-up (page cache, CPU frequency)
	if ((i == 1)); then sed -i '/^lib \|^cli \|^build /d' "$raw"; fi
done

for b in $bins; do
	for k in ${kinds//,/ }; do
		if ! cmp -s "$work/out-old-$b-$k.txt" "$work/out-new-$b-$k.txt"; then
			echo "compare_revs.sh: $b $k: old and new 'symdb query' outputs differ" >&2
			exit 1
		fi
	done
done

python3 - "$raw" "$bins" "$kinds" <<'EOF'
import statistics, sys
raw, bins, kinds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(",")
rows = []
revs = {}
for line in open(raw):
    f = line.split()
    if f[0] == "rev":
        k, v = f[1].split("=")
        revs[k] = v
        continue
    d = dict(x.split("=", 1) for x in f[1:])
    d["kind"] = f[0]
    rows.append(d)

def stat(kind, tag, b, key):
    v = [float(r[key]) for r in rows if r["kind"] == kind and r["tag"] == tag and r["bin"] == b]
    return statistics.median(v), min(v), max(v), len(v)

def cpu(r):
    return float(r["user"]) + float(r["sys"])
for r in rows:
    if r["kind"] in ("cli", "build"):
        r["cpu"] = cpu(r)
loads = [float(r["load"]) for r in rows]
print(f"old = {revs['old']}, new = {revs['new']}; load average during the runs: "
      f"median {statistics.median(loads):.2f}, range {min(loads):.2f}-{max(loads):.2f}")
print()
print("| binary | measure | old median (min-max) | new median (min-max) | new/old | runs |")
print("|---|---|---|---|---|---|")
per_set = (("lib", "cpu_median_s", "library CPU s"),
           ("lib", "median_s", "library wall s (incl. sort)"),
           ("cli", "cpu", "CLI user+sys s"),
           ("cli", "rss_kb", "CLI max RSS KiB"))
per_bin = (("build", "wall", "build wall s"),
           ("build", "cpu", "build user+sys s"),
           ("build", "rss_kb", "build max RSS KiB"))
cells = [(f"{b}/{k}", m) for b in bins for k in kinds for m in per_set]
cells += [(b, m) for b in bins for m in per_bin]
for b, (kind, key, label) in cells:
        o = stat(kind, "old", b, key)
        n = stat(kind, "new", b, key)
        ratio = n[0] / o[0] if o[0] else float("nan")
        fmt = "{:.0f}" if key == "rss_kb" else "{:.4f}"
        cell = lambda s: f"{fmt.format(s[0])} ({fmt.format(s[1])}-{fmt.format(s[2])})"
        print(f"| {b} | {label} | {cell(o)} | {cell(n)} | {ratio:.3f} | {o[3]} |")
EOF
