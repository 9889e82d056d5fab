#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `symdb query --addr-kind runtime` needs --load-address: without it every
# runtime address used to be read against load address 0 (wrong answers,
# exit 0).  Now it is a usage error, worded and exited like symdb's other
# usage errors (the reverse case, --load-address without runtime, is the
# model).  With the load address, runtime addresses of a PIE (Base_Address
# 0, SPEC §10: vaddr = runtime - load) answer as llvm-symbolizer-14 answers
# the vaddrs.
source "$(dirname "$0")/lib.sh"

bin=$BIN/c_gcc_O2_pie.symtab
db=$SCRATCH/db
run "$SYMDB" build --db "$db" "$bin"
expect_ok build

# The model: symdb's existing usage error for the opposite mistake.
run "$SYMDB" query --db "$db" --obj "$bin" --load-address 0x1000 0x1139
expect_error "--load-address without runtime" "query: --load-address needs --addr-kind runtime"
((RC == 2)) || fail "--load-address without runtime: exit $RC, expected 2"

for spelling in "--addr-kind runtime" "--addr-kind=runtime"; do
	# shellcheck disable=SC2086
	run "$SYMDB" query --db "$db" --obj "$bin" $spelling 0x1139
	expect_error "$spelling without --load-address" \
		"symdb: query: --addr-kind runtime needs --load-address ADDR"
	((RC == 2)) || fail "$spelling without --load-address: exit $RC, expected 2"
	[[ -s $OUT ]] && fail "$spelling without --load-address printed an answer"
done
# From a query with no --obj (each line names its module) too.
printf '%s 0x1139\n' "$bin" >"$SCRATCH/lines"
run_in "$SCRATCH/lines" "$SYMDB" query --db "$db" --addr-kind runtime
expect_error "per-line query without --load-address" "--addr-kind runtime needs --load-address"
((RC == 2)) || fail "per-line query: exit $RC, expected 2"

# With it (0 included: a load address may be 0), the answers are
# llvm-symbolizer-14's for the vaddrs.
mapfile -t fns < <(llvm-nm-14 --defined-only "$bin" | awk '$2 ~ /^[Tt]$/ {print $1}' | head -5)
((${#fns[@]} > 0)) || fail "no functions in $bin"
load=0x7f0000000000
vaddrs=() runtime=()
for a in "${fns[@]}"; do
	vaddrs+=("0x$a")
	runtime+=("$(printf '0x%x' $((load + 16#$a)))")
done
llvm_query "$bin" "${vaddrs[@]}" >"$SCRATCH/expect"
run "$SYMDB" query --db "$db" --obj "$bin" --addr-kind runtime --load-address "$load" "${runtime[@]}"
expect_ok "runtime with --load-address"
diff "$SCRATCH/expect" "$OUT" || fail "runtime addresses differ from llvm-symbolizer-14's vaddr answers"
run "$SYMDB" query --db "$db" --obj "$bin" --addr-kind runtime --load-address 0 "${vaddrs[@]}"
expect_ok "runtime with --load-address 0"
diff "$SCRATCH/expect" "$OUT" || fail "--load-address 0 differs from llvm-symbolizer-14"
note "runtime without --load-address: usage error; with it: ${#fns[@]} answers as llvm-symbolizer-14"
