#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pair_fixtures.sh SYMDB SCRATCH GROUP [PAIR_API]: which symbol names the outermost frame
# gets, compared with llvm-symbolizer-14 on EVERY address of every executable
# section in LLVM, GNU and JSON styles (dwcompare.py).  Groups:
#   names  symbols LLVM 14 ignores by machine (SPEC §7.2): empty names on
#          RISC-V and ARM, "$d"/"$x" prefixes on AArch64, "$a"/"$d"/"$t"
#          prefixes on ARM; assembler fixtures and a clang -O2 RISC-V program
#   icf    identical code folded inside one unit (several line sequences at
#          one address): the sequence LLVM 14 picks (SPEC §7.6)
#   pair   a stripped binary and its debug file (one build-id, one index):
#          either file indexed first, either file queried (SPEC §7.2.2); the
#          debug file found by build-id under a directory and by debuglink
#   real   the same for Debian's libc.so.6 and its libc6-dbg file (sampled)
# Exit 77 (skipped, never a pass) when a compiler, linker or target a group
# needs is missing: the parts that can run still run and are compared.
set -euo pipefail
symdb=${1:?usage: pair_fixtures.sh SYMDB SCRATCH GROUP}
scratch=${2:?}
group=${3:?}
pair_api=${4:-}
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
	# gcc's own folding (-fipa-icf, on at -O2): aliases and thunks
	g++ -O2 -g "$srcdir/icf_fold.cpp" -o "$work/icf-gcc-ipa"
	compare "$work/icf-gcc-ipa"
	if have clang++; then
		clang++ -O2 -g -ffunction-sections -fuse-ld=lld -Wl,--icf=all \
			"$srcdir/icf_fold.cpp" -o "$work/icf-clang"
		compare "$work/icf-clang"
	else
		skip "clang++ not found"
	fi
}

# pair_check LABEL DB BIN DEBUG [dwcompare args...]: both files of a pair,
# each queried by name, every executable address of BIN.
pair_check() {
	local label=$1 d=$2 bin=$3 dbg=$4
	shift 4
	echo "-- $label: $bin"
	python3 "$here/dwcompare.py" --symdb "$symdb" --db "$d" --obj "$bin" --no-build \
		--style LLVM,GNU,JSON "$@" || fail=1
	echo "-- $label: $dbg"
	python3 "$here/dwcompare.py" --symdb "$symdb" --db "$d" --obj "$dbg" --addr-obj "$bin" \
		--no-build --style LLVM,GNU,JSON "$@" || fail=1
}

# expect_build DB WANT FILE [build args...]: symdb build prints WANT
# ("indexed", "skipped", "replaced an index without this file's symbol
# table") for FILE.
expect_build() {
	local d=$1 want=$2 out
	shift 2
	out=$("$symdb" --db "$d" build "$@") || { echo "FAIL: symdb build $*"; fail=1; return; }
	echo "$out"
	if [[ $out != *"$want"* ]]; then
		echo "FAIL: symdb build $*: wanted '$want'"
		fail=1
	fi
}

# expect_api DB FILE WANT: pair_api (the C API's choice of table) prints WANT.
expect_api() {
	[[ -n $pair_api ]] || return 0
	local got
	got=$("$pair_api" "$1" "$2") || { echo "FAIL: pair_api $2"; fail=1; return; }
	if [[ $got != "$3" ]]; then
		echo "FAIL: pair_api $2: '$got', wanted '$3'"
		fail=1
	fi
}

