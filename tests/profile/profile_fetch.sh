#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# profile_fetch.sh: `symdb pprof --upstream URL` and `symdb perf --upstream
# URL` with a second `symdb serve` as the index store.  The program
# (pprof_cpp.cc) is indexed in the store's database only and moved away,
# so a profile's mapping can be answered by its build-id alone, and only
# after fetching it:
#   - symdb pprof on an unsymbolized gperftools profile: pprof -top and
#     -traces of the result equal pprof's own route (llvm-symbolizer-14 on
#     the program, -tools); the store's access log has one GET of the
#     image's index file; a second run asks the store nothing; without
#     --upstream (a fresh database) the image is unknown, and with a store
#     nobody listens on, one line says why;
#   - symdb perf on perf script text naming the (gone) file with
#     --build-ids: the leaf is llvm-symbolizer-14's function on the program;
#     with a store nobody listens on, one line says why, as for pprof.
set -euo pipefail
export FIXTURES=${FIXTURES:-unused}
source "$(dirname "$0")/../fleet/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
S=$SCRATCH
t0=$(date +%s)

src=/usr/share/gocode/src/github.com/google/pprof
require go llvm-symbolizer-14 g++ curl
[[ -d $src ]] || { echo "SKIP: $src missing (golang-github-google-pprof-dev)"; exit 77; }
[[ -f /usr/include/gperftools/profiler.h ]] || { echo "SKIP: gperftools headers missing"; exit 77; }

# pprof, built once per build tree (shared with pprof.sh)
gobin=${SYMDB_BUILD:-$S}/tests/profile-go
mkdir -p "$gobin"
export GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= HOME=$S
export GOCACHE=${TMPDIR:-/tmp}/symdb-tests-gocache
export PPROF_BINARY_PATH=$S/no-such-dir
unset PPROF_TOOLS SYMDB_UPSTREAM DEBUGINFOD_URLS
pp=$gobin/pprof
[[ -x $pp ]] || go build -o "$pp" github.com/google/pprof || fail "building pprof"

# ---- the program, its profile, pprof's own answer ----
g++ -O2 -g -Wl,--build-id -o "$S/cppwork" "$here/pprof_cpp.cc" -lprofiler
CPUPROFILE_FREQUENCY=1000 "$S/cppwork" "$S/cpp.prof" 400 >/dev/null 2>&1 || fail "profiled run"
bid=$(readelf -n "$S/cppwork" | awk '/Build ID/ {print $3}')
"$pp" -proto -symbolize=none -buildid="$bid" "$S/cppwork" "$S/cpp.prof" >"$S/raw.pb.gz" 2>/dev/null ||
	fail "pprof -proto"
mkdir -p "$S/tools"
ln -s "$(command -v llvm-symbolizer-14)" "$S/tools/llvm-symbolizer"
"$pp" -tools="$S/tools" -symbolize=local -proto "$S/raw.pb.gz" >"$S/llvm.pb.gz" 2>/dev/null ||
	fail "pprof -symbolize=local"
"$pp" -top "$S/llvm.pb.gz" 2>&1 | grep -qF 'app::detail::Ring::spin' || fail "the oracle has no spin"

# perf: the address of Ring<unsigned long, 5>::spin + 3, as a file offset
# (the text segment's vaddr - offset is 0 for this layout: checked), and
# llvm-symbolizer-14's function there.
spin=$(nm "$S/cppwork" | awk '/ W _ZNK3app6detail4RingImLi5EE4spinEj$/ {print $1}')
[[ -n $spin ]] || fail "no spin symbol"
read -r tv to < <(readelf -lW "$S/cppwork" | awk '$1 == "LOAD" && / E / {print $3, $2; exit}')
((tv == to)) || fail "text segment vaddr $tv != offset $to: the perf addresses below assume them equal"
addr=$(printf '%x' $((0x$spin + 3)))
want=$(llvm-symbolizer-14 --obj "$S/cppwork" --functions=linkage --demangle "0x$addr" | head -1)
[[ $want == *spin* ]] || fail "llvm-symbolizer-14 at 0x$addr: $want"
gone=$S/gone/cppwork
cat >"$S/perf.txt" <<EOF
prog 4242/4242 100.000000: PERF_RECORD_MMAP2 4242/4242: [0x55d000001000(0x2000) @ 0x1000 fe:00 1234 0]: r-xp $gone
prog 4242/4242 100.000001:     250000 cpu-clock: 
	$(printf '%16s' "$addr") ($gone)

EOF
echo "$bid $gone" >"$S/buildids.txt"

