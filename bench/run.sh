#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run.sh - the symdb benchmark, in one command (method: bench/README.md).
#
#   bench/run.sh            full run (~15 min on 2 cores), writes bench/RESULTS.md
#                           (+ bench/results-raw.txt; bench/results-notes.md, the
#                           hand-written analysis, is appended when present)
#   bench/run.sh --quick    libpython only, small sets, 3 runs (~3 min), writes
#                           $WORK/RESULTS-quick.md
# Options:
#   --work DIR     scratch directory (default /tmp/symdb-bench): address sets,
#                  databases, .gsym files, raw measurements (raw.txt)
#   --build DIR    build directory (default SRC/build-bench)
#   --rev REV      measure git revision REV (exported with git archive into
#                  WORK/src and built in WORK/build) instead of the work tree
#   --out FILE     where to write the report
#   --runs N       timed runs per measurement (median reported; default 5)
#
# It builds what it needs (Release, -DSYMDB_BUILD_BENCH=ON), prepares the
# binaries (pyenv libpython3.11, Debian libc.so.6 + libc6-dbg, the unstripped
# libstdc++ debug build from libstdc++6-12-dbg), generates seeded address
# sets, measures symdb and its peers in the same run, and renders the report
# with bench/report.py.  Every raw number is in WORK/raw.txt.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CMDLINE="bench/run.sh${*:+ $*}"
SRC=$(cd "$HERE/.." && pwd)
WORK=/tmp/symdb-bench
BUILD=
REV=
OUT=
RUNS=5
QUICK=0
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) QUICK=1 ;;
	--work) WORK=$2; shift ;;
	--build) BUILD=$2; shift ;;
	--rev) REV=$2; shift ;;
	--out) OUT=$2; shift ;;
	--runs) RUNS=$2; shift ;;
	-h|--help) sed -n '3,/^set -euo/p' "$0" | grep '^#' | cut -c3-; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
RAW=$WORK/raw.txt
: > "$RAW"
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# ---- build -----------------------------------------------------------------
if [ -n "$REV" ]; then
	rm -rf "$WORK/src" && mkdir -p "$WORK/src"
	git -C "$SRC" archive "$REV" | tar -x -C "$WORK/src"
	COMMIT=$(git -C "$SRC" rev-parse --short "$REV")
	SRC_BUILD=$WORK/src
	BUILD=${BUILD:-$WORK/build}
else
	COMMIT=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
	SRC_BUILD=$SRC
	BUILD=${BUILD:-$SRC/build-bench}
fi
log "building $COMMIT in $BUILD (Release)"
cmake -S "$SRC_BUILD" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSYMDB_BUILD_BENCH=ON \
      -DSYMDB_BUILD_TESTS=OFF > "$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log"; exit 1; }
cmake --build "$BUILD" -j2 --target symdb_cli bench_resolve gsym_lookup \
      > "$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; exit 1; }
SYMDB=$BUILD/tools/symdb
BR=$BUILD/bench/bench_resolve
GL=$BUILD/bench/gsym_lookup

# ---- binaries ----------------------------------------------------------------
# name | binary given to symdb/llvm-symbolizer/addr2line | file with .symtab and
# DWARF (what gen_addrs.py and llvm-gsymutil read: gsymutil does not follow
# build-ids to /usr/lib/debug, so for libc it gets libc6-dbg's file)
PYLIB=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')/libpython3.11.so.1.0
LIBC=/lib/x86_64-linux-gnu/libc.so.6
LIBC_DBG=$(python3 "$HERE/elfinfo.py" debug-file "$LIBC")
STDCXX=/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30
BINS=("libpython|$PYLIB|$PYLIB")
if [ "$QUICK" = 0 ]; then
	[ -n "$LIBC_DBG" ] || { echo "run.sh: libc6-dbg debug file for $LIBC not found" >&2; exit 1; }
	[ -f "$STDCXX" ] || { echo "run.sh: $STDCXX not found (libstdc++6-12-dbg)" >&2; exit 1; }
	BINS+=("libc|$LIBC|$LIBC_DBG" "libstdcxx|$STDCXX|$STDCXX")
	SIZES=1000,100000,1000000; BIG=1000000; MID=100000; SMALL=1000
