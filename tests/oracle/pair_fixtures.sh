#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pair_fixtures.sh SYMDB SCRATCH GROUP: which symbol names the outermost frame
# gets, compared with llvm-symbolizer-14 on EVERY address of every executable
# section in LLVM, GNU and JSON styles (dwcompare.py).  Groups:
#   names  symbols LLVM 14 ignores by machine (SPEC §7.2): empty names on
#          RISC-V and ARM, "$d"/"$x" prefixes on AArch64, "$a"/"$d"/"$t"
#          prefixes on ARM; assembler fixtures and a clang -O2 RISC-V program
#   icf    identical code folded inside one unit (several line sequences at
#          one address): the sequence LLVM 14 picks (SPEC §7.6)
#   pair   a stripped binary and its debug file (one build-id, one index):
#          either file indexed first, either file queried (SPEC §7.2.2)
# Exit 77 (skipped, never a pass) when a compiler, linker or target a group
# needs is missing: the parts that can run still run and are compared.
set -euo pipefail
symdb=${1:?usage: pair_fixtures.sh SYMDB SCRATCH GROUP}
scratch=${2:?}
group=${3:?}
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../fixtures" && pwd)
work="$scratch/pair-$group"
rm -rf "$work"
mkdir -p "$work"
db="$work/db"
fail=0
skipped=0
have() { command -v "$1" >/dev/null 2>&1; }
skip() { echo "SKIP: $*"; skipped=1; }

compare() { # BIN [extra dwcompare args...]
	python3 "$here/dwcompare.py" --symdb "$symdb" --db "$db" --obj "$1" \
		--style LLVM,GNU,JSON "${@:2}" || fail=1
}

names() {
	have clang && have ld.lld || { skip "clang or ld.lld not found"; return; }
	local t s
	for t in aarch64-linux-gnu:names_aarch64 armv7-linux-gnueabihf:names_arm \
		riscv64-linux-gnu:names_riscv; do
		s=${t#*:}
		clang --target=${t%%:*} -c "$srcdir/$s.s" -o "$work/$s.o"
		ld.lld "$work/$s.o" -o "$work/$s"
		compare "$work/$s"
	done
	clang --target=riscv64-linux-gnu -O2 -g -nostdlib -fuse-ld=lld \
		"$srcdir/names_riscv.c" -o "$work/names_riscv_c"
	compare "$work/names_riscv_c"
}

icf() {
	have ld.lld || { skip "ld.lld not found"; return; }
	# gcc folds identical functions itself (-fipa-icf) into aliases: one
	# sequence; keep both bodies for the linker to fold instead.
	g++ -O2 -g -fno-ipa-icf -ffunction-sections -fuse-ld=lld -Wl,--icf=all \
		"$srcdir/icf_fold.cpp" -o "$work/icf-gcc"
	compare "$work/icf-gcc"
	if have clang++; then
		clang++ -O2 -g -ffunction-sections -fuse-ld=lld -Wl,--icf=all \
			"$srcdir/icf_fold.cpp" -o "$work/icf-clang"
		compare "$work/icf-clang"
	else
		skip "clang++ not found"
	fi
}

case $group in
names) names ;;
icf) icf ;;
*) echo "pair_fixtures.sh: unknown group $group" >&2; exit 2 ;;
esac
((fail)) && exit 1
((skipped)) && exit 77
exit 0
