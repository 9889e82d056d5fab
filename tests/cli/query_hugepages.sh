#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# query_hugepages.sh: `symdb query`'s working buffers ask for transparent
# huge pages once a run is long, and only then (README "Memory", "Huge
# pages"; tools/cli_bigbuf.c, cli_query_mem.c).  The process is looked at
# while it waits for more of stdin: /proc/PID/smaps marks a mapping the
# kernel may back with huge pages "THPeligible: 1" (madvise(MADV_HUGEPAGE)
# on a 2 MiB-aligned range in the "madvise" mode; any large anonymous
# mapping in "always"), whether or not free huge pages were found, so the
# check does not depend on the machine's memory.
#   - a long stream (60,000 lines in one batch) of a C++ program with
#     DWARF: at least 2 MiB of eligible anonymous mappings, in "madvise"
#     mode as in "always";
#   - one address, the stream held open: none, in "madvise" mode (short
#     runs allocate in 4 KiB pages touched lazily);
#   - the long stream's answers equal llvm-symbolizer-14's.
# Skipped when the kernel has no THP or it is "never", and in sanitizer
# builds (their allocator, not symdb's buffers, makes the mappings).
source "$(dirname "$0")/lib.sh"

thp=/sys/kernel/mm/transparent_hugepage/enabled
[[ -r $thp ]] || { echo "SKIP: no $thp (a kernel without transparent huge pages)"; exit 77; }
mode=$(grep -o '\[[a-z]*\]' "$thp" | tr -d '[]')
[[ $mode == never ]] && { echo "SKIP: transparent huge pages are off ($thp: never)"; exit 77; }
if grep -qaE '__(a|t|m)san_init' "$SYMDB"; then
	echo "SKIP: a sanitizer build: its allocator makes the mappings looked at"
	exit 77
fi
require llvm-readelf-14 llvm-symbolizer-14

bin=$FIXTURES/full/cpp_g++_O2_pie
db=$SCRATCH/db
run "$SYMDB" build --db "$db" "$bin"
expect_ok "build"

# 60,000 addresses spread over the executable segment, in one batch
llvm-readelf-14 -lW "$bin" | python3 -c '
import random, sys
rnd = random.Random(7)
for l in sys.stdin:
    f = l.split()
    if f[:1] == ["LOAD"] and "E" in "".join(f[6:-1]):
        start, size = int(f[2], 16), int(f[5], 16)
        for _ in range(60000):
            print("0x%x" % rnd.randrange(start, start + size))
        break
' >"$SCRATCH/long.txt"
(($(wc -l <"$SCRATCH/long.txt") == 60000)) || fail "no executable LOAD segment in $bin"

# eligible_kib PID: KiB of anonymous mappings of PID the kernel may back
# with huge pages
eligible_kib() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { anon = (NF == 5) } /^Size:/ { size = $2 }
	     /^THPeligible:/ { if (anon && $2 == 1) sum += size } END { print sum + 0 }' \
		"/proc/$1/smaps"
}

# query_held INPUT OUT: start symdb query on INPUT followed by a stdin that
# stays open, wait until OUT has as many answers as INPUT has lines, and
# leave its pid in $held_pid (the caller closes the fifo's writer: exec 7>&-)
query_held() {
	local in=$1 out=$2 n
	n=$(wc -l <"$in")
	rm -f "$SCRATCH/fifo"
	mkfifo "$SCRATCH/fifo"
	"$SYMDB" query --db "$db" --obj "$bin" <"$SCRATCH/fifo" >"$out" 2>"$SCRATCH/held.err" &
	held_pid=$!
	exec 7>"$SCRATCH/fifo"
	cat "$in" >&7
	for _ in $(seq 600); do # answers end with an empty line each
		(($(grep -c '^$' "$out" || true) >= n)) && return 0
		kill -0 "$held_pid" 2>/dev/null || fail "symdb query exited early: $(head -c 300 "$SCRATCH/held.err")"
		sleep 0.1
	done
	fail "symdb query did not answer $n lines in 60 s"
}

query_held "$SCRATCH/long.txt" "$SCRATCH/long.got"
long_kib=$(eligible_kib "$held_pid")
exec 7>&-
wait "$held_pid" || fail "symdb query exited $? on the long stream: $(head -c 300 "$SCRATCH/held.err")"
note "long stream: $long_kib KiB of anonymous mappings eligible for huge pages ($mode mode)"
((long_kib >= 2048)) || fail "a long run's buffers are not eligible for huge pages ($long_kib KiB; $thp: $mode)"

llvm-symbolizer-14 --obj "$bin" <"$SCRATCH/long.txt" >"$SCRATCH/long.want"
cmp -s "$SCRATCH/long.want" "$SCRATCH/long.got" || fail "the long stream's answers differ from llvm-symbolizer-14's"

head -1 "$SCRATCH/long.txt" >"$SCRATCH/one.txt"
query_held "$SCRATCH/one.txt" "$SCRATCH/one.got"
one_kib=$(eligible_kib "$held_pid")
exec 7>&-
wait "$held_pid" || fail "symdb query exited $? on one address"
note "one address: $one_kib KiB eligible"
if [[ $mode == madvise ]]; then
	((one_kib == 0)) || fail "a one-address run asked for huge pages ($one_kib KiB eligible)"
fi
echo "PASS query_hugepages"
