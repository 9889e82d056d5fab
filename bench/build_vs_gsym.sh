#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# build_vs_gsym.sh SYMDB [RUNS] [WORK] [IMAGES]: symdb build against
# llvm-gsymutil-14 --convert alone, with one-thread rows (RESULTS.md's
# build rows come from `run.sh --only build`, which has no one-thread rows;
# this is the indexer's profiling aid).  IMAGES: a comma-separated subset of
# libpython,libc,libstdcxx,ceph-osd (default all; libc with libc6-dbg, the
# libstdc++ debug build, ceph-osd with ceph-osd-dbg: 624 MB of DWARF, bench
# only, skipped with a message when missing: apt-get install -y ceph-osd
# ceph-osd-dbg).  symdb gets the binary (its debug file found by build-id),
# gsymutil the file holding the DWARF.  Per image: symdb build and
# gsymutil at their default thread counts, then both with one thread; RUNS
# rounds (default 5) after one untimed warm-up round; each round runs every
# command once, interleaved, so that a change of load hits them alike; a
# fresh output every run.  Prints per command the median and spread
# (min-max) of wall and CPU (user+sys of the waited-for process tree, from
# wait4 rusage through /usr/bin/time), the largest peak RSS, and the load
# average beside each run; then symdb / gsymutil ratios of the medians.
set -euo pipefail
symdb=${1:?usage: build_vs_gsym.sh SYMDB [RUNS] [WORK] [IMAGES]}
runs=${2:-5}
work=${3:-/tmp/symdb-build-bench}
images=${4:-libpython,libc,libstdcxx,ceph-osd}
gsym=llvm-gsymutil-14
command -v "$gsym" >/dev/null || { echo "build_vs_gsym: $gsym missing (apt-get install -y llvm-14)"; exit 1; }
mkdir -p "$work"
# debug_of BIN: the .debug file of BIN's build-id, or nothing.
debug_of() {
	local bid
	bid=$(readelf -n "$1" 2>/dev/null | awk '/Build ID/ {print $3}')
	[[ -n $bid && -f /usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug ]] &&
		echo "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
lo() { printf '%s\n' "$@" | sort -g | head -1; }
hi() { printf '%s\n' "$@" | sort -g | tail -1; }

# compare NAME BIN DWARF: the rounds and the summary of one image.
compare() {
	local name=$1 bin=$2 dbg=$3 i t w u s m c load cmd
	echo "== $name: $bin; DWARF: $dbg"
	declare -A W C R
	local tools=(symdb gsym symdb_t1 gsym_t1)
	for t in "${tools[@]}"; do W[$t]=""; C[$t]=""; R[$t]=0; done
	for ((i = 0; i <= runs; i++)); do
		for t in "${tools[@]}"; do
			rm -rf "$work/db" "$work/out.gsym"
			case $t in
			symdb) cmd=("$symdb" build --db "$work/db" "$bin") ;;
			symdb_t1) cmd=("$symdb" build --db "$work/db" --threads 1 "$bin") ;;
			gsym) cmd=("$gsym" --convert "$dbg" --out-file "$work/out.gsym") ;;
			gsym_t1) cmd=("$gsym" --convert "$dbg" --out-file "$work/out.gsym" --num-threads=1) ;;
			esac
			load=$(cut -d' ' -f1 /proc/loadavg)
			/usr/bin/time -o "$work/time" -f '%e %U %S %M' "${cmd[@]}" >/dev/null 2>"$work/err" ||
				{ echo "build_vs_gsym: $name $t failed:"; cat "$work/err"; exit 1; }
			((i == 0)) && continue # warm-up: page cache
			read -r w u s m <"$work/time"
			c=$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')
			printf 'run %d %-9s wall %6.2f s  cpu %6.2f s  rss %5d MiB  load %s\n' "$i" "$t" "$w" "$c" $((m / 1024)) "$load"
			W[$t]+="$w "
			C[$t]+="$c "
			((m > R[$t])) && R[$t]=$m
		done
	done
	# shellcheck disable=SC2086 # word lists on purpose
	for t in "${tools[@]}"; do
		printf '%-10s %-9s wall %6.2f s (%.2f-%.2f)  cpu %6.2f s (%.2f-%.2f)  rss %5d MiB\n' "$name" "$t" \
			"$(median ${W[$t]})" "$(lo ${W[$t]})" "$(hi ${W[$t]})" \
			"$(median ${C[$t]})" "$(lo ${C[$t]})" "$(hi ${C[$t]})" $((R[$t] / 1024))
	done
	local p a b
	# shellcheck disable=SC2086
	for p in "symdb gsym" "symdb_t1 gsym_t1"; do
		read -r a b <<<"$p"
		awk -v n="$name $a/$b" -v w1="$(median ${W[$a]})" -v w2="$(median ${W[$b]})" \
			-v c1="$(median ${C[$a]})" -v c2="$(median ${C[$b]})" -v r1="${R[$a]}" -v r2="${R[$b]}" \
			'BEGIN {printf "%-26s wall %.2fx  cpu %.2fx  rss %.2fx\n", n, w1 / w2, c1 / c2, r1 / r2}'
	done
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
pylib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')/libpython3.11.so.1.0
libc=/lib/x86_64-linux-gnu/libc.so.6
stdcxx=/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30
for name in ${images//,/ }; do
	case $name in
	libpython) compare libpython "$pylib" "$pylib" ;;
	libc) compare libc "$libc" "$(debug_of "$libc")" ;;
	libstdcxx) compare libstdcxx "$stdcxx" "$stdcxx" ;;
	ceph-osd)
		if [[ -x /usr/bin/ceph-osd && -n $(debug_of /usr/bin/ceph-osd) ]]; then
			compare ceph-osd /usr/bin/ceph-osd "$(debug_of /usr/bin/ceph-osd)"
		else
			echo "== ceph-osd: skipped: apt-get install -y ceph-osd ceph-osd-dbg"
		fi ;;
	*) echo "build_vs_gsym: unknown image $name" >&2; exit 2 ;;
	esac
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
