#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# api_docs.sh READER_DIR: every SYMDB_API function of the public headers
# (symdb.h, symdb_build.h) documents each parameter (@param NAME), its
# return value (@return, unless void) and its thread rule (@note); the
# rules are in api_docs.awk.  Then the check itself must catch what it is
# for: declarations planted in a scratch copy of symdb.h, one without a
# comment, one missing an @param, one missing @return and @note.
. "$(dirname "$0")/lib.sh"

RD=$1
AWK=$(dirname "$0")/api_docs.awk

awk -f "$AWK" "$RD/symdb.h" "$RD/symdb_build.h" >"$OUT" || fail "api_docs.awk failed"
[[ ! -s $OUT ]] || fail "public functions with missing documentation: $(cat "$OUT")"
n=$(cat "$RD/symdb.h" "$RD/symdb_build.h" | grep -c '^SYMDB_API')
note "$n SYMDB_API declarations documented"

cp "$RD/symdb.h" "$SCRATCH/symdb.h"
cat >>"$SCRATCH/symdb.h" <<'PLANT'

SYMDB_API int planted_bare(symdb *db, int x);

/**
 * @brief planted_param() documents one of its two parameters.
 * @param db an open database.
 * @return 0.
 * @note Thread-safe.
 */
SYMDB_API int planted_param(symdb *db,
                            void (*fn)(const char *why, void *arg), void *arg);

/**
 * @brief planted_rest() has every @param but no return value or thread rule.
 * @param db an open database.
 */
SYMDB_API int planted_rest(symdb *db);
PLANT
awk -f "$AWK" "$SCRATCH/symdb.h" >"$OUT" || fail "api_docs.awk failed on the planted copy"
for want in "planted_bare: no /\\*\\* \\*/ comment" "planted_param: no @param fn" \
	"planted_param: no @param arg" "planted_rest: no @return" "planted_rest: no @note"; do
	grep -q "$want" "$OUT" || fail "the check missed '$want'"
done
[[ $(wc -l <"$OUT") -eq 5 ]] || fail "the check reported more than the planted gaps: $(cat "$OUT")"
note "the check reports every planted gap and nothing else"
