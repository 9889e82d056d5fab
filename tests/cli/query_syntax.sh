#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# query_syntax.sh: `symdb query` parses input and options exactly like
# llvm-symbolizer-14 and prints the same bytes.  The expected output always
# comes from llvm-symbolizer-14 run on the same file with the same input,
# never from symdb.  Symbol-table-only fixtures keep the test about the CLI
# (input syntax, option spellings, printers, demangling), not about DWARF.
source "$(dirname "$0")/lib.sh"

db=$SCRATCH/db
cpp=$BIN/cpp_g++_O2_pie.symtab
lib=$BIN/cpplib_g++_O2.so.symtab
c=$BIN/c_gcc_O2_nopie.symtab
run "$SYMDB" build --db "$db" "$cpp" "$lib" "$c"
expect_ok "build"

# Addresses: every 7th byte of the text segment plus its edges, so function
# starts, middles, gaps and the area past the last symbol all occur.
addrs_of() {
	llvm-readelf-14 -lW "$1" | python3 -c '
import sys
for l in sys.stdin:
    f = l.split()
    if f[:1] == ["LOAD"] and "E" in "".join(f[6:-1]):
        start, size = int(f[2], 16), int(f[5], 16)
        for a in range(max(start - 16, 0), start + size + 64, 7):
            print("0x%x" % a)
'
}

# A stdin full of llvm-symbolizer's parsing corner cases.
make_odd_input() {
	local a=$1
	python3 - "$a" <<'PY'
import sys
a = sys.argv[1].encode()
lines = [
    a, b"  " + a + b"  ", a + b" trailing words", b"CODE " + a, b"CODE  " + a,
    b"DATA " + a, b"DATA 0", b"FRAME " + a, b"code " + a, b"\t" + a, b"",
    b"   ", b"garbage", b"0x", b"-1", b"+0x10", b"1234", b"0777", b"0b101",
    b"0o17", b"0X" + a[2:], b"0xffffffffffffffff", b"0x10000000000000000",
    a + b"\r", a[:3] + b"\r" + a[3:], b" " * 1020 + a, b" " * 1023,
    b"y" * 2050 + b" " + a, a[:2] + b"\x00" + a[2:],
    b"\xff\xfe \xe2\x82 \xed\xa0\x80 \xf0\x9f\x98\x80 \xc3\xa9 \x01\x1f\t\"\\",
    b"\xf4\x90\x80\x80 \xe0\x80\xaf \xc0\xaf \xf0\x9f\x98",
]
sys.stdout.buffer.write(b"\n".join(lines) + b"\n" + a)  # no final newline
PY
}

# same DESCRIPTION INPUT BIN ARGS...: symdb query == llvm-symbolizer-14
same() {
	local what=$1 in=$2 bin=$3
	shift 3
	llvm_query "$bin" "$@" <"$in" >"$SCRATCH/expect" 2>/dev/null || true
	run_in "$in" "$SYMDB" query --db "$db" --obj "$bin" "$@"
	expect_ok "$what"
	cmp -s "$OUT" "$SCRATCH/expect" ||
		fail "$what: output differs from llvm-symbolizer-14 ($(cmp "$OUT" "$SCRATCH/expect" 2>&1 | head -1))"
}

addrs_of "$cpp" >"$SCRATCH/cpp.in"
addrs_of "$lib" >"$SCRATCH/lib.in"
addrs_of "$c" >"$SCRATCH/c.in"
first=$(sed -n 40p "$SCRATCH/cpp.in")
make_odd_input "$first" >"$SCRATCH/odd.in"
: >"$SCRATCH/empty.in"
printf '\n\n' >"$SCRATCH/blank.in"

n=0
for style in LLVM GNU JSON; do
	for opts in "" "-a" "-p" "-a -p" "--no-inlines" "--functions=short" "--functions=none" \
		"--no-demangle" "-s" "--relativenames" "--verbose"; do
		# shellcheck disable=SC2086 # opts is a list of words
		for in in cpp odd; do
			same "$style $opts <$in" "$SCRATCH/$in.in" "$cpp" --output-style=$style $opts
			n=$((n + 1))
		done
	done
	same "$style lib" "$SCRATCH/lib.in" "$lib" --output-style=$style
	same "$style c" "$SCRATCH/c.in" "$c" --output-style=$style
	same "$style empty stdin" "$SCRATCH/empty.in" "$cpp" --output-style=$style
	same "$style blank lines" "$SCRATCH/blank.in" "$cpp" --output-style=$style
	n=$((n + 4))
done

# Option spellings llvm-symbolizer accepts, grouped flags, last one wins.
for opts in "-apC" "-Cs" "-i" "--inlining=false" "--inlining=true --no-inlines" \
	"-demangle=false" "-demangle=true" "-f" "-f=short" "--functions" \
	"--print-address --pretty-print" "--addresses" "--basenames" \
	"--output-style JSON" "--adjust-vma=0x100" "--adjust-vma 16" "--relative-address" \
	"--use-symbol-table=true" "--output-style=GNU --output-style=LLVM"; do
	# shellcheck disable=SC2086
	same "options $opts" "$SCRATCH/odd.in" "$cpp" $opts
	n=$((n + 1))
