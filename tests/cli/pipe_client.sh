#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pipe_client.sh: one answer per request, always, in llvm-symbolizer-14's
# bytes, for a client that writes ONE request and waits for its answer
# before the next (ASan, pprof, perf).  pipe_client.py drives symdb and the
# oracle side by side with a deadline on every read.  The requests mix an
# indexed binary, binaries never indexed (first sight), a missing file, a
# text file, a directory, a FIFO, /dev/null, a binary whose index file is
# damaged, and addresses outside every section; in the LLVM, GNU and JSON
# styles, each with a fresh database.  Then --obj on a missing, a non-object
# and an unindexed file, one request at a time (before first sight: no
# answer at all, exit 1, and the client waited forever).
source "$(dirname "$0")/lib.sh"

py=$(dirname "$0")/pipe_client.py
F=$FIXTURES/full
indexed=$F/c_gcc_O2_pie
fresh1=$F/cpp_g++_O2_pie
fresh2=$F/cpplib_clang++_O2.so
damaged=$F/c_clang_O2_pie
text=$SCRATCH/notes.txt
text2=$SCRATCH/notes2.txt
printf 'not an object file\n' >"$text"
cp "$text" "$text2"
mkdir "$SCRATCH/adir"
mkfifo "$SCRATCH/fifo"

# addrs BIN N: N function addresses of BIN, spread over its text
addrs() {
	llvm-nm-14 --defined-only "$1" | awk '$2 ~ /^[tTwW]$/ { print "0x" $1 }' | sort -u |
		awk -v n="$2" '{ a[NR] = $0 } END { s = NR / n; if (s < 1) s = 1; for (i = 1; i <= NR && n-- > 0; i += s) print a[int(i)] }'
}
{
	echo "SUBST $SCRATCH/fifo $text2"
	for b in "$indexed" "$fresh1" "$damaged" "$fresh2"; do
		for a in $(addrs "$b" 6); do echo "$b $a"; done
		echo "\"$b\" 0x10"         # before every section
		echo "CODE $b 0xffffffffff" # past every section
	done
	for a in $(addrs "$fresh1" 4); do echo "CODE \"$fresh1\" $((a + 1))"; done
	echo "DATA $indexed 0x10"
	echo "$SCRATCH/missing 0x1000"
	echo "$SCRATCH/missing 0x1010"
	echo "DATA $SCRATCH/missing 0x1000"
	echo "$text 0x10"
	echo "$SCRATCH/adir 0x10"
	echo "$SCRATCH/fifo 0x10"
	echo "CODE $SCRATCH/fifo 0x20"
	echo "/dev/null 0x10"
	echo "$indexed $(addrs "$indexed" 1)"
} >"$SCRATCH/requests"

for style in LLVM GNU JSON; do
	db=$SCRATCH/db.$style
	run "$SYMDB" build --db "$db" "$indexed" "$damaged"
	expect_ok "setup build"
	f=$(index_files "$db" | grep "$(build_id "$damaged")")
	chmod u+w "$f"
	printf 'junk' >>"$f" # a damaged index file: its size no longer matches
	note "$style: $(grep -vc ^SUBST "$SCRATCH/requests") requests"
	python3 "$py" "$SCRATCH/requests" \
		-- llvm-symbolizer-14 --debug-file-directory=/nonexistent --output-style=$style \
		-- "$SYMDB" query --db "$db" --output-style=$style ||
		fail "$style: symdb's answers differ from llvm-symbolizer-14's"
done

# --obj FILE, one request at a time, for files llvm-symbolizer-14 cannot read
# and for one never indexed.
for obj in "$SCRATCH/missing" "$text" "$SCRATCH/adir" "$F/c_gcc_O0_pie"; do
	for style in LLVM JSON; do
		db=$SCRATCH/db.obj.$style
		{ for a in 0x10 0x1130 0x1140; do echo "$a"; done; } >"$SCRATCH/obj.requests"
		python3 "$py" "$SCRATCH/obj.requests" \
			-- llvm-symbolizer-14 --debug-file-directory=/nonexistent --output-style=$style --obj "$obj" \
			-- "$SYMDB" query --db "$db" --output-style=$style --obj "$obj" ||
			fail "--obj $obj ($style): symdb's answers differ from llvm-symbolizer-14's"
	done
done
echo "PASS pipe_client"
