#!/bin/bash
# SPDX-License-Identifier: MIT
#
# fifo.sh: FIFOs where symdb build opens files (SPEC §12.5: every file is
# opened once with O_NONBLOCK and fstat'ed; only regular files are read).
#   1. a FIFO input: one error line naming it in well under a second, and
#      the next input of the same command is indexed (before: the open
#      blocked forever and the next input was never built);
#   2. a FIFO at X.dSYM/Contents/Resources/DWARF/X beside a Mach-O X: the
#      candidate is skipped, the build finishes at once and answers like
#      llvm-symbolizer-14 (before: the indexer blocked until its timeout,
#      then X failed);
#   3. a FIFO at the --debug-dir build-id path of a stripped ELF file: the
#      candidate is skipped and the search goes on to its .gnu_debuglink,
#      as llvm-symbolizer-14's does;
#   4. a FIFO as the first .gnu_debuglink candidate (beside the binary): the
#      next one (.debug/NAME) is used;
#   5. a FIFO among the DWARF files of a .dSYM bundle given as input: the
#      bundle's regular file is indexed;
#   6. rm, export and info given a FIFO: "not a regular file (fifo)";
#   7. build and info given a Unix socket: "not a regular file (socket)".
# Every command runs under `timeout`, so the old hangs fail instead of
# hanging the suite.  LIMIT_MS (default 1000) is the time a FIFO may cost.
source "$(dirname "$0")/../cli/lib.sh"
require gcc clang ld64.lld-14 objcopy strip timeout

LIMIT_MS=${FIFO_LIMIT_MS:-1000}
W=$SCRATCH/w
DB=$SCRATCH/db
S=("$SYMDB" --db "$DB")
mkdir -p "$W"

