#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# truncate_live.sh: an index file truncated under a running `symdb query`
# (issue 12, defect 8).  One query reads "MODULE ADDR" lines from a pipe over
# two indexed images and answers each batch as it arrives; after the first
# round of addresses, A's index file is truncated to half its size, and a
# second round is sent; then again with a cut inside the file's last page,
# which raises no SIGBUS.  Without the SIGBUS handler the query dies of SIGBUS
# (as it did before); with it, it answers everything: the first round for
# both images, and the second round for B, exactly as llvm-symbolizer-14
# does; A's second round as llvm-symbolizer-14 answers for a module it
# cannot read; one stderr line names A, and the exit code is 4.
source "$(dirname "$0")/lib.sh"

db=$SCRATCH/db
A=$FIXTURES/full/cpp_g++_O2_pie
B=$FIXTURES/full/c_gcc_O2_pie
run "$SYMDB" build --db "$db" "$A" "$B"
expect_ok "build"
ua=$(build_id "$A")
fa=$db/images/${ua:0:2}/$ua.symdb
[[ -f $fa ]] || fail "no index file $fa"

# addrs BIN: the start and the middle of every function (llvm-nm-14)
addrs() {
	llvm-nm-14 -S --defined-only "$1" | python3 -c '
import sys
for l in sys.stdin:
    f = l.split()
    if len(f) == 4 and f[2] in "tTwW":
        a, s = int(f[0], 16), int(f[1], 16)
        print("0x%x\n0x%x" % (a, a + s // 2))
'
}
addrs "$A" | sed "s|^|$A |" >"$SCRATCH/a.in"
addrs "$B" | sed "s|^|$B |" >"$SCRATCH/b.in"
na=$(wc -l <"$SCRATCH/a.in")
nb=$(wc -l <"$SCRATCH/b.in")
((na > 50 && nb > 20)) || fail "too few addresses ($na, $nb)"
# Each round interleaves the two images; a request's answer ends with an
# empty line (LLVM style).
paste -d'\n' "$SCRATCH/a.in" "$SCRATCH/b.in" | sed '/^$/d' >"$SCRATCH/round"
n=$(wc -l <"$SCRATCH/round")

# answers FILE: how many requests FILE answers (empty lines)
answers() { grep -c '^$' "$1" || true; }
# wait_answers FILE N: until FILE answers N requests, or the query died
wait_answers() {
	local i
	for ((i = 0; i < 600; i++)); do
		(($(answers "$1") >= $2)) && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# live_cut CUT LABEL: the scenario above, A's index cut to CUT bytes
live_cut() {
	local cut=$1 label=$2
	rm -f "$SCRATCH/in" "$SCRATCH/out" "$SCRATCH/err"
	mkfifo "$SCRATCH/in"
	"$SYMDB" query --db "$db" <"$SCRATCH/in" >"$SCRATCH/out" 2>"$SCRATCH/err" &
	pid=$!
	exec 3>"$SCRATCH/in"
	cat "$SCRATCH/round" >&3
	wait_answers "$SCRATCH/out" "$n" || fail "first round: $(answers "$SCRATCH/out") of $n answers"

	size=$(stat -c %s "$fa")
	truncate -s "$cut" "$fa"
	note "$label: truncated $(basename "$fa") from $size to $cut bytes under the query"

	cat "$SCRATCH/round" >&3
	exec 3>&-
	set +e
	wait "$pid"
	RC=$?
	set -e
	cp "$SCRATCH/out" "$OUT"
	cp "$SCRATCH/err" "$ERR"
	no_crash "query over a truncated index"
	(($(answers "$OUT") == 2 * n)) || fail "$(answers "$OUT") answers, expected $((2 * n))"
	((RC == 4)) || fail "exit $RC, expected 4 (a damaged index file)"

	# The oracle: round 1 as it is; round 2 with A's lines naming a file that
	# does not exist (llvm-symbolizer-14 prints its empty answer for them).
	{
		cat "$SCRATCH/round"
		sed "s|^$A |$SCRATCH/unreadable |" "$SCRATCH/round"
	} >"$SCRATCH/oracle.in"
	llvm-symbolizer-14 --debug-file-directory=/nonexistent <"$SCRATCH/oracle.in" \
		>"$SCRATCH/expect" 2>/dev/null
	if ! cmp -s "$OUT" "$SCRATCH/expect"; then
		diff "$OUT" "$SCRATCH/expect" | head -20 >&2
		fail "answers differ from llvm-symbolizer-14's (A unreadable after the truncation)"
	fi
	msg="symdb: $A: index file changed while in use (truncated?): its addresses are not resolved from here on"
	grep -qxF "$msg" "$ERR" || fail "stderr does not say: $msg"
	note "$label: query survived: $((2 * n)) answers, B's all right, A's empty after the truncation; exit 4"
}

cp "$fa" "$SCRATCH/a.index"
# a cut to half the file: the reads past the new end raise SIGBUS
size=$(stat -c %s "$fa")
live_cut $((size / 2)) "half"
# a cut inside the file's last page, just before its last non-zero byte: no
# SIGBUS (the kernel shows zeros past the new end of that page); before,
# the query answered from those zeros, with no message and exit 0
cp "$SCRATCH/a.index" "$fa"
last=$(python3 -c 'import sys; b = open(sys.argv[1], "rb").read().rstrip(b"\0"); print(len(b) - 1)' "$fa")
((last > size - 4096)) || fail "the index's last non-zero byte is not in its last page"
live_cut "$last" "last page"

# The next query sees the truncated file at open, as any damaged file.
run "$SYMDB" query --db "$db" --no-build --obj "$A" 0x0
expect_error "query of the truncated index" "(truncated?)"
