#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# query_keep_hot.sh: the body cache of `symdb query` fills up and keeps its
# hot bodies (tools/cli_query_cache.c, cache_keep_hot): a profile-like
# stream whose 300 hot addresses of a C++ fixture make 30 % of the lines,
# the rest each a new address (outside the image: "??" answers, which are
# cached all the same, one slot a distinct address).  The cache's slots
# (CACHE_SLOTS / 2 = 65,536 keys) fill after some 94,000 lines, within
# the first two batches (BATCH_LINES); the next window's lookup keeps the
# bodies hit since (the hot ones), moved to the start of the body text,
# and drops the rest; every later hot line is printed from the moved copy.
# Hits stay above a quarter of the lookups, so the cache is never
# switched off.  The output must be
# llvm-symbolizer-14's on the same input, byte for byte, from a file and
# from a pipe.
source "$(dirname "$0")/lib.sh"

db=$SCRATCH/db
cpp=$FIXTURES/full/cpp_g++_O2_pie
run "$SYMDB" build --db "$db" "$cpp"
expect_ok "build"

# 300 hot addresses spread over the executable LOAD segment, drawn with a
# skew; fresh addresses from 0x10000000 up, none twice.
llvm-readelf-14 -lW "$cpp" | python3 -c '
import random, sys
for l in sys.stdin:
    f = l.split()
    if f[:1] == ["LOAD"] and "E" in "".join(f[6:-1]):
        start, size = int(f[2], 16), int(f[5], 16)
rng = random.Random(20261126)
hot = ["0x%x" % a for a in rng.sample(range(start, start + size), 300)]
weights = [1.0 / (i + 1) ** 0.8 for i in range(len(hot))]
fresh = 0x10000000
lines = []
for i in range(160000):
    if rng.random() < 0.3:
        lines.append(rng.choices(hot, weights)[0])
    else:
        lines.append("0x%x" % fresh)
        fresh += 1
print("\n".join(lines))
' >"$SCRATCH/in.txt"

llvm_query "$cpp" <"$SCRATCH/in.txt" >"$SCRATCH/expect" 2>/dev/null ||
	fail "llvm-symbolizer-14 on the input"
run_in "$SCRATCH/in.txt" "$SYMDB" query --db "$db" --obj "$cpp"
expect_ok "query"
cmp -s "$OUT" "$SCRATCH/expect" ||
	fail "output differs from llvm-symbolizer-14 ($(cmp "$OUT" "$SCRATCH/expect" 2>&1 | head -1))"
set +e
cat "$SCRATCH/in.txt" | "$SYMDB" query --db "$db" --obj "$cpp" >"$OUT" 2>"$ERR"
RC=$?
set -e
expect_ok "query (pipe)"
cmp -s "$OUT" "$SCRATCH/expect" ||
	fail "output (pipe) differs from llvm-symbolizer-14 ($(cmp "$OUT" "$SCRATCH/expect" 2>&1 | head -1))"
note "160,000 lines, the body cache full and its hot bodies kept: as llvm-symbolizer-14"
