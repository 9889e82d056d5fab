#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# module_lines.sh: "MODULE ADDR" lines (no --obj) in every form that the
# one-pass parser of the common line (cli_query_input.c, add_module_line)
# must take or leave to the general path: spaces, tabs and control bytes,
# \r\n, quotes, a NUL, CODE/DATA/FRAME prefixes and modules that look like
# them, decimal, octal, binary and 0X addresses, 16 and 17 hex digits, 19
# and 20 decimal digits, a missing or empty address, trailing text, FILE:ARCH
# (llvm-symbolizer takes FILE when ARCH is an architecture name, an ELF file
# too), lines
# of 1022 to 1025 bytes and an 1100-byte path (llvm-symbolizer's fgets
# splits lines at 1023 bytes), a line across two reads, and a last line
# without its newline.  A missing module named by lines of both paths must
# be one module (JSON prints its Error once).  symdb query and
# llvm-symbolizer-14 read the same input; their outputs must be the same
# bytes (LLVM, JSON, GNU and --print-address).
source "$(dirname "$0")/lib.sh"

db=$SCRATCH/db
cpp=$BIN/cpp_g++_O2_pie.symtab
run "$SYMDB" build --db "$db" "$cpp"
expect_ok "build"

# Relative module names, resolved in wd: names that look like a request
# prefix, and names holding a tab or a control byte (part of the name: only
# space, \n and \r delimit it).
wd=$SCRATCH/wd
mkdir -p "$wd/d"
for name in CODE C DATAX FRAME F $'t\tab' $'c\001x' 'q"x' "q'x"; do
	ln -s "$cpp" "$wd/$name"
done

python3 - "$cpp" "$SCRATCH/in.txt" <<'PY'
import subprocess, sys
cpp, out = sys.argv[1], sys.argv[2]
nm = subprocess.check_output(["llvm-nm-14", "--defined-only", cpp]).decode()
funcs = sorted({int(f[0], 16) for f in (l.split() for l in nm.splitlines())
                if len(f) == 3 and f[1] in "tT" and int(f[0], 16)})
a = funcs[len(funcs) // 2] + 3
P, A, D = cpp.encode(), b"0x%x" % a, b"%d" % a
def padded(total):
    """A line of exactly total bytes (its newline included) naming cpp
    through a path padded with '/.' components."""
    head, tail = P.rsplit(b"/", 1)
    fill = total - len(P) - 1 - len(A) - 1
    return head + b"/." * (fill // 2) + (b"/" if fill % 2 else b"") + b"/" + tail + b" " + A
edge = [
    P + b" " + A, P + b"  " + A, b"  " + P + b" " + A, P + b"\t" + A,
    P + b" " + A + b"\r", P + b"\r " + A, P + b" \r" + A, b'"' + P + b'" ' + A,
    b"'" + P + b"' " + A, b'"' + P + b" " + A, P + b'" ' + A,
    P + b" " + A[:3] + b"\x00" + A[3:], P[:5] + b"\x00" + P[5:] + b" " + A,
    P + b" " + D, P + b" 0X" + A[2:], P + b" " + A.upper().replace(b"0X", b"0x"),
    P + b" 0x" + b"%016x" % a, P + b" 0x0" + b"%016x" % a, P + b" 0xffffffffffffffff",
    P + b" 0x10000000000000000", P + b" 9999999999999999999", P + b" 18446744073709551615",
    P + b" 18446744073709551616", P + b" 0" + D, P + b" 0", P + b" 0b101", P + b" 0o17",
    P + b" 0x", P + b" 0xg", P + b" +0x10", P + b" -1", P, P + b" ", P + b" " + A + b" ",
    P + b" " + A + b" trailing words", P + b" " + A + b"\tx", P + b" " + A + b"x",
    b"CODE " + P + b" " + A, b"DATA " + P + b" " + A, b"FRAME " + P + b" " + A,
    b"CODE " + A, b"CODE", b"C " + A, b"DATAX " + A, b"FRAME " + A, b"F " + A, b"DATA",
    b"t\tab " + A, b"c\x01x " + A, b'q"x ' + A, b"q'x " + A, b"./CODE " + A,
    b"", b"   ", b"\t", b"garbage", b"/nonexistent/module " + A, b"d " + A,
    # llvm-symbolizer's FILE:ARCH takes FILE whatever it is (an ELF file
    # here); a suffix that is no architecture name stays in the path
    P + b":x86_64 " + A, b"CODE " + P + b":x86_64 " + A, P + b":aarch64 " + A,
    P + b":i386 " + A, P + b":notanarch " + A, P + b": " + A,
    b"/nonexistent/module " + A + b" x", b"/nonexistent/module  " + A + b"\r",
    padded(1021), padded(1022), padded(1023), padded(1024), padded(1025),
    P.rsplit(b"/", 1)[0] + b"/." * 530 + b"/" + P.rsplit(b"/", 1)[1] + b" " + A,
]
# Enough ordinary lines between two copies of the edge cases that some
# line lies across two reads of stdin, whatever the read size up to 4 MiB.
filler = [P + b" 0x%x" % (funcs[i % len(funcs)] + i % 7) for i in range(45000)]
lines = edge + filler + edge + [P + b" " + A]
with open(out, "wb") as f:
    f.write(b"\n".join(lines))  # the last line without its newline
PY

n=0
cd "$wd"
for opts in "" "--output-style=JSON" "--print-address" "--output-style=GNU"; do
	# shellcheck disable=SC2086 # opts is a list of words
	llvm-symbolizer-14 --debug-file-directory=/nonexistent $opts <"$SCRATCH/in.txt" \
		>"$SCRATCH/expect" 2>/dev/null || true
	# shellcheck disable=SC2086
	run_in "$SCRATCH/in.txt" "$SYMDB" query --db "$db" $opts
	no_crash "module lines $opts"
	cmp -s "$OUT" "$SCRATCH/expect" ||
		fail "module lines $opts: output differs from llvm-symbolizer-14 ($(cmp "$OUT" "$SCRATCH/expect" 2>&1 | head -1))"
	n=$((n + 1))
done
note "$n runs over $(wc -l <"$SCRATCH/in.txt") lines equal llvm-symbolizer-14's"
