#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# query_rss.sh: `symdb query`'s peak RSS stays within the bounds README
# "Memory" states whatever the names it prints (96 MiB: the name and body
# budgets) and however much of an index it reads (64 MiB).
#
# Names.  A synthetic index
# (rel_bigindex with PARAMS: 12,000 symbols whose mangled C++ names take
# some 270 bytes each in the index but demangle to 5.4 KiB, 65 MB in all)
# is asked for every symbol once, in a scrambled order, on stdin.  Every
# name is distinct, so the demangled-name cache, the bodies of a window and
# the body cache all fill up: the peak RSS (GNU time, from wait4) is what
# their budgets allow (measured 85 MiB, the names' compressed store
# included), not what the input holds (65 MB of names, which an unbounded
# cache would keep on top of the rest).
# The names printed are checked against llvm-cxxfilt-14 on a sample of the
# symbols.
#
# Index pages.  A 64 MiB synthetic index (rel_bigindex: 1.4 M symbols with
# plain names) is asked for every other symbol in address order: each
# window of requests reads the next slice of the file, and every page read
# would stay mapped to the end (88 MiB of peak RSS before the budget);
# `symdb query` trims the image's pages between windows once they pass the
# budget (cli_query_mem.c), so the peak stays under the bound.  The answers
# are known by construction.  Never a time.
source "$(dirname "$0")/../cli/lib.sh"
require /usr/bin/time
require llvm-cxxfilt-14
: "${REL_BIGINDEX:?REL_BIGINDEX (the rel_bigindex helper) must be set}"
# (ldd's whole output first: `ldd | grep -q` under pipefail fails when grep
# quits before ldd has written everything, and then nothing was skipped)
if [[ $(ldd "$SYMDB" 2>/dev/null) =~ lib(asan|tsan) ]]; then
	echo "SKIP: a sanitizer's shadow memory and quarantine are not symdb's RSS"
	exit 77
fi

bound_kib=$((64 << 10))
names_bound_kib=$((96 << 10))
db=$SCRATCH/db
id=c0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ff
nsyms=12000
params=50
"$REL_BIGINDEX" "$SCRATCH/names.symdb" "$nsyms" "$id" "$params" || fail "rel_bigindex"
run "$SYMDB" import --db "$db" "$SCRATCH/names.symdb"
expect_ok "import names.symdb"

# symbol i covers [0x1000 + 0x40 i, +0x40); 7919 is prime to nsyms, so
# i * 7919 mod nsyms visits every symbol once, scrambled
awk -v n="$nsyms" 'BEGIN { for (k = 0; k < n; k++) printf "0x%x\n", 4096 + 64 * ((k * 7919) % n) + 17 }' \
	>"$SCRATCH/addrs"

# The output (65 MB) is not kept: each answer is LLVM style's three lines
# (name, "??:0:0", blank); every 997th answer's name is kept for the check.
/usr/bin/time -f %M -o "$SCRATCH/.kib" "$SYMDB" query --db "$db" --uuid "$id" \
	<"$SCRATCH/addrs" 2>"$ERR" | awk 'NR % 3 == 1 && (NR - 1) / 3 % 997 == 0' >"$OUT" ||
	fail "symdb query failed: $(head -c 300 "$ERR")"
[[ ${PIPESTATUS[0]} == 0 ]] || fail "symdb query failed: $(head -c 300 "$ERR")"
peak=$(cat "$SCRATCH/.kib")

# the oracle: the same sample's mangled names through llvm-cxxfilt-14
ty=$(printf 'L%.0s' $(seq 100))
subs=$(printf 'S0_%.0s' $(seq $((params - 1))))
for ((k = 0; k < nsyms; k += 997)); do
	printf '_Z28bigindex_function_%010dN2ns100%sE%s\n' $(((k * 7919) % nsyms)) "$ty" "$subs"
done | llvm-cxxfilt-14 >"$SCRATCH/want"
[[ $(wc -l <"$SCRATCH/want") -ge 12 ]] || fail "the oracle printed too little"
cmp -s "$OUT" "$SCRATCH/want" || fail "names differ from llvm-cxxfilt-14: $(diff "$OUT" "$SCRATCH/want" | head -c 400)"

note "$nsyms distinct names of $(($(head -1 "$SCRATCH/want" | wc -c) - 1)) bytes demangled; peak RSS $peak KiB (bound $names_bound_kib KiB)"
((peak <= names_bound_kib)) || fail "symdb query peaked at $peak KiB of RSS, over the $names_bound_kib KiB bound (README \"Memory\")"

big_id=b16b16b16b16b16b16b16b16b16b16b16b16b16b
nbig=1400000
"$REL_BIGINDEX" "$SCRATCH/big.symdb" "$nbig" "$big_id" || fail "rel_bigindex big"
run "$SYMDB" import --db "$db" "$SCRATCH/big.symdb"
expect_ok "import big.symdb"
rm -f "$SCRATCH/big.symdb"
awk -v n="$nbig" 'BEGIN { for (i = 0; i < n; i += 2) printf "0x%x\n", 4096 + 64 * i + 17 }' \
	>"$SCRATCH/addrs"
/usr/bin/time -f %M -o "$SCRATCH/.kib" "$SYMDB" query --db "$db" --uuid "$big_id" \
	<"$SCRATCH/addrs" 2>"$ERR" | awk 'NR % 3 == 1 && (NR - 1) / 3 % 9973 == 0' >"$OUT" ||
	fail "symdb query failed: $(head -c 300 "$ERR")"
[[ ${PIPESTATUS[0]} == 0 ]] || fail "symdb query failed: $(head -c 300 "$ERR")"
peak=$(cat "$SCRATCH/.kib")
awk -v n="$nbig" 'BEGIN { for (k = 0; 2 * k < n; k += 9973) printf "bigindex_function_%010d\n", 2 * k }' \
	>"$SCRATCH/want"
cmp -s "$OUT" "$SCRATCH/want" || fail "wrong answers: $(diff "$OUT" "$SCRATCH/want" | head -c 400)"
note "$((nbig / 2)) addresses in order over a $(($(stat -c %s "$db"/images/b1/*.symdb) >> 10)) KiB index; peak RSS $peak KiB"
((peak <= bound_kib)) || fail "symdb query peaked at $peak KiB of RSS over the big index, over the $bound_kib KiB bound (README \"Memory\")"
echo "PASS query_rss"
