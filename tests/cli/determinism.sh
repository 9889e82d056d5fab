#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# determinism.sh: indexing the same input twice, into two databases and with
# --force into one, gives byte-identical index files (SPEC §14: no
# timestamps, pointers or hash order in the file) -- for C, C++, big-endian,
# far-apart and real-library inputs.
source "$(dirname "$0")/lib.sh"

inputs=("$BIN/c_gcc_O2_pie.symtab" "$BIN/cpp_g++_O2_rdyn.dynsym" "$BIN/cpp_clang++_O0_pie.symtab"
	"$BIN/nostd_ppc64.so.symtab" "$BIN/nostd_i386.symtab" "$BIN/far_x86_64.symtab")
[[ -f /lib/x86_64-linux-gnu/libc.so.6 ]] && inputs+=(/lib/x86_64-linux-gnu/libc.so.6)

for db in a b; do
	run "$SYMDB" build --db "$SCRATCH/$db" --no-dwarf "${inputs[@]}"
	expect_ok "build into $db"
done
n=0
while read -r f; do
	rel=${f#"$SCRATCH/a/"}
	cmp "$f" "$SCRATCH/b/$rel" || fail "$rel differs between two builds"
	n=$((n + 1))
done < <(index_files "$SCRATCH/a")
((n == ${#inputs[@]})) || fail "expected ${#inputs[@]} index files, got $n"
(cd "$SCRATCH/a" && find images -type f -name '*.symdb' | sort | xargs sha256sum) >"$SCRATCH/sums"

run "$SYMDB" build --db "$SCRATCH/a" --no-dwarf --force "${inputs[@]}"
expect_ok "build --force"
(cd "$SCRATCH/a" && sha256sum -c --quiet "$SCRATCH/sums") || fail "--force rebuild changed bytes"
echo "PASS determinism: $n index files identical across builds"