# Both orders of indexing for one pair; the debug file is found by build-id
# under DIR (--debug-dir / --debug-file-directory) or by .gnu_debuglink
# beside the binary (DIR empty).
pair_orders() {
	local name=$1 bin=$2 dbg=$3 dir=$4
	local b=() l=(--llvm-arg=--debug-file-directory=/nonexistent)
	if [[ -n $dir ]]; then
		b=(--debug-dir "$dir")
		l=(--llvm-arg=--debug-file-directory="$dir")
	fi
	# the stripped binary first: it finds its debug file, the index holds
	# both tables; the debug file is then already indexed
	expect_build "$work/db-$name-bin" "indexed" "${b[@]}" "$bin"
	pair_check "$name, binary first" "$work/db-$name-bin" "$bin" "$dbg" "${l[@]}"
	expect_api "$work/db-$name-bin" "$bin" "names=dynsym alt=0 missing=0"
	expect_api "$work/db-$name-bin" "$dbg" "names=symtab alt=1 missing=0"
	expect_build "$work/db-$name-bin" "skipped" "$dbg"
	# the debug file first: right for itself, and the binary's table is
	# missing; the binary then completes the index (SPEC §12.5) and both
	# are right
	expect_build "$work/db-$name-dbg" "indexed" "$dbg"
	python3 "$here/dwcompare.py" --symdb "$symdb" --db "$work/db-$name-dbg" --obj "$dbg" \
		--addr-obj "$bin" --no-build --style LLVM,GNU,JSON "${l[@]}" || fail=1
	expect_api "$work/db-$name-dbg" "$dbg" "names=symtab alt=0 missing=0"
	expect_api "$work/db-$name-dbg" "$bin" "names=dynsym alt=0 missing=1"
	expect_build "$work/db-$name-dbg" "replaced an index without this file's symbol table" \
		"${b[@]}" "$bin"
	pair_check "$name, debug file first" "$work/db-$name-dbg" "$bin" "$dbg" "${l[@]}"
	expect_api "$work/db-$name-dbg" "$bin" "names=dynsym alt=0 missing=0"
	expect_api "$work/db-$name-dbg" "$dbg" "names=symtab alt=1 missing=0"
}

pair() {
	local dir="$work/dbg" f id
	gcc -O2 -g -fPIC -shared -Wl,--version-script="$srcdir/pair_lib.map" \
		"$srcdir/pair_lib.c" -o "$work/libpair.so.full"
	g++ -O2 -g "$srcdir/pair_main.cpp" -o "$work/main.full" -L"$work" -l:libpair.so.full
	# by build-id under a debug directory, --strip-all (only .dynsym left)
	for f in libpair.so main; do
		id=$(readelf -n "$work/$f.full" | awk '/Build ID/ {print $3}')
		mkdir -p "$dir/.build-id/${id:0:2}"
		objcopy --only-keep-debug "$work/$f.full" "$dir/.build-id/${id:0:2}/${id:2}.debug"
		strip --strip-all "$work/$f.full" -o "$work/$f"
		pair_orders "bid-$f" "$work/$f" "$dir/.build-id/${id:0:2}/${id:2}.debug" "$dir"
	done
	# by .gnu_debuglink beside the binary, plain `strip`
	mkdir -p "$work/link"
	cp "$work/libpair.so.full" "$work/link/libpair.so"
	objcopy --only-keep-debug "$work/link/libpair.so" "$work/link/libpair.so.debug"
	strip "$work/link/libpair.so"
	(cd "$work/link" && objcopy --add-gnu-debuglink=libpair.so.debug libpair.so)
	pair_orders link "$work/link/libpair.so" "$work/link/libpair.so.debug" ""
}

# Debian's libc.so.6 and its libc6-dbg file (a sample of addresses).
real_libc() {
	local lib id dbg
	lib=$(gcc -print-file-name=libc.so.6)
	lib=$(readlink -f "$lib")
	id=$(readelf -n "$lib" 2>/dev/null | awk '/Build ID/ {print $3}')
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	if [[ -z $id || ! -f $dbg ]]; then
		skip "no libc6-dbg debug file for $lib (apt-get install libc6-dbg)"
		return
	fi
	local s=(--sample 20000 --sample-others 4000)
	expect_build "$work/db-libc-bin" "indexed" "$lib"
	pair_check "libc, binary first" "$work/db-libc-bin" "$lib" "$dbg" "${s[@]}"
	expect_build "$work/db-libc-dbg" "indexed" "$dbg"
	expect_build "$work/db-libc-dbg" "replaced an index without this file's symbol table" "$lib"
	pair_check "libc, debug file first" "$work/db-libc-dbg" "$lib" "$dbg" "${s[@]}"
}

case $group in
names) names ;;
icf) icf ;;
pair) pair ;;
real) real_libc ;;
*) echo "pair_fixtures.sh: unknown group $group" >&2; exit 2 ;;
esac
((fail)) && exit 1
((skipped)) && exit 77
exit 0
