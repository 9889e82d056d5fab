#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pprof_client.sh: symdb as pprof's llvm-symbolizer, on a binary nobody
# indexed.  pprof (internal/binutils/addr2liner_llvm.go) starts
# `llvm-symbolizer --inlining -demangle=false --output-style=JSON`, writes
# `CODE ./bin 0x...` (or `DATA ./bin 0x...`) lines one at a time and reads
# one JSON line per answer (older releases passed `-inlining`, which
# llvm-symbolizer-14 itself rejects; the LLVM-style answers to `CODE`
# lines are checked too).  Each
# answer, run through a symlink named llvm-symbolizer -> symdb, must be
# llvm-symbolizer-14's (pipe_client.py), mangled names and inline frames
# included.  Before first sight the binary showed as nothing at all.
source "$(dirname "$0")/lib.sh"

py=$(dirname "$0")/pipe_client.py
mkdir -p "$SCRATCH/w" "$SCRATCH/sym"
cp "$FIXTURES/full/cpp_g++_O2_pie" "$SCRATCH/w/server"
ln -s "$SYMDB" "$SCRATCH/sym/llvm-symbolizer"
cd "$SCRATCH/w"

mk_requests() { # mk_requests KIND: KIND ./server ADDR lines (a profile's)
	llvm-nm-14 --defined-only server | awk '$2 ~ /^[tTwW]$/ { print $1 }' | sort -u | head -40 |
		while read -r a; do
			echo "$1 ./server 0x$(printf '%x' $((16#$a + 3)))"
		done
}
mk_requests CODE >code.requests
llvm-nm-14 --defined-only server | awk '$2 ~ /^[dDbB]$/ { print "DATA ./server 0x" $1 }' | head -10 >data.requests
[[ -s code.requests && -s data.requests ]] || fail "no requests from the fixture"

for kind in code data; do
	export SYMDB_DIR=$SCRATCH/db.json.$kind
	python3 "$py" $kind.requests \
		-- llvm-symbolizer-14 --inlining -demangle=false --output-style=JSON \
		-- "$SCRATCH/sym/llvm-symbolizer" --inlining -demangle=false --output-style=JSON ||
		fail "pprof's JSON protocol ($kind): symdb differs from llvm-symbolizer-14"
done
export SYMDB_DIR=$SCRATCH/db.llvm
python3 "$py" code.requests \
	-- llvm-symbolizer-14 --inlining -demangle=false --output-style=LLVM \
	-- "$SCRATCH/sym/llvm-symbolizer" --inlining -demangle=false ||
	fail "the LLVM-style protocol: symdb differs from llvm-symbolizer-14"

echo "PASS pprof_client"
