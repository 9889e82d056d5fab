#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# query_batches.sh: `symdb query` on long inputs, which it reads in batches
# and prints through its fast paths: bodies formatted in sorted order and
# copied out in input order, bodies shared by equal results, the body cache
# carried across batches (and switched off when a batch mostly misses), the
# output buffer and the body buffer growing for very long names.  Every
# output is compared with llvm-symbolizer-14's on the same input; nothing is
# compared with symdb's own output.  In the sanitizer lane
# (SYMDB_TEST_SANITIZED, set by CMake) symdb runs alone on the same inputs
# and must answer without a crash or a sanitizer report: the plain lane
# compared, and the oracle's runs on these long inputs were most of the
# test's time there.
source "$(dirname "$0")/lib.sh"

db=$SCRATCH/db
cpp=$FIXTURES/full/cpp_g++_O2_pie
c=$FIXTURES/full/c_gcc_O2_pie
require g++

# A library whose functions have names longer than the output buffer (256
# KiB) and than the body buffer's first size (1 MiB together), with DWARF.
python3 - "$SCRATCH/long.cpp" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("namespace ns {\n")
    for i, n in enumerate((300000, 70000, 400000)):
        f.write("int f%d%s(int x) { return x * %d + 1; }\n" % (i, "a" * n, i + 3))
    f.write("}\n")
PY
long=$SCRATCH/liblong.so
g++ -g -O0 -shared -fPIC -o "$long" "$SCRATCH/long.cpp" || fail "compiling liblong.so"
run "$SYMDB" build --db "$db" "$cpp" "$c" "$long"
expect_ok "build"

# text_addrs BIN STEP: addresses across the executable LOAD segment
text_addrs() {
	llvm-readelf-14 -lW "$1" | python3 -c '
import sys
step = int(sys.argv[1])
for l in sys.stdin:
    f = l.split()
    if f[:1] == ["LOAD"] and "E" in "".join(f[6:-1]):
        start, size = int(f[2], 16), int(f[5], 16)
        for a in range(start, start + size, step):
            print("0x%x" % a)
' "$2"
}

