#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# debug_later.sh: a debug file that appears after its binary was indexed
# (a -dbg package installed later, dsymutil run after the first build) is
# taken by the next `symdb build` of the unchanged binary, without --force:
#   - ELF, .gnu_debuglink: the stripped binary indexed alone, then its
#     .debug put beside it;
#   - ELF, build-id: the same with the .debug under DIR/.build-id/xx/
#     (`build --debug-dir DIR`);
#   - Mach-O: an executable indexed, then `dsymutil` makes BINARY.dSYM.
# Each second build says "replaced an index without DWARF", `query` then
# answers as llvm-symbolizer-14 does with the debug file there (file and
# line), and a third build is "skipped". Before, the second build said
# "skipped ... (already indexed)" and every answer kept ??:0:0.
# `query` itself, indexing on first sight, does the same (the last part).
source "$(dirname "$0")/lib.sh"
require gcc objcopy llvm-symbolizer-14

cat >"$SCRATCH/m.c" <<'EOF'
__attribute__((noinline)) int leaf(int x) { return x * 3; }
int main(int argc, char **argv) { (void)argv; return leaf(argc); }
EOF

# expect_build LABEL WANT ARGS...: `symdb build ARGS` succeeds and prints WANT
expect_build() {
	local what=$1 want=$2
	shift 2
	run "$SYMDB" build "$@"
	expect_ok "$what"
	grep -q -- "$want" "$OUT" || fail "$what: $(cat "$OUT"), expected '$want'"
}

# same_as_llvm LABEL DB OBJ ADDR: query and llvm-symbolizer-14 agree, and
# the answer has a line (the debug file was used)
same_as_llvm() {
	local what=$1 db=$2 obj=$3 addr=$4
	run "$SYMDB" query --db "$db" --no-build --obj "$obj" "$addr"
	expect_ok "$what: query"
	want=$(llvm-symbolizer-14 --obj "$obj" "$addr")
	[[ $(cat "$OUT") == "$want"$'\n' || $(cat "$OUT") == "$want" ]] ||
		fail "$what: symdb
$(cat "$OUT")
llvm-symbolizer-14
$want"
	grep -q 'm\.c:1:' "$OUT" || fail "$what: no line from the debug file: $(cat "$OUT")"
}

# ---- ELF, .gnu_debuglink ----------------------------------------------------
d=$SCRATCH/link
mkdir -p "$d"
gcc -g -O1 -o "$d/full" "$SCRATCH/m.c" || fail "gcc"
objcopy --only-keep-debug "$d/full" "$d/app.debug"
objcopy --strip-debug --add-gnu-debuglink="$d/app.debug" "$d/full" "$d/app"
addr=0x$(nm "$d/full" | awk '$3 == "leaf" { print $1 }')
mv "$d/app.debug" "$SCRATCH/hidden.debug"
expect_build "debuglink, no debug file" "^indexed " --db "$d/db" "$d/app"
mv "$SCRATCH/hidden.debug" "$d/app.debug"
expect_build "debuglink, debug file installed" "replaced an index without DWARF" --db "$d/db" "$d/app"
same_as_llvm "debuglink" "$d/db" "$d/app" "$addr"
expect_build "debuglink, again" "^skipped .*already indexed" --db "$d/db" "$d/app"

# ---- ELF, build-id directory --------------------------------------------------
d=$SCRATCH/bid
mkdir -p "$d"
gcc -g -O1 -Wl,--build-id -o "$d/full" "$SCRATCH/m.c" || fail "gcc"
id=$(readelf -n "$d/full" | awk '/Build ID/ { print $3 }')
[[ -n $id ]] || fail "no build-id"
objcopy --strip-debug "$d/full" "$d/app"
expect_build "build-id, no debug file" "^indexed " --db "$d/db" --debug-dir "$d/dbg" "$d/app"
mkdir -p "$d/dbg/.build-id/${id:0:2}"
objcopy --only-keep-debug "$d/full" "$d/dbg/.build-id/${id:0:2}/${id:2}.debug"
expect_build "build-id, debug file installed" "replaced an index without DWARF" \
	--db "$d/db" --debug-dir "$d/dbg" "$d/app"
# llvm-symbolizer-14 finds it by build-id in the same directory
run "$SYMDB" query --db "$d/db" --no-build --obj "$d/app" "$addr"
expect_ok "build-id: query"
want=$(llvm-symbolizer-14 --debug-file-directory="$d/dbg" --obj "$d/app" "$addr")
[[ $(cat "$OUT") == "$want"$'\n' || $(cat "$OUT") == "$want" ]] ||
	fail "build-id: symdb $(cat "$OUT"), llvm-symbolizer-14 $want"
grep -q 'm\.c:1:' "$OUT" || fail "build-id: no line: $(cat "$OUT")"
expect_build "build-id, again" "^skipped .*already indexed" --db "$d/db" --debug-dir "$d/dbg" "$d/app"

# ---- Mach-O: dsymutil after the first build ---------------------------------
if ! command -v clang >/dev/null || ! command -v ld64.lld-14 >/dev/null ||
	! command -v dsymutil >/dev/null; then
	skip_part "no clang, ld64.lld-14 or dsymutil"
