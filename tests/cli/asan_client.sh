#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# asan_client.sh: AddressSanitizer with symdb as its symbolizer, nothing
# indexed beforehand.  A heap-use-after-free program (an inlined function
# in the faulting frame, libc in the stack) built with clang-14
# -fsanitize=address runs with ASAN_SYMBOLIZER_PATH pointing to a symlink
# named llvm-symbolizer -> symdb (clang-14's runtime then starts it as
# `llvm-symbolizer --demangle --inlines --default-arch=x86_64` and writes
# `CODE "/path" 0xOFFSET` lines, one at a time, reading each answer to its
# empty line).  Its report must equal the report made with
# ASAN_SYMBOLIZER_PATH=llvm-symbolizer-14, once addresses and pids are
# blanked:
#   - a database directory that does not exist yet ($SYMDB_DIR: created);
#   - the same run again: the published indexes answer, the indexer is
#     never started (SYMDB_INDEXER fails and records that it ran);
#   - no $SYMDB_DIR nor $XDG_CACHE_HOME and a $HOME without .cache;
#   - a $SYMDB_DIR that cannot be created: the same report plus exactly one
#     warning line, and no private index left in $TMPDIR.
# gcc-12's libasan symbolizes with its built-in libbacktrace and never
# starts an external symbolizer; its report is compared too, so that a
# future libasan that does start one is held to the same rule.
source "$(dirname "$0")/lib.sh"
require clang-14

cat >"$SCRATCH/uaf.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
static inline __attribute__((always_inline)) int peek(const char *p) { return p[3]; }
__attribute__((noinline)) int use(const char *p) { return peek(p); }
int main(int argc, char **argv)
{
	char *p = malloc(16);
	(void)argv;
	strcpy(p, "hello");
	free(p);
	return use(p) + argc;
}
EOF
clang-14 -fsanitize=address -g -O1 "$SCRATCH/uaf.c" -o "$SCRATCH/uaf_clang" 2>"$ERR" ||
	{ echo "SKIP: clang-14 -fsanitize=address does not link here: $(head -c 300 "$ERR")"; exit 77; }
mkdir -p "$SCRATCH/sym" "$SCRATCH/tmp" "$SCRATCH/home"
ln -s "$SYMDB" "$SCRATCH/sym/llvm-symbolizer"
export TMPDIR=$SCRATCH/tmp
unset SYMDB_INDEXER

# report BIN SYMBOLIZER OUT [ENV...]: the ASan report of BIN, blanked
report() {
	local bin=$1 sym=$2 out=$3
	shift 3
	set +e
	env "$@" ASAN_SYMBOLIZER_PATH="$sym" ASAN_OPTIONS=detect_leaks=0 "$bin" 2>"$out.raw" >/dev/null
	set -e
	grep -q 'ERROR: AddressSanitizer: heap-use-after-free' "$out.raw" ||
		fail "$bin: no ASan report: $(head -c 400 "$out.raw")"
	sed -E 's/0x[0-9a-f]+/0xADDR/g; s/==[0-9]+==/==PID==/g' "$out.raw" >"$out"
}
same() { # same WHAT GOT EXPECTED
	if ! cmp -s "$2" "$3"; then
		diff "$2" "$3" | head -20 >&2
		fail "$1: the report differs from the one llvm-symbolizer-14 gives"
	fi
}

report "$SCRATCH/uaf_clang" "$(command -v llvm-symbolizer-14)" "$SCRATCH/expect"
grep -q ' in peek .*uaf.c:3:' "$SCRATCH/expect" || fail "the oracle's report has no inline frame: $(cat "$SCRATCH/expect")"

note "a database directory that does not exist yet"
db=$SCRATCH/nowhere/db
report "$SCRATCH/uaf_clang" "$SCRATCH/sym/llvm-symbolizer" "$SCRATCH/got1" SYMDB_DIR="$db"
same "nothing indexed" "$SCRATCH/got1" "$SCRATCH/expect"
[[ -n $(index_files "$db") ]] || fail "nothing was published to $db"

note "again: the published indexes answer, no indexer runs"
printf '#!/bin/sh\ntouch "%s"\nexit 1\n' "$SCRATCH/indexer-ran" >"$SCRATCH/no-indexer"
chmod +x "$SCRATCH/no-indexer"
report "$SCRATCH/uaf_clang" "$SCRATCH/sym/llvm-symbolizer" "$SCRATCH/got2" SYMDB_DIR="$db" \
	SYMDB_INDEXER="$SCRATCH/no-indexer"
same "second run" "$SCRATCH/got2" "$SCRATCH/expect"
[[ ! -e $SCRATCH/indexer-ran ]] || fail "the second run started the indexer"

note "no \$SYMDB_DIR, no \$XDG_CACHE_HOME, \$HOME without .cache"
report "$SCRATCH/uaf_clang" "$SCRATCH/sym/llvm-symbolizer" "$SCRATCH/got3" -u SYMDB_DIR \
	-u XDG_CACHE_HOME HOME="$SCRATCH/home"
same "default database" "$SCRATCH/got3" "$SCRATCH/expect"
[[ -n $(index_files "$SCRATCH/home/.cache/symdb") ]] || fail "nothing published to \$HOME/.cache/symdb"

note "a database that cannot be created"
: >"$SCRATCH/a-file"
report "$SCRATCH/uaf_clang" "$SCRATCH/sym/llvm-symbolizer" "$SCRATCH/got4" \
	SYMDB_DIR="$SCRATCH/a-file/db"
w=$(grep -c '^symdb: warning: database .*a-file/db cannot be written' "$SCRATCH/got4" || true)
((w == 1)) || fail "uncreatable database: $w warning lines, expected one: $(cat "$SCRATCH/got4")"
grep -v '^symdb: warning: database ' "$SCRATCH/got4" >"$SCRATCH/got4.rest"
same "uncreatable database" "$SCRATCH/got4.rest" "$SCRATCH/expect"
[[ -z $(ls -A "$SCRATCH/tmp") ]] || fail "left in \$TMPDIR: $(ls -A "$SCRATCH/tmp")"

if command -v gcc >/dev/null && gcc -fsanitize=address -g -O1 "$SCRATCH/uaf.c" -o "$SCRATCH/uaf_gcc" 2>/dev/null; then
	note "gcc's libasan"
	report "$SCRATCH/uaf_gcc" "$(command -v llvm-symbolizer-14)" "$SCRATCH/gexpect"
	report "$SCRATCH/uaf_gcc" "$SCRATCH/sym/llvm-symbolizer" "$SCRATCH/ggot" SYMDB_DIR="$SCRATCH/gdb"
	same "gcc" "$SCRATCH/ggot" "$SCRATCH/gexpect"
else
	skip_part "gcc -fsanitize=address does not link here"
fi
echo "PASS asan_client"
