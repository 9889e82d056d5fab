#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# rewrite.sh: a binary rewritten in place (same inode: `cat NEW > FILE`
# truncates, then writes) while it is being identified, as a server that
# takes path modules identifies them on every request.  rel_identify reads
# FILE for 4 s (ELF, then Mach-O if clang and ld64.lld-14 are here) while a
# loop rewrites it with a large and a small binary: it must end by itself
# with exit 0, never SIGBUS.  Before, libelf and the Mach-O reader mapped
# the file, and a read past its new end killed the process (`symdb serve`
# died of it, exit 135, 2 runs of 3).
source "$(dirname "$0")/../cli/lib.sh"
: "${REL_IDENTIFY:?REL_IDENTIFY (the rel_identify driver) must be set}"

# race LABEL BIG SMALL: rewrite $SCRATCH/T from BIG and SMALL in turn
race() {
	local what=$1 big=$2 small=$3 pid rc
	cp "$big" "$SCRATCH/T"
	(while :; do cat "$big" >"$SCRATCH/T"; cat "$small" >"$SCRATCH/T"; done) 2>/dev/null &
	pid=$!
	set +e
	"$REL_IDENTIFY" "$SCRATCH/T" 4 >"$OUT" 2>"$ERR"
	rc=$?
	set -e
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
	((rc == 0)) || fail "$what: rel_identify exited $rc (128 + signal; 135: SIGBUS): $(cat "$ERR")"
	note "$what: $(cat "$OUT")"
	grep -Eq 'identified [1-9][0-9]*' "$OUT" || fail "$what: nothing identified: the race did not run"
}

big=$(readlink -f /usr/lib/x86_64-linux-gnu/libstdc++.so.6)
[[ -f $big ]] || big=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
race "ELF" "$big" /bin/true

if command -v clang >/dev/null && command -v ld64.lld-14 >/dev/null && command -v llvm-lipo-14 >/dev/null; then
	printf 'int f%d(int x) { return x + %d; }\n' $(seq 1 4000 | awk '{print $1, $1}') >"$SCRATCH/m.c"
	echo 'int main(void) { return f1(1); }' >>"$SCRATCH/m.c"
	for a in arm64 x86_64; do
		clang --target=$a-apple-macos11 -O0 -c "$SCRATCH/m.c" -o "$SCRATCH/m_$a.o" || fail "clang"
		ld64.lld-14 -arch $a -platform_version macos 11.0 11.0 -undefined dynamic_lookup \
			-execute -e _main -o "$SCRATCH/m_$a" "$SCRATCH/m_$a.o" || fail "ld64.lld-14"
	done
	llvm-lipo-14 -create "$SCRATCH/m_arm64" "$SCRATCH/m_x86_64" -output "$SCRATCH/fat" || fail "lipo"
	race "Mach-O (universal)" "$SCRATCH/fat" /bin/true
else
	skip_part "no clang, ld64.lld-14 or llvm-lipo-14: the Mach-O reader is not raced"
fi
note "rewrite: ok"
