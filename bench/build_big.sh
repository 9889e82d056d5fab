#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# build_big.sh SYMDB [RUNS] [WORK]: the big C++ build row (issue 18 item 5).
# symdb build of /usr/bin/ceph-osd (its .debug file: 624 MB of DWARF)
# against llvm-gsymutil-14 --convert of that .debug file, both at their
# default thread counts, then both with one thread.  RUNS rounds (default
# 5) after one untimed warm-up round; each round runs every command once,
# interleaved, so that a change of load hits them alike; a fresh output
# every run.  Prints per command the median and spread (min-max) of wall
# and CPU (user+sys of the waited-for process tree, from wait4 rusage
# through /usr/bin/time), the largest peak RSS, and the load average beside
# each run; then symdb / gsymutil ratios of the medians.
#
# Needs the Debian packages ceph-osd and ceph-osd-dbg (bench only, never a
# test): apt-get install -y ceph-osd ceph-osd-dbg.  Skips with a message
# (exit 0) when they are missing.
set -euo pipefail
symdb=${1:?usage: build_big.sh SYMDB [RUNS] [WORK]}
runs=${2:-5}
work=${3:-/tmp/symdb-build-big}
bin=/usr/bin/ceph-osd
gsym=llvm-gsymutil-14
if [[ ! -x $bin ]]; then
	echo "build_big: skipped: $bin missing (apt-get install -y ceph-osd ceph-osd-dbg)"
	exit 0
fi
bid=$(readelf -n "$bin" 2>/dev/null | awk '/Build ID/ {print $3}')
dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
if [[ -z $bid || ! -f $dbg ]]; then
	echo "build_big: skipped: no debug file for $bin (apt-get install -y ceph-osd-dbg)"
	exit 0
fi
if ! command -v "$gsym" >/dev/null; then
	echo "build_big: skipped: $gsym missing (apt-get install -y llvm-14)"
	exit 0
fi
mkdir -p "$work"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
lo() { printf '%s\n' "$@" | sort -g | head -1; }
hi() { printf '%s\n' "$@" | sort -g | tail -1; }

echo "image: $bin; DWARF: $dbg"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A W C R
tools=(symdb gsym symdb_t1 gsym_t1)
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
			{ echo "build_big: $t failed:"; cat "$work/err"; exit 1; }
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
	printf '%-9s wall %6.2f s (%.2f-%.2f)  cpu %6.2f s (%.2f-%.2f)  rss %5d MiB\n' "$t" \
		"$(median ${W[$t]})" "$(lo ${W[$t]})" "$(hi ${W[$t]})" \
		"$(median ${C[$t]})" "$(lo ${C[$t]})" "$(hi ${C[$t]})" $((R[$t] / 1024))
done
# shellcheck disable=SC2086
for p in "symdb gsym" "symdb_t1 gsym_t1"; do
	read -r a b <<<"$p"
	awk -v n="$a/$b" -v w1="$(median ${W[$a]})" -v w2="$(median ${W[$b]})" \
		-v c1="$(median ${C[$a]})" -v c2="$(median ${C[$b]})" -v r1="${R[$a]}" -v r2="${R[$b]}" \
		'BEGIN {printf "%-16s wall %.2fx  cpu %.2fx  rss %.2fx\n", n, w1 / w2, c1 / c2, r1 / r2}'
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
