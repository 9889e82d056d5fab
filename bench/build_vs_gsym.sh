#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# build_vs_gsym.sh SYMDB [RUNS] [WORK]: the build rows of RESULTS.md alone.
# For libpython, libc (+ libc6-dbg) and the libstdc++ debug build, runs
#   symdb build (default threads), symdb build --threads 1,
#   llvm-gsymutil-14 --convert (default threads), --num-threads=1
# RUNS times each (default 5), interleaved (one of each per round, so load
# changes hit all four alike), fresh output every run, after one untimed
# warm-up round; prints the median wall and CPU (user+sys) seconds and the
# peak RSS (max over the runs, /usr/bin/time), plus the load average.
set -euo pipefail
symdb=${1:?usage: build_vs_gsym.sh SYMDB [RUNS] [WORK]}
runs=${2:-5}
work=${3:-/tmp/symdb-build-bench}
mkdir -p "$work"
pylib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')/libpython3.11.so.1.0
libc=/lib/x86_64-linux-gnu/libc.so.6
bid=$(readelf -n "$libc" | awk '/Build ID/ {print $3}')
libc_dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
stdcxx=/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for spec in "libpython|$pylib|$pylib" "libc|$libc|$libc_dbg" "libstdcxx|$stdcxx|$stdcxx"; do
	IFS='|' read -r name bin dwarf <<<"$spec"
	declare -A W C R
	tools=(symdb symdb_t1 gsym gsym_t1)
	for t in "${tools[@]}"; do W[$t]=""; C[$t]=""; R[$t]=0; done
	for ((i = 0; i <= runs; i++)); do
		for t in "${tools[@]}"; do
			rm -rf "$work/db" "$work/out.gsym"
			case $t in
			symdb) cmd=("$symdb" build --db "$work/db" "$bin") ;;
			symdb_t1) cmd=("$symdb" build --db "$work/db" --threads 1 "$bin") ;;
			gsym) cmd=(llvm-gsymutil-14 --convert "$dwarf" --out-file "$work/out.gsym") ;;
			gsym_t1) cmd=(llvm-gsymutil-14 --convert "$dwarf" --out-file "$work/out.gsym" --num-threads=1) ;;
			esac
			/usr/bin/time -o "$work/time" -f '%e %U %S %M' "${cmd[@]}" >/dev/null 2>&1
			((i == 0)) && continue # warm-up
			read -r w u s m <"$work/time"
			W[$t]+="$w "
			C[$t]+="$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}') "
			((m > R[$t])) && R[$t]=$m
		done
	done
	for t in "${tools[@]}"; do
		# shellcheck disable=SC2086 # word lists on purpose
		printf '%-10s %-9s wall %6.3f s  cpu %6.3f s  rss %4d MiB\n' "$name" "$t" \
			"$(median ${W[$t]})" "$(median ${C[$t]})" $((R[$t] / 1024))
	done
	unset W C R
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
