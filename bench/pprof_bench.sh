#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pprof_bench.sh BUILD-DIR [WORK-DIR] [SAMPLES]: time to symbolize a
# SAMPLES-sample (default 1,000,000) unsymbolized pprof profile of
# libpython3.11 (pyenv's, DWARF 5, -O3: 100,000 distinct locations, Zipf-
# skewed stacks of 4 to 16 frames; bench/pprof_synth.go) with
#   symdb pprof IN -o OUT                      (the image indexed beforehand;
#                                               the build is timed apart)
#   pprof -symbolize=local -tools=DIR -proto IN > OUT
#                                              (DIR/llvm-symbolizer ->
#                                               llvm-symbolizer-14)
# both writing a gzip'd profile to a file.  Wall, user+system CPU and peak
# RSS from /usr/bin/time; the load average before and after each run is
# printed (this machine is shared: figures under load say so).  Then
# `pprof -top` of both outputs is compared (identical, or the diff).
set -euo pipefail
build=$(cd "${1:?usage: pprof_bench.sh BUILD-DIR [WORK-DIR] [SAMPLES]}" && pwd)
work=${2:-$build/bench-pprof}
samples=${3:-1000000}
symdb=$build/tools/symdb
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
export GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE=$work/gocache HOME=$work
export PPROF_BINARY_PATH=$work/no-such-dir
unset PPROF_TOOLS

pp=$work/pprof
[[ -x $pp ]] || go build -o "$pp" github.com/google/pprof
[[ -x $work/pprof_synth && $work/pprof_synth -nt $here/pprof_synth.go ]] ||
	go build -o "$work/pprof_synth" "$here/pprof_synth.go"
mkdir -p "$work/tools"
ln -sf "$(command -v llvm-symbolizer-14)" "$work/tools/llvm-symbolizer"

lib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')/libpython3.11.so.1.0
[[ -f $lib ]] || { echo "no $lib" >&2; exit 77; }
bid=$(readelf -n "$lib" | awk '/Build ID/ {print $3}')
# The executable segment: file offset, size; .text's file range.
read -r off size < <(readelf -lW "$lib" | awk '$1 == "LOAD" && / E / {print $2, $5; exit}')
read -r toff tsize < <(readelf -SW "$lib" | awk '{for (i = 1; i < NF; i++) if ($i == ".text") {print "0x"$(i+3), "0x"$(i+4); exit}}')
start=$((0x7f0000000000 + off))
limit=$((start + (size + 4095) / 4096 * 4096))
in=$work/python-$samples.pb.gz
[[ -s $in ]] || "$work/pprof_synth" -file "$lib" -buildid "$bid" -start "$start" \
	-limit "$limit" -offset "$off" -textlo "$((toff))" -texthi "$((toff + tsize))" \
	-samples "$samples" -o "$in"
echo "profile: $in ($(stat -c %s "$in") bytes gzip'd, $samples samples, image $lib)"

# run NAME CMD...: wall s, CPU s, max RSS KiB, and the load around it
run() {
	local name=$1 l0 l1
	shift
	l0=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@"
	l1=$(cut -d' ' -f1 /proc/loadavg)
	read -r wall usr sys rss <"$work/time"
	printf '%-28s wall %6.2f s  cpu %6.2f s  max RSS %5d MiB  (load %s -> %s)\n' \
		"$name" "$wall" "$(echo "$usr + $sys" | bc)" $((rss / 1024)) "$l0" "$l1"
}

db=$work/db
rm -rf "$db"
run "symdb build (once)" sh -c '"$@" >/dev/null' sh "$symdb" --db "$db" build "$lib"
for i in 1 2 3; do
	run "symdb pprof #$i" "$symdb" --db "$db" pprof "$in" -o "$work/symdb.pb.gz" 2>"$work/symdb.err"
done
cat "$work/symdb.err"
for i in 1 2; do
	run "pprof + llvm-symbolizer #$i" sh -c \
		'"$1" -tools="$2" -symbolize=local -proto "$3" >"$4" 2>"$4.err"' \
		sh "$pp" "$work/tools" "$in" "$work/llvm.pb.gz"
done
if diff <("$pp" -top -nodecount=200 "$work/llvm.pb.gz") \
	<("$pp" -top -nodecount=200 "$work/symdb.pb.gz") >"$work/top.diff"; then
	echo "pprof -top -nodecount=200: identical"
else
	echo "pprof -top -nodecount=200 differs ($(wc -l <"$work/top.diff") diff lines: $work/top.diff)"
fi