else
	RUNS=3
	SIZES=1000,10000,100000; BIG=100000; MID=10000; SMALL=1000
fi
KINDS="profile uniform starts"

# ---- helpers -------------------------------------------------------------------
# emit TAGS... -- CMD...: run CMD, prefix each output line with the tags.
emit() {
	local tags=()
	while [ "$1" != "--" ]; do tags+=("$1"); shift; done
	shift
	# A failed measurement is logged and the run goes on: the report shows a gap.
	{ "$@" || log "FAILED ($?): $*"; } | while IFS= read -r line; do echo "${tags[*]} $line"; done \
		| tee -a "$RAW" >&2
}

# timed N TAGS... -- CMD...: run CMD N times under /usr/bin/time (stdin and
# stdout as given by the caller through STDIN_FILE/STDOUT_FILE), record
# medians of wall and user+sys seconds and the max peak RSS.
timed() {
	local n=$1; shift
	local tags=()
	while [ "$1" != "--" ]; do tags+=("$1"); shift; done
	shift
	local tf=$WORK/time.$$ i walls=() cpus=() rss=0
	TIMED_FAILED=0
	for ((i = 0; i < n; i++)); do
		[ -z "${PRE_CMD:-}" ] || eval "$PRE_CMD"
		/usr/bin/time -o "$tf" -f '%e %U %S %M' "$@" \
			< "${STDIN_FILE:-/dev/null}" > "${STDOUT_FILE:-/dev/null}" 2> "$WORK/stderr.last" \
			|| { log "FAILED: $* (see $WORK/stderr.last)"; tail -3 "$WORK/stderr.last" >&2
			     TIMED_FAILED=1; return 0; }
		read -r w u s m < <(tail -1 "$tf")
		walls+=("$w"); cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')")
		if [ "$m" -gt "$rss" ]; then rss=$m; fi
	done
	local line
	line="${tags[*]} runs=$n wall_median_s=$(median "${walls[@]}") cpu_median_s=$(median "${cpus[@]}") maxrss_kB=$rss"
	echo "$line" | tee -a "$RAW" >&2
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# compare_out TAGS...: byte comparison of out.llvm and out.symdb; on a difference
# records the first differing line of each.
compare_out() {
	local same=0 ln
	cmp -s "$WORK/out.llvm" "$WORK/out.symdb" && same=1
	[ "$TIMED_FAILED" = 0 ] || same=error
	echo "identical $* same=$same lines=$(wc -l < "$WORK/out.llvm")" | tee -a "$RAW" >&2
	if [ "$same" = 0 ]; then
		ln=$(cmp "$WORK/out.llvm" "$WORK/out.symdb" 2>/dev/null | sed -n 's/.* line \([0-9]*\).*/\1/p' || true)
		ln=${ln:-1}
		printf 'mismatch %s line=%s differing_lines=%s llvm=%q symdb=%q\n' "$*" "$ln" \
			"$( (diff "$WORK/out.llvm" "$WORK/out.symdb" || true) | grep -c '^<' || true)" \
			"$(sed -n "${ln}p" "$WORK/out.llvm" | cut -c1-300)" \
			"$(sed -n "${ln}p" "$WORK/out.symdb" | cut -c1-300)" | tee -a "$RAW" >&2
	fi
}

addrs() { echo "$WORK/addrs/$1.$2.$3.$4.txt"; }   # name kind size order

# ---- machine -------------------------------------------------------------------
{
	echo "machine nproc=$(nproc) model=\"$(lscpu | sed -n 's/^Model name: *//p' | head -1)\""
	echo "machine mem_kB=$(awk '/MemTotal/ {print $2}' /proc/meminfo) loadavg_start=\"$(cut -d' ' -f1-3 /proc/loadavg)\""
	echo "machine date=\"$(date -u '+%Y-%m-%d %H:%M UTC')\" commit=$COMMIT quick=$QUICK runs=$RUNS"
	echo "machine versions=\"$(llvm-symbolizer-14 --version | sed -n 's/.*LLVM version //p' | head -1); $(addr2line --version | head -1); gcc $(gcc -dumpfullversion)\""
} | tee -a "$RAW" >&2

for spec in "${BINS[@]}"; do
	IFS='|' read -r name bin dwarf <<< "$spec"
	log "$name: address sets, sizes, builds"
	if [ ! -f "$(addrs "$name" starts "$BIG" sorted)" ] || [ "$HERE/gen_addrs.py" -nt "$(addrs "$name" starts "$BIG" sorted)" ]; then
		python3 "$HERE/gen_addrs.py" --name "$name" --symfile "$dwarf" --sizes "$SIZES" \
			"$bin" "$WORK/addrs" >&2
	fi

	# -- build: symdb vs llvm-gsymutil (fresh output each run) --
	db=$WORK/db.$name
	PRE_CMD="rm -rf '$db'" timed "$RUNS" build bin="$name" tool=symdb -- "$SYMDB" build --db "$db" "$bin"
	PRE_CMD="rm -f '$WORK/$name.gsym'" timed "$RUNS" build bin="$name" tool=gsymutil threads=default -- \
		llvm-gsymutil-14 --convert "$dwarf" --out-file "$WORK/$name.gsym"
	size_mt=$(stat -c %s "$WORK/$name.gsym")
	PRE_CMD="rm -f '$WORK/$name.gsym'" timed "$RUNS" build bin="$name" tool=gsymutil threads=1 -- \
		llvm-gsymutil-14 --convert "$dwarf" --out-file "$WORK/$name.gsym" --num-threads=1
	idx=$(find "$db/images" -name '*.symdb' 2>/dev/null | head -1 || true)
	idx=${idx:-/dev/null}
	read -r dstored dinfl < <(python3 "$HERE/elfinfo.py" dwarf-bytes "$dwarf")
	echo "size bin=$name symdb_bytes=$(stat -c %s "$idx") gsym_bytes=$(stat -c %s "$WORK/$name.gsym") gsym_mt_bytes=$size_mt dwarf_stored_bytes=$dstored dwarf_bytes=$dinfl binary_bytes=$(stat -c %s "$bin")" | tee -a "$RAW" >&2

	# -- library loops: symdb vs GSYM in-process --
	log "$name: library loops"
	for kind in $KINDS; do
		for order in sorted unsorted; do
			for n in "$MID" "$BIG"; do
				emit lib bin="$name" kind="$kind" order="$order" -- \
					"$BR" resolve --db "$db" --obj "$bin" --runs "$RUNS" "$(addrs "$name" "$kind" "$n" "$order")"
			done
			# GSYM costs ~5 us/address: 1M only for the headline set.
			emit gsymloop bin="$name" kind="$kind" order="$order" -- \
				"$GL" time "$WORK/$name.gsym" "$(addrs "$name" "$kind" "$MID" "$order")" "$RUNS"
		done
	done
	if [ "$name" = libpython ]; then
		emit gsymloop bin="$name" kind=profile order=sorted -- \
			"$GL" time "$WORK/$name.gsym" "$(addrs "$name" profile "$BIG" sorted)" 3
		emit mt bin="$name" kind=profile -- \
			"$BR" mt --db "$db" --obj "$bin" --runs "$RUNS" --threads 1,2 "$(addrs "$name" profile "$BIG" sorted)"
	fi
	emit first bin="$name" -- "$BR" first --db "$db" --obj "$bin" --runs 21 "$(addrs "$name" profile "$BIG" unsorted)"
	emit rss bin="$name" kind=profile -- "$BR" rss --db "$db" --obj "$bin" "$(addrs "$name" profile "$BIG" sorted)"
	emit rss bin="$name" kind=uniform -- "$BR" rss --db "$db" --obj "$bin" "$(addrs "$name" uniform "$BIG" sorted)"

	# -- callgrind: instructions per address, symdb vs GSYM (stable on a busy machine) --
	log "$name: callgrind"
	for kind in profile uniform; do
		cgn=$MID; [ "$kind" = uniform ] && cgn=$SMALL   # GSYM on uniform is slow under valgrind
		f=$(addrs "$name" "$kind" "$cgn" sorted)
		for tool in symdb gsym; do
			if [ $tool = symdb ]; then
				cmd=("$BR" cg-resolve --db "$db" --obj "$bin" "$f"); fn=bench_loop_resolve
			else
				cmd=("$GL" cg "$WORK/$name.gsym" "$f"); fn=bench_gsym_loop
			fi
			ir=$(valgrind --tool=callgrind --toggle-collect=$fn --callgrind-out-file=/dev/null \
				"${cmd[@]}" 2>&1 >/dev/null | sed -n 's/.*Collected : *//p' || true)
			echo "callgrind bin=$name kind=$kind tool=$tool n=$cgn ir=$ir" | tee -a "$RAW" >&2
		done
	done

	# -- end to end: symdb query vs llvm-symbolizer-14 vs addr2line --
	log "$name: end to end"
	for kind in $KINDS; do
		for n in "$SMALL" "$MID"; do
			f=$(addrs "$name" "$kind" "$n" unsorted)
			lr=1; [ "$n" = "$SMALL" ] && lr=3   # the small run is mostly start-up: take a median
			STDIN_FILE=$f STDOUT_FILE=$WORK/out.llvm timed "$lr" e2e bin="$name" kind="$kind" n="$n" tool=llvm-symbolizer -- \
				llvm-symbolizer-14 --obj "$bin"
			STDIN_FILE=$f STDOUT_FILE=$WORK/out.symdb timed "$RUNS" e2e bin="$name" kind="$kind" n="$n" tool=symdb -- \
				"$SYMDB" query --db "$db" --obj "$bin"
			compare_out bin="$name" kind="$kind" n="$n" style=LLVM
			STDIN_FILE=$f timed "$lr" e2e bin="$name" kind="$kind" n="$n" tool=addr2line -- \
				addr2line -i -f -e "$bin"
		done
		f=$(addrs "$name" "$kind" "$BIG" unsorted)
		STDIN_FILE=$f timed "$RUNS" e2e bin="$name" kind="$kind" n="$BIG" tool=symdb -- \
			"$SYMDB" query --db "$db" --obj "$bin"
	done
	f=$(addrs "$name" profile "$SMALL" unsorted)
	for style in GNU JSON; do
		llvm-symbolizer-14 --obj "$bin" --output-style=$style < "$f" > "$WORK/out.llvm" || true
		TIMED_FAILED=0
		"$SYMDB" query --db "$db" --obj "$bin" --output-style=$style < "$f" > "$WORK/out.symdb" \
			|| TIMED_FAILED=1
		compare_out bin="$name" kind=profile n="$SMALL" style=$style
	done
done

# the floor does not depend on the binary
for n in "$MID" "$BIG"; do
	emit floor -- "$BR" floor --runs "$RUNS" "$(addrs libpython profile "$n" sorted)"
done
f=$(addrs libpython profile "$MID" sorted)
ir=$(valgrind --tool=callgrind --toggle-collect=bench_loop_floor --callgrind-out-file=/dev/null \
	"$BR" cg-floor "$f" 2>&1 >/dev/null | sed -n 's/.*Collected : *//p' || true)
echo "callgrind bin=any kind=profile tool=floor n=$MID ir=$ir" | tee -a "$RAW" >&2
echo "machine loadavg_end=\"$(cut -d' ' -f1-3 /proc/loadavg)\"" | tee -a "$RAW" >&2

if [ -z "$OUT" ]; then
	if [ "$QUICK" = 1 ]; then OUT=$WORK/RESULTS-quick.md; else OUT=$HERE/RESULTS.md; fi
fi
NOTES=()
[ "$QUICK" = 1 ] || [ ! -f "$HERE/results-notes.md" ] || NOTES=(--notes "$HERE/results-notes.md")
python3 "$HERE/report.py" "$RAW" --command "$CMDLINE" "${NOTES[@]}" > "$OUT"
# A full run keeps its raw numbers next to the report it produced.
[ "$QUICK" = 1 ] || [ "$OUT" != "$HERE/RESULTS.md" ] || cp "$RAW" "$HERE/results-raw.txt"
log "report: $OUT (raw numbers: $RAW)"
