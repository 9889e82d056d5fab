#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# sanitizer.sh: `symdb query` as the sanitizers' external symbolizer.  ASan
# runs "llvm-symbolizer --demangle --inlines --default-arch=<host>" and talks
# to it over a pipe, one 'CODE "MODULE" 0xOFFSET' line per frame, waiting for
# each answer.  A wrapper named llvm-symbolizer that execs `symdb query` must
# give a report whose frames are identical to the one llvm-symbolizer-14 gives
# (only the runtime addresses, which ASLR changes, are masked).
source "$(dirname "$0")/lib.sh"

cat >"$SCRATCH/overflow.c" <<'C'
#include <stdlib.h>
static inline int pick(const char *p, int i) { return p[i]; }
__attribute__((noinline)) int reader(int i)
{
	char *p = malloc(8);
	int r = pick(p, i);
	free(p);
	return r;
}
int main(int argc, char **argv) { (void)argv; return reader(argc + 8); }
C
prog=$SCRATCH/overflow
if ! clang -g -O1 -fsanitize=address "$SCRATCH/overflow.c" -o "$prog" 2>"$SCRATCH/cc.err"; then
	echo "SKIP: clang -fsanitize=address does not work here: $(head -1 "$SCRATCH/cc.err")"
	exit 77
fi
libc=$(ldd "$prog" | sed -n 's/.*libc\.so\.6 => \([^ ]*\).*/\1/p')
[[ -n $libc ]] || fail "cannot find the libc the program uses"

db=$SCRATCH/db
run "$SYMDB" build --db "$db" "$prog" "$libc"
expect_ok "build program and libc"

mkdir -p "$SCRATCH/wrap"
cat >"$SCRATCH/wrap/llvm-symbolizer" <<SH
#!/bin/sh
exec "$SYMDB" query --db "$db" "\$@"
SH
chmod +x "$SCRATCH/wrap/llvm-symbolizer"

# report SYMBOLIZER: the frames of the ASan report, addresses masked
report() {
	ASAN_SYMBOLIZER_PATH=$1 ASAN_OPTIONS=detect_leaks=0 "$prog" 2>&1 >/dev/null |
		grep -E '^ +#[0-9]+ ' | sed -E 's/^( +#[0-9]+) 0x[0-9a-f]+/\1 ADDR/' || true
}
report "$(command -v llvm-symbolizer-14)" >"$SCRATCH/expect"
report "$SCRATCH/wrap/llvm-symbolizer" >"$SCRATCH/got"
# The same through a symlink named llvm-symbolizer (symdb then acts as
# `symdb query` on $SYMDB_DIR).
mkdir -p "$SCRATCH/link"
ln -sf "$SYMDB" "$SCRATCH/link/llvm-symbolizer"
SYMDB_DIR=$db report "$SCRATCH/link/llvm-symbolizer" >"$SCRATCH/got.link"
cmp -s "$SCRATCH/got.link" "$SCRATCH/got" || fail "symdb run as llvm-symbolizer (symlink) differs"
[[ -s $SCRATCH/expect ]] || fail "the ASan report has no frames"
grep -q ' in reader ' "$SCRATCH/expect" || fail "llvm-symbolizer-14 did not symbolize the report"
if ! cmp -s "$SCRATCH/got" "$SCRATCH/expect"; then
	diff "$SCRATCH/got" "$SCRATCH/expect" | head -20 >&2
	fail "the ASan report symbolized by symdb differs from llvm-symbolizer-14's"
fi
echo "PASS sanitizer: $(wc -l <"$SCRATCH/got") ASan frames identical to llvm-symbolizer-14's"