# ---- the store: a symdb serve over a database holding the program ----
SYMDB_DIR=$S/store "$SYMDB" build "$S/cppwork" >/dev/null
node_serve_start "$S/store"
mv "$S/cppwork" "$S/cppwork.away"
index_gets() { grep -c "$bid" "$NODE_SERVE_LOG" || true; }

# ---- without --upstream: the image is unknown ----
SYMDB_DIR=$S/db0 "$SYMDB" pprof "$S/raw.pb.gz" -o "$S/none.pb.gz" 2>"$S/none.err" ||
	fail "symdb pprof without a source: $(cat "$S/none.err")"
grep -qE ', 1 unknown images: cppwork$' "$S/none.err" || fail "without --upstream: $(cat "$S/none.err")"

# ---- a store nobody listens on: one line, the image unknown, exit 0 ----
dead=$(dead_url)
SYMDB_DIR=$S/db0 "$SYMDB" pprof "$S/raw.pb.gz" --upstream "$dead" -o "$S/dead.pb.gz" 2>"$S/dead.err" ||
	fail "symdb pprof with a dead store: $(cat "$S/dead.err")"
[[ $(wc -l <"$S/dead.err") == 2 ]] && grep -qF "symdb: $bid: $dead/symdb/v1/" "$S/dead.err" &&
	grep -qE ', 1 unknown images: cppwork$' "$S/dead.err" || fail "dead store: $(cat "$S/dead.err")"

# ---- symdb pprof --upstream: fetched once, answered as pprof's route ----
SYMDB_DIR=$S/db "$SYMDB" pprof "$S/raw.pb.gz" --upstream "$NODE_SERVE_URL" -o "$S/sym.pb.gz" \
	2>"$S/sym.err" || fail "symdb pprof --upstream: $(cat "$S/sym.err")"
grep -qE ', 0 unknown images$' "$S/sym.err" || fail "pprof --upstream: $(cat "$S/sym.err")"
for v in "-top" "-traces" "-traces -lines"; do
	# shellcheck disable=SC2086
	diff -u <("$pp" $v "$S/llvm.pb.gz" 2>&1) <("$pp" $v "$S/sym.pb.gz" 2>&1) >&2 ||
		fail "pprof $v differs: llvm-symbolizer-14 vs symdb pprof --upstream"
done
n=$(index_gets)
((n == 1)) || fail "the store was asked for the image $n times, not once: $(cat "$NODE_SERVE_LOG")"
SYMDB_DIR=$S/db "$SYMDB" pprof "$S/raw.pb.gz" --upstream "$NODE_SERVE_URL" -o "$S/sym2.pb.gz" \
	2>/dev/null || fail "second run"
(($(index_gets) == 1)) || fail "the second run asked the store again"

# ---- symdb perf --upstream --build-ids: the gone file by its build-id ----
SYMDB_DIR=$S/dbp "$SYMDB" perf -q --no-annotate --build-ids "$S/buildids.txt" "$S/perf.txt" \
	-o "$S/none.folded" 2>/dev/null || fail "symdb perf without a source"
! grep -qF "$want" "$S/none.folded" || fail "perf: answered without a source"
# a store nobody listens on: one line with the fetch's reason (before: none,
# only the summary's unknown image), the frame unnamed, exit 0
SYMDB_DIR=$S/dbp "$SYMDB" perf --no-annotate --build-ids "$S/buildids.txt" "$S/perf.txt" \
	--upstream "$dead" -o "$S/pdead.folded" 2>"$S/pdead.err" ||
	fail "symdb perf with a dead store: $(cat "$S/pdead.err")"
[[ $(wc -l <"$S/pdead.err") == 2 ]] && grep -qF "symdb: $bid: $dead/symdb/v1/" "$S/pdead.err" &&
	grep -qE '1 unknown image: ' "$S/pdead.err" || fail "perf, dead store: $(cat "$S/pdead.err")"
SYMDB_DIR=$S/dbp "$SYMDB" perf -q --no-annotate --build-ids "$S/buildids.txt" "$S/perf.txt" \
	--upstream "$NODE_SERVE_URL" -o "$S/perf.folded" 2>"$S/perf.err" ||
	fail "symdb perf --upstream: $(cat "$S/perf.err")"
[[ $(cat "$S/perf.folded") == "prog;$want 1" ]] ||
	fail "perf --upstream: '$(cat "$S/perf.folded")', llvm-symbolizer-14 says '$want'"
(($(index_gets) == 2)) || fail "perf: the store was not asked exactly once more"

mv "$S/cppwork.away" "$S/cppwork"
echo "profile_fetch.sh: ok ($(($(date +%s) - t0)) s)"
