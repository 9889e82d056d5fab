#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# embedded_source.sh: --print-source-context-lines uses the source a DWARF 5
# line table embeds (clang -gdwarf-5 -gembed-source, DW_LNCT_LLVM_source) as
# llvm-symbolizer-14 does: for the line-table frame of an address (not for
# inlined call sites, which are read from disk), in preference to the file
# on disk.  Checked against llvm-symbolizer-14 on every byte of .text, with
# the sources deleted after compiling, and with them changed on disk; LLVM,
# GNU and JSON styles, with and without inlines; symdb query and the
# llvm-symbolizer personality.
source "$(dirname "$0")/lib.sh"
cc=$(command -v clang-14 || command -v clang || true)
[[ -n $cc ]] || { echo "SKIP: clang not found"; exit 77; }

src=$SCRATCH/src
mkdir -p "$src" "$SCRATCH/bin"
cat >"$src/e.h" <<'C'
/* a header whose inline functions land in the line table */
extern volatile int sink;
static inline void hdr(int x) {
	sink = x * 7;
	sink += x;
}
C
cat >"$src/e.c" <<'C'
#include "e.h"
volatile int sink;
static inline void sq(int x) {
	sink = x * x + 1;
	hdr(x + 2);
}
__attribute__((noinline)) int g(int v) {
	for (int i = 0; i < v; i++)
		sq(v + i);
	hdr(v);
	return sink;
}
int main(int c, char **v) {
	(void)v;
	return g(c);
}
C
cp "$src/e.c" "$src/e.c.orig"
(cd "$src" && "$cc" -gdwarf-5 -gembed-source -O2 -o "$SCRATCH/bin/e_O2" e.c &&
	"$cc" -gdwarf-5 -gembed-source -O0 -o "$SCRATCH/bin/e_O0" e.c) ||
	fail "clang -gembed-source failed"
run "$SYMDB" build "$SCRATCH/bin/e_O2" "$SCRATCH/bin/e_O0"
expect_ok "build"
ln -s "$SYMDB" "$SCRATCH/bin/llvm-symbolizer"
# The index holds the text (SPEC §7.3.1), readable from SPEC.md alone.
here=$(cd "$(dirname "$0")" && pwd)
for f in $(index_files "$SYMDB_DIR"); do
	python3 "$here/../golden/spec_reader.py" --dump "$f" >"$SCRATCH/dump" ||
		fail "spec_reader.py rejects $f"
	grep -q "FILE_SOURCES" "$SCRATCH/dump" || fail "$f has no FILE_SOURCES table"
done

# every byte of .text
text_bytes() {
	llvm-readelf-14 -SW "$1" | awk '$2 == ".text" { print $4, $6 }' | {
		read -r addr size
		for ((a = 16#$addr; a < 16#$addr + 16#$size; a++)); do printf '0x%x\n' "$a"; done
	}
}

n=0
# compare WHAT BIN ARGS...: symdb query and the personality == llvm-symbolizer-14.
# In the sanitizer lane (SYMDB_TEST_SANITIZED) the oracle does not run: the
# plain lane compared the same answers; there the personality must answer
# as symdb query did, with no sanitizer report from either.
compare() {
	local what=$1 bin=$2
	shift 2
	sanitized || llvm-symbolizer-14 --obj "$bin" "$@" <"$SCRATCH/in" >"$SCRATCH/expect" 2>/dev/null
	run_in "$SCRATCH/in" "$SYMDB" query --obj "$bin" "$@"
	expect_ok "$what"
	expect_oracle "$what" "$SCRATCH/expect"
	run_in "$SCRATCH/in" "$SCRATCH/bin/llvm-symbolizer" --obj "$bin" "$@"
	expect_ok "$what (as llvm-symbolizer)"
	cmp -s "$OUT" "$SCRATCH/expect" || fail "$what (as llvm-symbolizer): differs"
	n=$((n + 1))
}

check_all() {
	local state=$1 bin
	for bin in "$SCRATCH/bin/e_O2" "$SCRATCH/bin/e_O0"; do
		text_bytes "$bin" >"$SCRATCH/in"
		for opts in "" "--no-inlines" "--output-style=GNU" "--output-style=GNU -i" \
			"--output-style=JSON" "-p -a" "--functions=short --relativenames"; do
			for lines in 1 3 10; do
				# shellcheck disable=SC2086 # opts is a list of words
				compare "$state ${bin##*/} $opts -N$lines" "$bin" $opts \
					--print-source-context-lines=$lines
			done
		done
	done
}

# With the sources deleted the embedded text is all there is (and the
# inlined call sites print no context, as llvm-symbolizer-14 prints none).
mv "$src/e.c" "$src/e.c.away"
mv "$src/e.h" "$src/e.h.away"
check_all "deleted"
grep -q '>: ' "$OUT" || fail "no source context was printed from the embedded source"
# With different text on disk: the line-table frame shows the embedded
# text, the call sites the file's.
sed 's/^/CHANGED /' "$src/e.c.away" >"$src/e.c"
sed 's/^/CHANGED /' "$src/e.h.away" >"$src/e.h"
check_all "changed on disk"

# A damaged FILE_SOURCES table (checksums made to match, so that only the
# references can tell): a Source past the string pool, Paths out of order.
# `symdb info` reports it (exit 4) naming the table; a query never reads
# outside the file.
damage() {
	python3 - "$1" "$2" "$here/../golden" <<'PY'
import struct, sys
path, how, golden = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, golden)
import spec_reader as sr
d = bytearray(open(path, "rb").read())
ix = sr.Index(path)
off, length, count = ix.dir[17][:3]
if how == "past":
    struct.pack_into(">I", d, off + 4, len(ix.strings) + 5)
else:
    a = d[off:off + 8]
    d[off:off + 8] = d[off + 8:off + 16]
    d[off + 8:off + 16] = a
dir_off, n = ix.dir_off, ix.table_count
for i in range(n):
    e = dir_off + 40 * i
    kind, = struct.unpack_from(">I", d, e)
    if kind == 17:
        struct.pack_into(">Q", d, e + 32, sr.xxh3_64(d[off:off + length]))
struct.pack_into(">Q", d, 120, sr.xxh3_64(bytes(d[:120]) + bytes(d[dir_off:dir_off + 40 * n])))
open(path, "wb").write(d)
PY
}
f=$(index_files "$SYMDB_DIR" | head -1)
cp "$f" "$SCRATCH/good.symdb"
for how in past order; do
	cp "$SCRATCH/good.symdb" "$f"
	damage "$f" "$how" || fail "could not damage $f ($how)"
	run "$SYMDB" info "$f"
	no_crash "info, FILE_SOURCES $how"
	((RC == 4)) || fail "info on FILE_SOURCES damaged ($how): exit $RC, expected 4"
	grep -q "FILE_SOURCES" "$OUT" "$ERR" || fail "info does not name FILE_SOURCES ($how)"
	for bin in "$SCRATCH/bin/e_O2" "$SCRATCH/bin/e_O0"; do
		text_bytes "$bin" >"$SCRATCH/in"
		run_in "$SCRATCH/in" "$SYMDB" query --no-verify --obj "$bin" --print-source-context-lines=3
		no_crash "query, FILE_SOURCES $how"
	done
done
cp "$SCRATCH/good.symdb" "$f"
if sanitized; then
	note "$n comparisons of the personality with symdb query (sanitizer lane)"
else
	note "$n comparisons equal to llvm-symbolizer-14"
fi
