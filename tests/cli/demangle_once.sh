#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# demangle_once.sh: `symdb query` demangles each distinct name once per
# run, however many times and in however many batches it prints it.  A
# C++ library of 9,000 functions (more names than the library's own name
# cache kept across calls, which started over at 8,192 and so demangled
# every name again in each batch) is queried at every function's address
# 24 times over (4 MB of input: several stdin reads and windows; lines
# "MODULE ADDR", which no body cache answers, so every line is formatted), with
# demangle_count_shim.so in front of symdb_demangle(): the calls on mangled
# names must equal the distinct mangled names.  The output must be
# llvm-symbolizer-14's for one pass, 24 times.
source "$(dirname "$0")/lib.sh"
require g++
: "${DEMANGLE_COUNT_SHIM:?DEMANGLE_COUNT_SHIM (demangle_count_shim.so) must be set}"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

python3 - "$SCRATCH/many.cpp" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("namespace demangle_once {\nstruct box { long v; };\n")
    for i in range(9000):
        f.write("long fn%d(box a, int s) { return a.v + s * %d; }\n" % (i, i + 3))
    f.write("}\n")
PY
lib=$SCRATCH/libmany.so
g++ -O0 -g1 -shared -fPIC -o "$lib" "$SCRATCH/many.cpp" || fail "compiling libmany.so"
db=$SCRATCH/db
run "$SYMDB" build --db "$db" "$lib"
expect_ok "build libmany.so"

llvm-nm-14 --defined-only "$lib" | awk '$2 == "T" && $3 ~ /^_ZN13demangle_once/ { print "0x" $1 }' |
	sed "s|^0x0*|$lib 0x|" >"$SCRATCH/pass.txt"
n=$(wc -l <"$SCRATCH/pass.txt")
((n == 9000)) || fail "libmany.so has $n functions, not 9000"
for _ in $(seq 24); do cat "$SCRATCH/pass.txt"; done >"$SCRATCH/in.txt"

llvm-symbolizer-14 <"$SCRATCH/pass.txt" >"$SCRATCH/llvm1.txt" 2>/dev/null ||
	fail "llvm-symbolizer-14 on one pass"
for _ in $(seq 24); do cat "$SCRATCH/llvm1.txt"; done >"$SCRATCH/want.txt"

# The shim stands in front of libsymdb.so's symdb_demangle; an ASan build's
# symdb links the static library (SYMDB_TOOL_LIB, from tools/CMakeLists.txt),
# so there the calls cannot be counted, and only the answers are checked.
shim=$DEMANGLE_COUNT_SHIM
[[ ${SYMDB_TOOL_LIB:-symdb} == symdb_static ]] && shim=
log=$SCRATCH/demangle.log
set +e
env ${shim:+LD_PRELOAD="$shim"} DEMANGLE_COUNT_LOG="$log" \
	"$SYMDB" query --db "$db" --no-build <"$SCRATCH/in.txt" >"$OUT" 2>"$ERR"
RC=$?
set -e
[[ $RC -eq 0 && ! -s $ERR ]] || fail "symdb query: exit $RC"
cmp -s "$OUT" "$SCRATCH/want.txt" || fail "symdb query differs from llvm-symbolizer-14's $(diff "$OUT" "$SCRATCH/want.txt" | head -5)"
if [[ -z $shim ]]; then
	skip_part "symdb links libsymdb statically (an ASan build): the demangling calls are not counted"
	exit 0
fi
[[ -s $log ]] || fail "the shim wrote no counts (was symdb_demangle called through it?)"
read -r calls distinct <"$log"
note "symdb_demangle on mangled names: $calls calls, $distinct distinct names, for $((n * 24)) lines"
((distinct >= 9000)) || fail "only $distinct distinct mangled names were demangled"
((calls == distinct)) || fail "$calls demangling calls for $distinct distinct names"