now_ms() { date +%s%3N; }
# timed CMD...: run under a 60 s timeout; MS gets the wall time
timed() {
	local t0
	t0=$(now_ms)
	run timeout 60 "$@"
	MS=$(($(now_ms) - t0))
	((RC != 124)) || fail "$*: still blocked after 60 s"
}
# fn_addrs FILE: the start and middle of every defined text symbol (max 30;
# a Mach-O symbol has no size: its start and start + 4)
fn_addrs() {
	llvm-nm-14 -S --defined-only "$1" 2>/dev/null | python3 -c '
import sys
out = []
for l in sys.stdin:
    f = l.split()
    if len(f) == 4 and f[2] in "Tt":
        s, n = int(f[0], 16), int(f[1], 16) or 8  # Mach-O: no sizes
        out += ["0x%x" % s, "0x%x" % (s + n // 2)]
print(" ".join(out[:30]))'
}
# same_as_oracle WHAT FILE WANT ADDRS...: symdb's answers equal WANT
same_as_oracle() {
	local what=$1 file=$2 want=$3
	shift 3
	run "${S[@]}" query --obj "$file" "$@"
	expect_ok "$what: query"
	[[ $(cat "$OUT") == "$want" ]] || {
		diff <(echo "$want") "$OUT" | head >&2
		fail "$what: answers differ from llvm-symbolizer-14"
	}
}

# A real program, with DWARF.
cat >"$W/prog.c" <<'EOF'
__attribute__((noinline)) int twice(int x) { return 2 * x + 1; }
__attribute__((noinline)) int thrice(int x) { for (int i = 0; i < x; i++) x ^= i; return 3 * x; }
int main(int c, char **v) { (void)v; return twice(c) + thrice(c); }
EOF
gcc -g -O1 -o "$W/prog" "$W/prog.c" || fail "gcc prog"
PA=$(fn_addrs "$W/prog")
[[ -n $PA ]] || fail "no text symbols in prog"

# --- 1. a FIFO input -----------------------------------------------------------
mkfifo "$W/fifo"
timed "${S[@]}" build "$W/fifo"
expect_error "FIFO input" "$W/fifo: not a regular file (fifo)"
((MS < LIMIT_MS)) || fail "FIFO input: the error took $MS ms"
note "FIFO input: one line in $MS ms"
timed "${S[@]}" build "$W/fifo" "$W/prog"
no_crash "FIFO then a program"
((RC == 1)) || fail "FIFO then a program: exit $RC, expected 1"
[[ $(wc -l <"$ERR") == 1 ]] && grep -qF "$W/fifo: not a regular file (fifo)" "$ERR" ||
	fail "FIFO then a program: expected one line for the FIFO"
grep -q "^indexed .* $W/prog\$" "$OUT" || fail "FIFO then a program: prog was not indexed"
same_as_oracle "the program after a FIFO" "$W/prog" "$(llvm_query "$W/prog" $PA)" $PA
note "FIFO then a program: the FIFO refused, the program indexed ($MS ms)"
# rm, export and info given a FIFO: named as a FIFO (they said "Illegal
# seek", a FIFO's pread)
for c in rm export info; do
	timed "${S[@]}" $c "$W/fifo"
	expect_error "$c of a FIFO" "$W/fifo: not a regular file (fifo)"
	((MS < LIMIT_MS)) || fail "$c of a FIFO: the error took $MS ms"
done
note "rm, export, info of a FIFO: not a regular file (fifo)"

# --- 2. a FIFO where the companion dSYM's DWARF file would be -----------------------
clang -target arm64-apple-macos11 -g -O2 -c "$(dirname "$0")/../fixtures/mo_c.c" \
	-o "$W/mo_c.o" 2>"$ERR" || fail "clang -target arm64-apple-macos11: $(cat "$ERR")"
ld64.lld-14 -arch arm64 -platform_version macos 11.0 11.0 -undefined dynamic_lookup \
	-execute -e _main -o "$W/X" "$W/mo_c.o" 2>"$ERR" || fail "ld64.lld-14: $(cat "$ERR")"
XA=$(fn_addrs "$W/X")
[[ -n $XA ]] || fail "no text symbols in the Mach-O X"
WANT_X=$(llvm_query "$W/X" $XA) # before the FIFO exists: llvm-symbolizer would block on it
mkdir -p "$W/X.dSYM/Contents/Resources/DWARF"
mkfifo "$W/X.dSYM/Contents/Resources/DWARF/X"
timed "${S[@]}" build "$W/X"
expect_ok "Mach-O with a FIFO for its dSYM"
((MS < LIMIT_MS)) || fail "Mach-O with a FIFO for its dSYM: the build took $MS ms"
same_as_oracle "Mach-O with a FIFO for its dSYM" "$W/X" "$WANT_X" $XA
note "Mach-O X with a FIFO at X.dSYM/Contents/Resources/DWARF/X: skipped, built in $MS ms"

# --- 3. a FIFO at the build-id path under --debug-dir -----------------------------
cp "$W/prog" "$W/s"
objcopy --only-keep-debug "$W/s" "$W/s.debug"
strip --strip-debug "$W/s"
objcopy --add-gnu-debuglink="$W/s.debug" "$W/s"
id=$(readelf -n "$W/s" | awk '/Build ID:/ {print $3; exit}')
[[ ${#id} -gt 2 ]] || fail "no build-id in the stripped program"
mkdir -p "$W/dd/.build-id/${id:0:2}"
mkfifo "$W/dd/.build-id/${id:0:2}/${id:2}.debug"
WANT_S=$(llvm_query "$W/s" $PA) # finds s.debug by its debuglink
grep -q 'prog.c:' <<<"$WANT_S" || fail "the oracle did not find s.debug"
rm -rf "$DB" # s has prog's build-id
timed "${S[@]}" build --debug-dir "$W/dd" "$W/s"
expect_ok "stripped ELF with a FIFO at its build-id path"
((MS < LIMIT_MS)) || fail "FIFO at the build-id path: the build took $MS ms"
same_as_oracle "FIFO at the build-id path" "$W/s" "$WANT_S" $PA
note "FIFO at DIR/.build-id/xx/rest.debug: skipped, s.debug found by debuglink ($MS ms)"

# --- 4. a FIFO as the first .gnu_debuglink candidate -------------------------------
mkdir -p "$W/.debug"
mv "$W/s.debug" "$W/.debug/s.debug"
mkfifo "$W/s.debug"
rm -rf "$DB"
timed "${S[@]}" build "$W/s"
expect_ok "stripped ELF with a FIFO beside it as its debuglink"
((MS < LIMIT_MS)) || fail "FIFO debuglink candidate: the build took $MS ms"
same_as_oracle "FIFO debuglink candidate" "$W/s" "$WANT_S" $PA
note "FIFO at BINDIR/NAME: skipped, .debug/NAME used ($MS ms)"

# --- 5. a FIFO among a .dSYM bundle's DWARF files ------------------------------------
if command -v dsymutil >/dev/null; then
	mkdir -p "$W/m"
	cp "$W/X" "$W/m/X"
	dsymutil "$W/m/X" -o "$W/m/X.dSYM" 2>"$ERR" || fail "dsymutil: $(cat "$ERR")"
	WANT_M=$(llvm_query "$W/m/X" $XA)
	grep -q 'mo_c.c:' <<<"$WANT_M" || fail "the oracle found no lines in X.dSYM"
	mkfifo "$W/m/X.dSYM/Contents/Resources/DWARF/Z"
	timed "${S[@]}" build "$W/m/X.dSYM"
	expect_ok ".dSYM bundle with a FIFO among its DWARF files"
	((MS < LIMIT_MS)) || fail "FIFO in a bundle: the build took $MS ms"
	same_as_oracle "FIFO in a bundle" "$W/m/X" "$WANT_M" $XA
	note ".dSYM bundle with a FIFO beside its DWARF file: skipped ($MS ms)"
else
	skip_part "dsymutil not found: no .dSYM bundle"
fi

# --- 7. a Unix socket as an input: named for what it is ------------------------------
# (open(2) fails on a socket with ENXIO; it said "No such device or address")
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$W/sock" ||
	fail "cannot make a socket"
for cmd in build info; do
	timed "${S[@]}" $cmd "$W/sock"
	expect_error "$cmd of a socket" "$W/sock: not a regular file (socket)"
done

run "${S[@]}" verify
expect_ok "verify"
[[ -z $(find "$DB/tmp" -mindepth 1) ]] || fail "files left in DB/tmp"
