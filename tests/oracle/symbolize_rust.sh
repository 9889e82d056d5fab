#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# symbolize_rust.sh SYMDB DRIVER SCRATCH: Rust linkage names (symbolize_rust.c: a v0 name, a
# v0 generic and a legacy _ZN...17h<hash>E name) demangled by
# symdb_symbolize() (through sym_driver) and by `symdb query`, each compared
# byte for byte with llvm-symbolizer-14, with and without demangling; and
# the demangled forms must be the Rust ones (a build without Rust
# demangling fails here).  Exit 77 when gcc or llvm-symbolizer-14 is missing.
set -euo pipefail
symdb=${1:?usage: symbolize_rust.sh SYMDB DRIVER SCRATCH}
driver=${2:?}
scratch=${3:?}
here=$(cd "$(dirname "$0")" && pwd)
for t in gcc nm llvm-symbolizer-14; do
	if ! command -v "$t" >/dev/null; then
		echo "symbolize_rust.sh: $t not found; skipping"
		exit 77
	fi
done
rm -rf "$scratch"
mkdir -p "$scratch"
bin="$scratch/fx_rust"
gcc -g -O1 "$here/symbolize_rust.c" -o "$bin"
db="$scratch/db"
"$symdb" --db "$db" build "$bin" >/dev/null

# Every function's first and second byte, in an unsorted order.
mapfile -t addrs < <(nm "$bin" | awk '$2 == "T" && ($3 ~ /^_R/ || $3 ~ /^_ZN7mycrate/) {print $1}' |
	while read -r a; do printf '0x%x\n0x%x\n' $((16#$a + 1)) $((16#$a)); done | sort -r)
if (( ${#addrs[@]} != 6 )); then
	echo "symbolize_rust.sh: expected 3 Rust-named functions in $bin, found $(( ${#addrs[@]} / 2 ))"
	exit 1
fi
fail=0
for dm in --demangle --no-demangle; do
	want=$(printf '%s\n' "${addrs[@]}" | llvm-symbolizer-14 "$dm" --obj "$bin")
	drv_arg=()
	[[ $dm == --no-demangle ]] && drv_arg=(--no-demangle)
	got=$(printf "path $bin vaddr %s\n" "${addrs[@]}" | "$driver" "$db" "${drv_arg[@]}")
	cli=$(printf '%s\n' "${addrs[@]}" | "$symdb" --db "$db" query "$dm" --obj "$bin")
	if [[ $got != "$want" ]]; then
		echo "symbolize_rust.sh: symdb_symbolize $dm differs from llvm-symbolizer-14:"
		diff <(echo "$want") <(echo "$got") || true
		fail=1
	fi
	if [[ $cli != "$want" ]]; then
		echo "symbolize_rust.sh: symdb query $dm differs from llvm-symbolizer-14:"
		diff <(echo "$want") <(echo "$cli") || true
		fail=1
	fi
	if [[ $dm == --demangle ]]; then
		for name in 'mycrate::compute' 'mycrate::inner::map::<u32>' 'mycrate::inner::legacy'; do
			if ! grep -qF -- "$name" <<<"$got"; then
				echo "symbolize_rust.sh: '$name' not in the demangled output:"
				echo "$got"
				fail=1
			fi
		done
	fi
done
(( fail == 0 )) && echo "symbolize_rust.sh: ${#addrs[@]} addresses of Rust-named functions match llvm-symbolizer-14"
exit $fail
