#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# header_example.sh CC READER_DIR FORMAT_INCLUDE_DIR LIBSYMDB: the usage
# example at the top of symdb.h (its first @code ... @endcode block) is a
# complete program.  Extract it, compile it with -Wall -Wextra -Werror
# against the public headers, link it against the shared libsymdb, index the
# program itself with the CLI and run it on its own main: it must print
# main's name.  A stale example (wrong arguments, a renamed function) fails
# here instead of in a user's editor.
. "$(dirname "$0")/lib.sh"

CC=$1 RD=$2 FI=$3 LIB=$4
# A sanitizer build's libsymdb is instrumented: the program linking it must
# be built with the same -fsanitize flags (as tests/install does).
san=$(sed -n 's/^SYMDB_SANITIZE:[A-Z]*=//p' "$SYMDB_BUILD/CMakeCache.txt")
sanflags=()
[[ -n $san ]] && sanflags=(-fsanitize="$san")
EX=$SCRATCH/example
awk '/@code/ { f = 1; next } /@endcode/ { exit } f' "$RD/symdb.h" |
	sed -E 's/^ \* ?//; s/^ \*$//' >"$EX.c"
[[ -s $EX.c ]] && grep -q 'int main' "$EX.c" || fail "no @code block with a main in symdb.h"
run "$CC" -std=c11 -Wall -Wextra -Werror "${sanflags[@]}" -I"$RD" -I"$FI" "$EX.c" "$LIB" \
	-Wl,-rpath,"$(dirname "$LIB")" -o "$EX"
expect_ok "compile the symdb.h example"
note "the example compiles and links against $(basename "$LIB")"

run "$SYMDB" build --db "$SCRATCH/db" --no-dwarf "$EX"
expect_ok "index the example"
addr=$(nm "$EX" | awk '$3 == "main" { print $1 }')
[[ -n $addr ]] || fail "no main in the example's symbol table"
run "$EX" "$SCRATCH/db" "$EX" "$addr"
expect_ok "run the example"
grep -q "^0x0*${addr#"${addr%%[!0]*}"} main " "$OUT" || fail "the example did not name main: $(cat "$OUT")"
note "the example resolves its own main: $(cat "$OUT")"

run "$EX" "$SCRATCH/nodb" "$EX" "$addr"
expect_error "the example without a database" "example:"
note "the example reports a missing database on one line"
