#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fallback_identity.sh: a binary without a build-id is identified by its
# loaded bytes (SPEC §5.2), which another file can share; `symdb query`
# answers each file named by path from that file's own index, as
# llvm-symbolizer-14 answers from the file:
#   - a rebuild whose code is the same but whose lines moved (a comment
#     added at the top) is answered with the new lines, not the index of
#     the first build;
#   - the same program built in two directories, asked alternately in one
#     per-line stream (and again in the next run), each with its own paths;
#   - an unstripped file indexed first, then its copy without debug
#     information asked: the copy's own answers (llvm's), the database's
#     index kept (asked by id: the unstripped file's answers), then the
#     unstripped file's again;
#   - with --no-build, an index of another file is not used: "??" answers
#     and "not indexed" naming the file, never the other file's lines.
# Every answer is compared with llvm-symbolizer-14 on the same file.
source "$(dirname "$0")/lib.sh"
require gcc strip

db=$SCRATCH/db
src=$SCRATCH/prog.c
write_src() { # COMMENT_LINES
	{
		for ((i = 0; i < $1; i++)); do echo "/* moved $i */"; done
		cat <<'EOF'
#include <stdio.h>
__attribute__((noinline)) int work(int x) { return x * 3 + 1; }
__attribute__((noinline)) static int twice(int x) { return work(x) + work(x + 1); }
int main(int argc, char **argv) { (void)argv; printf("%d\n", twice(argc)); return 0; }
EOF
	} >"$src"
}
# link DIR: DIR/prog from $src, without a build-id
link() {
	mkdir -p "$1"
	cp "$src" "$1/prog.c"
	(cd "$1" && gcc -g -O2 -Wl,--build-id=none prog.c -o prog) || fail "gcc $1"
}
fn_addrs() {
	llvm-nm-14 --defined-only "$1" | awk '$2 ~ /^[tT]$/ { print "0x" $1 }' | sort -u
}
# same WHAT BIN [ARGS]: symdb query --obj BIN == llvm-symbolizer-14 on every function
same() {
	local what=$1 bin=$2
	shift 2
	fn_addrs "$bin" >"$SCRATCH/addrs"
	llvm_query "$bin" "$@" <"$SCRATCH/addrs" >"$SCRATCH/expect"
	run_in "$SCRATCH/addrs" "$SYMDB" query --db "$db" --obj "$bin" "$@"
	expect_ok "$what"
	expect_oracle "$what" "$SCRATCH/expect"
	[[ ! -s $ERR ]] || fail "$what: stderr: $(cat "$ERR")"
}

write_src 0
link "$SCRATCH/a"
[[ -z $(build_id "$SCRATCH/a/prog") ]] || fail "the fixture has a build-id"
same "first build" "$SCRATCH/a/prog"
first=$(fn_addrs "$SCRATCH/a/prog" | md5sum)

# The same code, every line three lower.
write_src 3
link "$SCRATCH/a"
[[ $(fn_addrs "$SCRATCH/a/prog" | md5sum) == "$first" ]] ||
	fail "the rebuild should keep every function's address"
"$SYMDB" info --db "$db" "$SCRATCH/a/prog" >/dev/null 2>&1 ||
	fail "the rebuild should have the first build's identity (SPEC §5.2)"
same "rebuild with moved lines" "$SCRATCH/a/prog"

# The same program in another directory: other paths, the same loaded bytes.
link "$SCRATCH/b"
for x in $(fn_addrs "$SCRATCH/a/prog"); do
	echo "$SCRATCH/a/prog $x"
	echo "$SCRATCH/b/prog $x"
	echo "$SCRATCH/a/prog $x"
done >"$SCRATCH/stream"
llvm-symbolizer-14 --debug-file-directory=/nonexistent <"$SCRATCH/stream" >"$SCRATCH/expect"
grep -q "$SCRATCH/b/prog.c" "$SCRATCH/expect" || fail "llvm should name b's source"
for round in 1 2; do
	run_in "$SCRATCH/stream" "$SYMDB" query --db "$db"
	expect_ok "two directories, round $round"
	expect_oracle "two directories, round $round" "$SCRATCH/expect"
done

# An unstripped file indexed, then its copy without debug information asked.
strip -g -o "$SCRATCH/a/prog.stripped" "$SCRATCH/a/prog" # (symbols kept, debug information gone)
same "unstripped again" "$SCRATCH/a/prog"
same "stripped copy" "$SCRATCH/a/prog.stripped"
# The copy carries less: answered from a private index, the database's
# index (with DWARF, asked by its id) kept for everyone else.
uuid=$("$SYMDB" info --db "$db" "$SCRATCH/a/prog" | awk '$1 == "uuid" { print $2 }')
fn_addrs "$SCRATCH/a/prog" >"$SCRATCH/addrs"
llvm_query "$SCRATCH/a/prog" <"$SCRATCH/addrs" >"$SCRATCH/expect"
run_in "$SCRATCH/addrs" "$SYMDB" query --db "$db" --no-build --uuid "$uuid"
expect_ok "by id after the copy"
expect_oracle "the database's index after the copy (by id)" "$SCRATCH/expect"
same "unstripped after the copy" "$SCRATCH/a/prog"

# --no-build: the index (a's) is of another file than b's.
fn_addrs "$SCRATCH/b/prog" >"$SCRATCH/addrs"
run_in "$SCRATCH/addrs" "$SYMDB" query --no-build --db "$db" --obj "$SCRATCH/b/prog"
no_crash "--no-build"
grep -q "/a/prog.c" "$OUT" && fail "--no-build answered b with a's index"
grep -qx '??' "$OUT" || fail "--no-build: expected ?? answers"
grep -q "b/prog: not indexed" "$ERR" || fail "--no-build: stderr should say b is not indexed: $(cat "$ERR")"
note "--no-build: exit $RC: $(head -1 "$ERR")"
echo "fallback_identity: every answer as llvm-symbolizer-14's"