else
	d=$SCRATCH/macho
	mkdir -p "$d"
	clang --target=arm64-apple-macos11 -g -O1 -c "$SCRATCH/m.c" -o "$d/m.o" || fail "clang"
	ld64.lld-14 -arch arm64 -platform_version macos 11.0 11.0 -undefined dynamic_lookup \
		-execute -e _main -o "$d/app" "$d/m.o" || fail "ld64.lld-14"
	maddr=0x$(llvm-nm-14 "$d/app" | awk '$3 == "_leaf" { print $1 }')
	expect_build "Mach-O, no dSYM" "^indexed " --db "$d/db" "$d/app"
	(cd "$d" && dsymutil app) || fail "dsymutil" # reads m.o, left in place
	expect_build "Mach-O, dSYM made" "replaced an index without DWARF" --db "$d/db" "$d/app"
	same_as_llvm "Mach-O" "$d/db" "$d/app" "$maddr"
	expect_build "Mach-O, again" "^skipped .*already indexed" --db "$d/db" "$d/app"
fi
# ---- `query` on first sight: the debug file installed after the first query --
# The first query of the stripped binary indexes it without DWARF; once its
# .debug is beside it, the next query (no `build` in between) indexes it again
# and answers with the line, as llvm-symbolizer-14 does.  A .debug of another
# build of the program (a stale file: its build-id differs) is not worth a
# build: no indexer runs, and both tools answer without a line.
# before: every later query answered ??:0:0 until `symdb build` ran.
d=$SCRATCH/first
mkdir -p "$d/stale" "$d/hidden"
gcc -g -O1 -Wl,--build-id -o "$d/full" "$SCRATCH/m.c" || fail "gcc"
objcopy --only-keep-debug "$d/full" "$d/hidden/app.debug"
objcopy --strip-debug --add-gnu-debuglink="$d/hidden/app.debug" "$d/full" "$d/app"
addr=0x$(nm "$d/full" | awk '$3 == "leaf" { print $1 }')
# the stale .debug: the same program built with another constant
sed 's/x \* 3/x * 5/' "$SCRATCH/m.c" >"$d/stale/m.c"
gcc -g -O1 -Wl,--build-id -o "$d/stale/full" "$d/stale/m.c" || fail "gcc"
objcopy --only-keep-debug "$d/stale/full" "$d/stale/app.debug"
run "$SYMDB" query --db "$d/db" --obj "$d/app" "$addr"
expect_ok "first query, no debug file"
grep -q '^??:0:0' "$OUT" || fail "first query without the debug file has a line: $(cat "$OUT")"
# under strace: count the programs started (the indexer is one)
execs() {
	# (LeakSanitizer cannot run under ptrace: no leak check for these runs)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -qq -e trace=execve -o "$SCRATCH/trace" "$@" >"$OUT" 2>"$ERR" </dev/null ||
		fail "$* under strace: $(head -c 300 "$ERR")"
	grep -c 'execve(' "$SCRATCH/trace"
}
cp "$d/stale/app.debug" "$d/app.debug"
if command -v strace >/dev/null 2>&1; then
	n=$(execs "$SYMDB" query --db "$d/db" --obj "$d/app" "$addr")
	((n == 1)) || fail "a stale .debug (another build-id) started $((n - 1)) more program(s)"
else
	skip_part "strace not found: the programs a stale .debug starts are not counted"
	run "$SYMDB" query --db "$d/db" --obj "$d/app" "$addr"
fi
want=$(llvm-symbolizer-14 --obj "$d/app" "$addr")
[[ $(cat "$OUT") == "$want"$'\n' || $(cat "$OUT") == "$want" ]] ||
	fail "stale .debug: symdb $(cat "$OUT"), llvm-symbolizer-14 $want"
# the right .debug recompressed since (objcopy --compress-debug-sections):
# the same build-id and DWARF, another CRC, which the indexer refuses, as
# llvm-symbolizer-14 does: no indexer either (it ran at every query before)
objcopy --compress-debug-sections=zlib "$d/hidden/app.debug" "$d/app.debug"
if command -v strace >/dev/null 2>&1; then
	n=$(execs "$SYMDB" query --db "$d/db" --obj "$d/app" "$addr")
	((n == 1)) || fail "a .debug with another CRC started $((n - 1)) more program(s)"
	want=$(llvm-symbolizer-14 --obj "$d/app" "$addr")
	[[ $(cat "$OUT") == "$want"$'\n' || $(cat "$OUT") == "$want" ]] ||
		fail "recompressed .debug: symdb $(cat "$OUT"), llvm-symbolizer-14 $want"
fi
mv "$d/hidden/app.debug" "$d/app.debug"
run "$SYMDB" query --db "$d/db" --obj "$d/app" "$addr"
expect_ok "query, debug file installed since"
want=$(llvm-symbolizer-14 --obj "$d/app" "$addr")
[[ $(cat "$OUT") == "$want"$'\n' || $(cat "$OUT") == "$want" ]] ||
	fail "first sight, debug file installed since: symdb
$(cat "$OUT")
llvm-symbolizer-14
$want"
grep -q 'm\.c:1:' "$OUT" || fail "first sight: no line from the debug file: $(cat "$OUT")"
# the database keeps it: --no-build answers with the line too
same_as_llvm "first sight, then --no-build" "$d/db" "$d/app" "$addr"

note "debug_later: ok"
