#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# determinism.sh: indexing the same input twice, into two databases and with
# --force into one, gives byte-identical index files (SPEC §14: no
# timestamps, pointers or hash order in the file) -- for C, C++, big-endian,
# far-apart and real-library inputs; symbol tables only, then with DWARF
# (-g fixtures, libpython, libc with its libc6-dbg debug file) built -j 2.
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

note "with DWARF, -j 1 vs -j 2"
dw=("$FIXTURES/full/c_gcc_O2_pie" "$FIXTURES/full/cpp_g++_O2_pie" "$FIXTURES/full/cpp_clang++_O0_pie"
	"$FIXTURES/full/nostd_ppc64.so" "$FIXTURES/full/lib_clang_O2.so")
pylib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')/libpython3.11.so.1.0
if [[ -f $pylib ]]; then dw+=("$pylib"); else skip_part "$pylib not installed"; fi
[[ -f /lib/x86_64-linux-gnu/libc.so.6 ]] && dw+=(/lib/x86_64-linux-gnu/libc.so.6)
run "$SYMDB" build --db "$SCRATCH/c" "${dw[@]}"
expect_ok "build with DWARF into c"
run "$SYMDB" build --db "$SCRATCH/d" -j 2 "${dw[@]}"
expect_ok "build -j 2 with DWARF into d"
m=0
while read -r f; do
	rel=${f#"$SCRATCH/c/"}
	cmp "$f" "$SCRATCH/d/$rel" || fail "$rel (with DWARF) differs between two builds"
	m=$((m + 1))
done < <(index_files "$SCRATCH/c")
((m == ${#dw[@]})) || fail "expected ${#dw[@]} index files with DWARF, got $m"
echo "PASS determinism: $n symbol-table and $m DWARF index files identical across builds"
