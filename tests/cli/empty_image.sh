#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# empty_image.sh: a file with no symbol and no debug information (a stripped
# static executable, a stripped freestanding aarch64 one, an object file that
# defines nothing) is indexed, not refused: llvm-symbolizer-14 reads it as a
# valid object that knows no address, and so does symdb.
#   - `symdb build` publishes it, exit 0, and says what it holds;
#   - `symdb query --obj` (LLVM, GNU, JSON), a per-line stream mixing it with
#     a fixture, and `addr2line` answer byte for byte as llvm-symbolizer-14
#     and llvm-addr2line-14, exit 0, nothing on stderr, first sight included;
#   - its debug file found later (`symdb build --debug-dir`) replaces the
#     empty index without --force; an input that adds nothing is skipped.
source "$(dirname "$0")/lib.sh"
require gcc strip llvm-objcopy-14 llvm-addr2line-14 objcopy

db=$SCRATCH/db
cat >"$SCRATCH/s.c" <<'EOF'
#include <stdio.h>
__attribute__((noinline)) int work(int x) { return x * 7 + 1; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", work(argc)); return 0; }
EOF
gcc -g -O2 -static "$SCRATCH/s.c" -o "$SCRATCH/s_full" || fail "gcc -static"
strip -o "$SCRATCH/s_static" "$SCRATCH/s_full"
llvm-objcopy-14 --strip-all "$FIXTURES/full/nostd_aarch64" "$SCRATCH/nostd_stripped"
printf 'typedef int unused;\n' >"$SCRATCH/empty.c"
gcc -c -O2 "$SCRATCH/empty.c" -o "$SCRATCH/empty.o"
work=$(llvm-nm-14 "$SCRATCH/s_full" | awk '$3 == "work" { print "0x" $1 }')
[[ -n $work ]] || fail "no address of work"

# Built explicitly: one line saying it holds nothing, exit 0, a catalog entry.
for f in s_static nostd_stripped empty.o; do
	run "$SYMDB" build --db "$db" "$SCRATCH/$f"
	expect_ok "build $f"
	grep -q "^indexed [0-9a-f]* $SCRATCH/$f (no symbols and no debug information: every address answers ??)\$" "$OUT" ||
		fail "build $f: $(cat "$OUT")"
	[[ ! -s $ERR ]] || fail "build $f: stderr: $(cat "$ERR")"
done
[[ $(index_files "$db" | wc -l) == 3 ]] || fail "expected three index files"

# answers WHAT ARGS... <INPUT: symdb query and llvm-symbolizer-14 on the same
# request (stdout and stderr together, and the exit status)
answers() {
	local what=$1
	shift
	cat >"$SCRATCH/stdin"
	llvm-symbolizer-14 --debug-file-directory=/nonexistent "$@" <"$SCRATCH/stdin" >"$SCRATCH/expect" 2>&1
	echo "exit $?" >>"$SCRATCH/expect"
	set +e
	"$SYMDB" query --db "$qdb" "$@" <"$SCRATCH/stdin" >"$OUT" 2>&1
	echo "exit $?" >>"$OUT"
	set -e
	cmp -s "$OUT" "$SCRATCH/expect" ||
		fail "$what: differs from llvm-symbolizer-14: $(diff "$SCRATCH/expect" "$OUT" | head -6 | tr '\n' ' ')"
}
for qdb in "$db" "$SCRATCH/fresh"; do # indexed, then first sight
	rm -rf "$SCRATCH/fresh"
	for style in LLVM GNU JSON; do
		answers "$qdb $style s_static" --obj "$SCRATCH/s_static" --output-style=$style "$work" 0x0 </dev/null
		answers "$qdb $style nostd" --obj "$SCRATCH/nostd_stripped" --output-style=$style 0x10000 0x400000 </dev/null
		answers "$qdb $style empty.o" --obj "$SCRATCH/empty.o" --output-style=$style 0x0 </dev/null
	done
	printf '%s %s\n%s 0x1139\n%s 0x0\n' "$SCRATCH/s_static" "$work" "$FIXTURES/full/c_gcc_O2_pie" \
		"$SCRATCH/empty.o" >"$SCRATCH/stream"
	for style in LLVM JSON; do
		answers "$qdb $style stream" --output-style=$style <"$SCRATCH/stream"
	done
	mkdir -p "$SCRATCH/bin"
	ln -sf "$SYMDB" "$SCRATCH/bin/addr2line"
	llvm-addr2line-14 -f -e "$SCRATCH/s_static" "$work" >"$SCRATCH/expect" 2>&1
	echo "exit $?" >>"$SCRATCH/expect"
	set +e
	SYMDB_DIR=$qdb "$SCRATCH/bin/addr2line" -f -e "$SCRATCH/s_static" "$work" >"$OUT" 2>&1
	echo "exit $?" >>"$OUT"
	set -e
	cmp -s "$OUT" "$SCRATCH/expect" || fail "addr2line ($qdb): $(cat "$OUT") vs $(cat "$SCRATCH/expect")"
done

# Nothing new: skipped.  Its debug file: replaces the empty index.
run "$SYMDB" build --db "$db" "$SCRATCH/s_static"
expect_ok "build again"
grep -q "^skipped .* (already indexed)\$" "$OUT" || fail "build again: $(cat "$OUT")"
id=$(build_id "$SCRATCH/s_full")
mkdir -p "$SCRATCH/dbg/.build-id/${id:0:2}"
objcopy --only-keep-debug "$SCRATCH/s_full" "$SCRATCH/dbg/.build-id/${id:0:2}/${id:2}.debug"
run "$SYMDB" build --db "$db" --debug-dir "$SCRATCH/dbg" "$SCRATCH/s_static"
expect_ok "build with its debug file"
grep -q "replaced an index" "$OUT" || fail "the debug file should replace the empty index: $(cat "$OUT")"
llvm-symbolizer-14 --debug-file-directory="$SCRATCH/dbg" --obj "$SCRATCH/s_static" "$work" >"$SCRATCH/expect"
grep -q "s.c:2" "$SCRATCH/expect" || fail "llvm should find the debug file"
run "$SYMDB" query --db "$db" --no-build --obj "$SCRATCH/s_static" "$work"
expect_ok "query after the debug file"
cmp -s "$OUT" "$SCRATCH/expect" || fail "after the debug file: $(cat "$OUT") vs $(cat "$SCRATCH/expect")"

# First sight: a debug file that appears after the empty index was made (by
# .gnu_debuglink, beside the binary) is found by the next query, which
# indexes the file again because its index holds nothing.
objcopy --only-keep-debug "$SCRATCH/s_full" "$SCRATCH/s_link.debug"
strip -o "$SCRATCH/s_link" "$SCRATCH/s_full"
(cd "$SCRATCH" && objcopy --add-gnu-debuglink=s_link.debug s_link)
mv "$SCRATCH/s_link.debug" "$SCRATCH/s_link.debug.later"
qdb=$SCRATCH/late
answers "late: before its debug file" --obj "$SCRATCH/s_link" "$work" </dev/null
"$SYMDB" info --db "$qdb" "$SCRATCH/s_link" | grep -qE '^symbols +0$' ||
	fail "late: the first index should hold nothing"
mv "$SCRATCH/s_link.debug.later" "$SCRATCH/s_link.debug"
answers "late: with its debug file" --obj "$SCRATCH/s_link" "$work" </dev/null
grep -q "s.c:2" "$OUT" || fail "late: the debug file was not used: $(cat "$OUT")"
echo "empty_image: indexed, answered as llvm-symbolizer-14 and llvm-addr2line-14"
