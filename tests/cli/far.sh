#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# far.sh: no 4 GiB ceilings.  The far fixtures (x86_64 and aarch64) have code
# 8 GiB apart; their index files must use 8-byte address columns (SPEC §5
# Address_Size) and resolve both ends, and everything in between, exactly
# like llvm-symbolizer-14 (also as offsets and file offsets beyond 4 GiB).
source "$(dirname "$0")/lib.sh"

db=$SCRATCH/db
for f in "$BIN/far_x86_64.symtab" "$BIN/far_aarch64.symtab"; do
	run "$SYMDB" build --db "$db" "$f"
	expect_ok "build $f"
	run "$SYMDB" info --db "$db" "$f"
	expect_ok "info $f"
	grep -Eq '^address size +8$' "$OUT" || fail "$f: info does not say 'address size 8': $(grep -i 'address size' "$OUT")"
	printf '%s\n' 0x3fffff 0x400000 0x400001 0x400004 0x400005 0x100000000 0x1ffffffff \
		0x200400000 0x200400002 0x200400004 0x200400006 0x200400009 0x20040000f \
		0x200410000 0x200410007 0x200410008 0xffffffffffffffff >"$SCRATCH/addrs"
	llvm_query "$f" <"$SCRATCH/addrs" >"$SCRATCH/expect"
	run_in "$SCRATCH/addrs" "$SYMDB" query --db "$db" --obj "$f"
	expect_ok "query $f"
	cmp -s "$OUT" "$SCRATCH/expect" || fail "$f: differs from llvm-symbolizer: $(diff "$OUT" "$SCRATCH/expect" | head -8)"
	# the same high addresses as offsets from the image base (base = lowest PT_LOAD)
	base=$(llvm-readelf-14 -lW "$f" | awk '$1 == "LOAD" {print $3}' | sort | head -1)
	sed -n '2,$p' "$SCRATCH/addrs" | head -15 | while read -r a; do
		printf '0x%x\n' $((a - base))
	done >"$SCRATCH/offs"
	sed -n '2,16p' "$SCRATCH/addrs" | llvm_query "$f" >"$SCRATCH/expect-off"
	run_in "$SCRATCH/offs" "$SYMDB" query --db "$db" --obj "$f" --addr-kind offset
	expect_ok "query --addr-kind offset $f"
	cmp -s "$OUT" "$SCRATCH/expect-off" || fail "$f: offsets differ: $(diff "$OUT" "$SCRATCH/expect-off" | head -8)"
done
echo "PASS far"