done

# Addresses as arguments (JSON: one array), including unparsable ones.
mapfile -t some < <(sed -n '30,45p' "$SCRATCH/cpp.in")
for style in LLVM GNU JSON; do
	for opts in "" "-p" "-a -p"; do
		# shellcheck disable=SC2086
		llvm_query "$cpp" --output-style=$style $opts "${some[@]}" "DATA ${some[0]}" \
			"FRAME ${some[1]}" junk "" >"$SCRATCH/expect" 2>/dev/null || true
		# shellcheck disable=SC2086
		run "$SYMDB" query --db "$db" --obj "$cpp" --output-style=$style $opts "${some[@]}" \
			"DATA ${some[0]}" "FRAME ${some[1]}" junk ""
		expect_ok "argv $style $opts"
		cmp -s "$OUT" "$SCRATCH/expect" || fail "argv $style $opts: output differs from llvm-symbolizer-14"
		n=$((n + 1))
	done
done

# Other spellings of the object option give the same bytes as --obj.
llvm_query "$cpp" "${some[@]}" >"$SCRATCH/expect"
for spelling in "--obj=$cpp" "-e $cpp" "-e$cpp" "--exe=$cpp" "--exe $cpp"; do
	# shellcheck disable=SC2086
	run "$SYMDB" query --db "$db" $spelling "${some[@]}"
	expect_ok "spelling $spelling"
	cmp -s "$OUT" "$SCRATCH/expect" || fail "spelling $spelling: output differs"
	n=$((n + 1))
done

# --uuid: same frames as --obj (ModuleName is the UUID string in JSON).
id=$(build_id "$cpp")
run "$SYMDB" query --db "$db" --uuid "$id" "${some[@]}"
expect_ok "--uuid"
cmp -s "$OUT" "$SCRATCH/expect" || fail "--uuid output differs from --obj"
run "$SYMDB" query --db "$db" --uuid "$id" --output-style=JSON "${some[0]}"
grep -qF "\"ModuleName\":\"$id\"" "$OUT" || fail "--uuid JSON ModuleName is not the UUID"

# Without --obj every line names its module ("MODULE ADDR", quoted or not),
# the sanitizers' protocol.  A module that cannot be read prints the empty
# answer (JSON: an Error object) and makes the exit status 1.
python3 - "$cpp" "$lib" "$c" "$SCRATCH/cpp.in" "$SCRATCH/lib.in" >"$SCRATCH/multi.in" <<'PY'
import sys
cpp, lib, c, a1, a2 = sys.argv[1:]
x = open(a1).read().split()[::5]
y = open(a2).read().split()[::3]
for i in range(max(len(x), len(y))):
    if i < len(x): print("%s %s" % (cpp, x[i]))
    if i < len(y): print("'%s' %s" % (lib, y[i]))
    if i % 50 == 0: print('DATA "%s" %s' % (c, "0x401000"))
print("/nonexistent/module 0x10")
print('"unterminated 0x10')
print(cpp)
PY
for style in LLVM GNU JSON; do
	llvm_query_multi() { llvm-symbolizer-14 --debug-file-directory=/nonexistent "$@"; }
	llvm_query_multi --output-style=$style <"$SCRATCH/multi.in" >"$SCRATCH/expect" 2>/dev/null || true
	run_in "$SCRATCH/multi.in" "$SYMDB" query --db "$db" --output-style=$style
	((RC == 0)) || fail "per-line $style: exit $RC, expected 0 as llvm-symbolizer-14's (one module missing)"
	cmp -s "$OUT" "$SCRATCH/expect" || fail "per-line $style: output differs from llvm-symbolizer-14"
	n=$((n + 1))
done

# Errors: usage errors exit 2; an image that is not indexed names its build-id.
run "$SYMDB" query --db "$db" --obj "$cpp" --bogus-option 0x10
expect_error "unknown option" "--bogus-option"
((RC == 2)) || fail "unknown option: exit $RC, expected 2"
run "$SYMDB" query --db "$db" --obj "$cpp" --uuid "$id" 0x10
expect_error "--obj and --uuid" "--obj"
((RC == 2)) || fail "--obj and --uuid: exit $RC, expected 2"
run "$SYMDB" query --db "$db" --obj "$cpp" --output-style=XML 0x10
expect_error "bad style" "XML"
((RC == 2)) || fail "bad style: exit $RC, expected 2"
other=$BIN/c_clang_O2_pie.symtab
run "$SYMDB" query --db "$db" --no-build --obj "$other" 0x10
expect_error "not indexed" "$(build_id "$other")"
((RC == 1)) || fail "not indexed: exit $RC, expected 1"
grep -qF "symdb build" "$ERR" || fail "not indexed: no hint to run symdb build"
run "$SYMDB" query --db "$SCRATCH/no-such-db" --no-build --obj "$cpp" 0x10
expect_error "missing database" "$SCRATCH/no-such-db"
((RC == 3)) || fail "missing database: exit $RC, expected 3"

echo "PASS query_syntax: $n comparisons with llvm-symbolizer-14"