# make_input ADDRS OUT SCALE: a seeded profile-like stream (a few hundred
# hot addresses drawn with a skew, so every batch repeats them), then a run
# of distinct addresses (the body cache then misses and is switched off),
# then the profile again; odd lines (DATA, unparsable, the two
# largest addresses, upper-case 0X) sprinkled through all of it.  No FRAME
# lines: with DWARF llvm-symbolizer prints locals, which symdb does not
# store (tests/KNOWN_DIFFERENCES.md).
make_input() {
	python3 - "$1" "$2" "$3" <<'PY'
import itertools, random, sys
addrs = open(sys.argv[1]).read().split()
out, scale = sys.argv[2], int(sys.argv[3])
rng = random.Random(20261122)
hot = rng.sample(addrs, min(len(addrs), 400))
# (cumulative weights once: choices() would sum all 400 on every draw)
cum = list(itertools.accumulate(1.0 / (i + 1) ** 1.1 for i in range(len(hot))))
odd = ["0xffffffffffffffff", "0xfffffffffffffffe", "DATA " + hot[0], "DATA " + hot[1],
       "garbage", "CODE " + hot[2], "0X" + hot[3][2:], "", "  " + hot[4] + "  "]
lines = []
def profile(n):
    for i in range(n):
        if i % 997 == 0:
            lines.append(odd[(i // 997) % len(odd)])
        lines.append(rng.choices(hot, cum_weights=cum)[0])
profile(150000 * scale // 4)
base = 0x10000000
lines += ["0x%x" % (base + 3 * i) for i in range(150000 if scale >= 4 else 5000)]
lines += addrs * (1 + 20000 * scale // 4 // max(len(addrs), 1))
profile(50000 * scale // 4)
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
PY
}

# oracle INPUT BIN ARGS...: llvm-symbolizer-14's answers to INPUT on stdout,
# asked once per distinct line (oracle_distinct.py: these inputs repeat a
# few hundred addresses hundreds of thousands of times, and the oracle's
# runs over every repeat were most of this test's time)
oracle() {
	local in=$1 bin=$2
	shift 2
	python3 "$(dirname "$0")/oracle_distinct.py" "$in" \
		llvm-symbolizer-14 --debug-file-directory=/nonexistent --obj "$bin" "$@"
}

# same DESCRIPTION INPUT BIN ARGS...: symdb query == llvm-symbolizer-14,
# stdin from the file (batches of up to 1 MiB) and from a pipe (smaller)
same() {
	local what=$1 in=$2 bin=$3
	shift 3
	sanitized || oracle "$in" "$bin" "$@" >"$SCRATCH/expect"
	run_in "$in" "$SYMDB" query --db "$db" --obj "$bin" "$@"
	expect_ok "$what"
	expect_oracle "$what" "$SCRATCH/expect" # sanitized: the pipe must answer as the file did
	set +e
	cat "$in" | "$SYMDB" query --db "$db" --obj "$bin" "$@" >"$OUT" 2>"$ERR"
	RC=$?
	set -e
	expect_ok "$what (pipe)"
	local oracle=llvm-symbolizer-14
	sanitized && oracle="the file's"
	cmp -s "$OUT" "$SCRATCH/expect" ||
		fail "$what (pipe): output differs from $oracle ($(cmp "$OUT" "$SCRATCH/expect" 2>&1 | head -1))"
}

text_addrs "$cpp" 3 >"$SCRATCH/cpp.addrs"
text_addrs "$long" 1 >"$SCRATCH/long.addrs"
make_input "$SCRATCH/cpp.addrs" "$SCRATCH/cpp.big" 4
make_input "$SCRATCH/cpp.addrs" "$SCRATCH/cpp.small" 1
# The long names: 60 requests (each prints 70-400 KB), repeated and
# interleaved with a miss and other addresses.
llvm-nm-14 --defined-only "$long" | awk '$2 == "T" { print $1 }' >"$SCRATCH/long.fns"
python3 - "$SCRATCH/long.fns" "$SCRATCH/long.addrs" "$SCRATCH/long.in" <<'PY'
import random, sys
fns = [int(x, 16) for x in open(sys.argv[1]).read().split()]
other = open(sys.argv[2]).read().split()
rng = random.Random(5)
pick = ["0x%x" % (a + d) for a in fns for d in (0, 4, 9)] + rng.sample(other, 4)
with open(sys.argv[3], "w") as f:
    for i in range(60):
        f.write(rng.choice(pick) + "\n" + ("0x1\n" if i % 5 == 0 else ""))
PY
(($(wc -c <"$SCRATCH/cpp.big") > 3 * 1048576)) || fail "the big input should span several batches"
# The distinct-line oracle answers as one oracle run over every line, here
# in GNU style (no empty line ends an answer: cut by the markers alone).
if ! sanitized; then
	oracle "$SCRATCH/cpp.small" "$cpp" --output-style=GNU -a >"$SCRATCH/expect.distinct"
	llvm_query "$cpp" --output-style=GNU -a <"$SCRATCH/cpp.small" >"$SCRATCH/expect" 2>/dev/null || true
	cmp -s "$SCRATCH/expect.distinct" "$SCRATCH/expect" ||
		fail "oracle_distinct.py: its answers differ from one llvm-symbolizer-14 run over every line"
fi

n=0
for style in LLVM GNU JSON; do
	same "$style <cpp.big" "$SCRATCH/cpp.big" "$cpp" --output-style=$style
	same "$style <long.in" "$SCRATCH/long.in" "$long" --output-style=$style
	n=$((n + 2))
	# Every option in LLVM style; -a (the header printed apart from the
	# body) in the others.  Each run costs llvm-symbolizer seconds.
	opts_list=("-a")
	[[ $style == LLVM ]] && opts_list=("-a" "-a -p" "--no-inlines" "--functions=short" \
		"--functions=none" "-s")
	for opts in "${opts_list[@]}"; do
		# shellcheck disable=SC2086 # opts is a list of words
		same "$style $opts <cpp.small" "$SCRATCH/cpp.small" "$cpp" --output-style=$style $opts
		n=$((n + 1))
	done
done
# --adjust-vma moves every request: the cache must key on what is resolved.
same "--adjust-vma" "$SCRATCH/cpp.small" "$cpp" --adjust-vma 0x1000
n=$((n + 1))

# Per-line modules ("FILE ADDR"): requests of three images, interleaved,
# each address repeated, and a missing module, repeated.
# (A missing module, as llvm-symbolizer-14: "??" answers, in JSON an Error
# object for its first request and an empty "Symbol" list for later ones,
# and exit status 0.)
make_mods() {
	python3 - "$SCRATCH/cpp.addrs" "$SCRATCH/long.addrs" "$cpp" "$c" "$long" "$1" \
		"$SCRATCH/mods.in" <<'PY'
import random, sys
a1, a2 = open(sys.argv[1]).read().split(), open(sys.argv[2]).read().split()
cpp, c, long_, none, out = sys.argv[3:8]
rng = random.Random(7)
hot = [(cpp, x) for x in rng.sample(a1, 200)] + [(c, x) for x in rng.sample(a1, 50)] + \
      [(long_, x) for x in rng.sample(a2, 50)] + ([(none, "0x1000")] if none else [])
with open(out, "w") as f:
    for i in range(60000):
        m, a = rng.choice(hot)
        f.write("%s %s\n" % (m, a))
PY
}
for style in LLVM JSON; do
	missing=$SCRATCH/none want=0
	make_mods "$missing"
	sanitized || llvm-symbolizer-14 --debug-file-directory=/nonexistent --output-style=$style \
		<"$SCRATCH/mods.in" >"$SCRATCH/expect" 2>/dev/null || true
	run_in "$SCRATCH/mods.in" "$SYMDB" query --db "$db" --output-style=$style
	no_crash "modules $style"
	((RC == want)) || fail "modules $style: exit $RC, expected $want"
	sanitized || cmp -s "$OUT" "$SCRATCH/expect" ||
		fail "modules $style: output differs from llvm-symbolizer-14 ($(cmp "$OUT" "$SCRATCH/expect" 2>&1 | head -1))"
	n=$((n + 1))
done

# Addresses on the command line: a JSON list, repeats included.
mapfile -t few < <(head -5 "$SCRATCH/cpp.addrs")
args=("${few[@]}" "${few[@]}" "${few[0]}")
llvm_query "$cpp" --output-style=JSON "${args[@]}" >"$SCRATCH/expect" 2>/dev/null || true
run "$SYMDB" query --db "$db" --obj "$cpp" --output-style=JSON "${args[@]}"
expect_ok "argv JSON"
cmp -s "$OUT" "$SCRATCH/expect" || fail "argv JSON: output differs from llvm-symbolizer-14"
n=$((n + 1))

if sanitized; then
	echo "query_batches: $n runs of symdb alone (sanitizer lane), no crash, no report"
else
	echo "query_batches: $n comparisons identical to llvm-symbolizer-14"
fi
