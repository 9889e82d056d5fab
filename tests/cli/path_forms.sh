#!/bin/bash
# SPDX-License-Identifier: MIT
#
# path_forms.sh: --relativenames and --basenames on programs compiled from an
# absolute source path, in the source's directory and from another one (gcc
# and clang, DWARF 4 and 5).  GCC 12's DWARF 5 line table names the main file
# twice, as file 0 under directory 1 and as file 1 under directory 0 (the
# compilation directory): llvm-symbolizer-14 prints the second as "a.c"
# under --relativenames, so an index that keeps one relative form per full
# path prints "/dir/a.c" instead.  Every byte of every function is compared with
# llvm-symbolizer-14.  --basenames of a line-table name that is itself
# absolute (clang, compiled from another directory) is left out:
# tests/KNOWN_DIFFERENCES.md class 6 says why.
source "$(dirname "$0")/lib.sh"
require gcc clang

W=$SCRATCH/src
mkdir -p "$W" "$SCRATCH/elsewhere"
cat >"$W/a.c" <<'C'
#include "b.h"
static int g(int x) { return twice(x) + 1; }
int main(int c, char **v) { (void)v; return g(c); }
C
printf 'static inline int twice(int x) { return x * 2; }\n' >"$W/b.h"
progs=()
for cc in gcc clang; do
	for v in 4 5; do
	for o in 0 2; do
		for where in here elsewhere; do
			out=$SCRATCH/$cc-$v-O$o-$where
			dir=$W
			[[ $where == here ]] || dir=$SCRATCH/elsewhere
			(cd "$dir" && $cc -g -gdwarf-$v -O$o "$W/a.c" -o "$out")
			progs+=("$out")
		done
	done
	done
done
checked=0
for p in "${progs[@]}"; do
	# every byte of every function (main may sit in .text.startup)
	addrs=$(llvm-nm-14 -S --defined-only "$p" | python3 -c '
import sys
for line in sys.stdin:
    f = line.split()
    if len(f) == 4 and f[2] in "tT":
        a, n = int(f[0], 16), int(f[1], 16)
        print("\n".join("0x%x" % x for x in range(a, a + n)))')
	[[ -n $addrs ]] || fail "$p: no function symbols"
	forms=(--relativenames "")
	[[ $p == */clang-*-elsewhere ]] || forms+=(--basenames)
	for form in "${forms[@]}"; do
		want=$(llvm-symbolizer-14 $form --obj "$p" <<<"$addrs")
		got=$("$SYMDB" query $form --obj "$p" <<<"$addrs" 2>"$ERR") ||
			fail "$p $form: query failed: $(cat "$ERR")"
		[[ $got == "$want" ]] || fail "$p ${form:-default}: differs from llvm-symbolizer-14: $(diff <(echo "$want") <(echo "$got") | head -6)"
		checked=$((checked + $(wc -l <<<"$addrs")))
	done
done
note "${#progs[@]} programs, $checked address answers identical to llvm-symbolizer-14"
