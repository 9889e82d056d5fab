#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# deadline.sh: a server that accepts the connection and never answers costs
# at most the configured deadline (--fetch-timeout, DEBUGINFOD_TIMEOUT): the
# command ends with one line naming the source, the symdb-fetch process is
# gone, nothing is published or remembered.  The server would hold the
# client for ever, so a command that does not honour the deadline is killed
# by `timeout` after 60 s and the test fails (no time is asserted).
source "$(dirname "$0")/lib.sh"
hang_start
DB=$SCRATCH/db
# A build-id of this run only: the check for a surviving symdb-fetch matches
# it on command lines machine-wide, where other runs of this test may be.
U=cccc$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')
t0=$(date +%s%N)

gone() {
	pgrep -f "symdb-fetch .*$U" >/dev/null && fail "$1: a symdb-fetch process outlived the command"
	[[ -z $(ls -A "$DB/tmp" 2>/dev/null) ]] || fail "$1: DB/tmp not empty: $(ls -A "$DB/tmp")"
	[[ ! -e $DB/misses/$U ]] || fail "$1: a timeout was remembered as a miss"
	return 0
}

note "1. upstream that never answers: build --build-id --fetch-timeout 1"
run timeout 60 "$SYMDB" build --db "$DB" --upstream "$HANG_URL" --fetch-timeout 1 --build-id "$U"
((RC != 124)) || fail "the deadline was not honoured (killed by timeout after 60 s)"
expect_error "hanging upstream" "$U: $HANG_URL/symdb/v1/cc/$U.symdb: no answer within the deadline"
gone "hanging upstream"

note "2. debuginfod that never answers: query --uuid, DEBUGINFOD_TIMEOUT=1"
DEBUGINFOD_URLS=$HANG_URL DEBUGINFOD_TIMEOUT=1 run timeout 60 "$SYMDB" query --db "$DB" --uuid "$U" 0x1000
((RC != 124)) || fail "the deadline was not honoured (killed by timeout after 60 s)"
expect_error "hanging debuginfod" "$U: $HANG_URL: no answer within the deadline"
gone "hanging debuginfod"

note "3. both: one deadline for the whole fetch"
run timeout 60 "$SYMDB" build --db "$DB" --upstream "$HANG_URL" --debuginfod "$HANG_URL" --fetch-timeout 1 --build-id "$U"
((RC != 124)) || fail "the deadline was not honoured (killed by timeout after 60 s)"
expect_error "hanging upstream and debuginfod" "no answer within the deadline"
gone "both"

note "wall time: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
