#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# rewrite_build.sh: an input written in place (same inode: `cat B > f`)
# between the moment symdb reads its build-id and the moment the indexer
# parses it.  The builder reads the identity (program A's build-id) and the
# indexer the contents from one descriptor, so the indexer parsed program B
# and its index was published as A's: `symdb query --obj A` then printed B's
# functions and lines, `symdb verify` said clean and `symdb build A` kept
# the wrong index ("already indexed from different contents").  The window
# is made certain here: $SYMDB_INDEXER is a script that rewrites f with B,
# then runs the real indexer.  Each of `symdb build f` and a first-sight
# `symdb query --obj f` must publish nothing and say so in one line; then
# `symdb build A` and `symdb build B` index each program, whose answers are
# llvm-symbolizer-14's.
source "$(dirname "$0")/../cli/lib.sh"
require gcc llvm-symbolizer-14 nm
: "${SYMDB_INDEXER_PROD:?SYMDB_INDEXER_PROD (symdb-indexer) must be set}"
W=$SCRATCH/w
mkdir -p "$W"
cat >"$W/a.c" <<'C'
#include <stdio.h>
__attribute__((noinline)) int alpha(int n) { return n * 3 + 1; }
int main(int c, char **v) { (void)v; printf("%d\n", alpha(c)); return 0; }
C
cat >"$W/b.c" <<'C'
#include <stdio.h>
__attribute__((noinline)) int beta_one(int n) { return n * 5 + 2; }
__attribute__((noinline)) int beta_two(int n) { return beta_one(n) - 7; }
int main(int c, char **v) { (void)v; printf("%d\n", beta_two(c)); return 0; }
C
gcc -g -O2 "$W/a.c" -o "$W/A" && gcc -g -O2 "$W/b.c" -o "$W/B" || fail "gcc"
printf '#!/bin/sh\ncat "%s" > "%s"\nexec "%s" "$@"\n' "$W/B" "$W/f" "$SYMDB_INDEXER_PROD" >"$W/rewrite"
chmod +x "$W/rewrite"
addrs() { nm "$1" | awk '$2 ~ /^[tT]$/ && $3 !~ /^_/ { print "0x" $1 }'; }
db=$SCRATCH/db

note "1. symdb build f, f rewritten with B once its build-id (A's) was read"
cp "$W/A" "$W/f"
SYMDB_INDEXER=$W/rewrite run "$SYMDB" --db "$db" build "$W/f"
((RC != 0)) || fail "the build of a file rewritten while indexed succeeded: $(cat "$OUT")"
[[ $(grep -c . "$ERR") == 1 ]] && grep -q "f: changed while it was indexed" "$ERR" ||
	fail "not one line saying the file changed: $(cat "$ERR")"
run "$SYMDB" --db "$db" list
[[ ! -s $OUT ]] || fail "published after all: $(cat "$OUT")"

note "2. the same by a first-sight query"
cp "$W/A" "$W/f"
SYMDB_INDEXER=$W/rewrite run "$SYMDB" --db "$db" query --obj "$W/f" $(addrs "$W/A")
grep -q "f: changed while it was indexed" "$ERR" || fail "query: no line saying the file changed: $(cat "$ERR")"
run "$SYMDB" --db "$db" list
[[ ! -s $OUT ]] || fail "the query published: $(cat "$OUT")"
[[ -z $(find "$db/tmp" -type f 2>/dev/null) ]] || fail "files left in DB/tmp: $(find "$db/tmp" -type f)"

note "3. each program indexed as itself"
for p in A B; do
	run "$SYMDB" --db "$db" build "$W/$p"
	expect_ok "build $p"
	llvm-symbolizer-14 --obj "$W/$p" $(addrs "$W/$p") >"$SCRATCH/want.$p"
	run "$SYMDB" --db "$db" query --no-build --obj "$W/$p" $(addrs "$W/$p")
	expect_ok "query $p"
	cmp -s "$OUT" "$SCRATCH/want.$p" || fail "$p answers differ from llvm-symbolizer-14: $(diff "$OUT" "$SCRATCH/want.$p" | head -4)"
done
note "a file written in place while indexed published nothing; A and B answer as themselves"
