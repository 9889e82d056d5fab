#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fetch_interrupt.sh: a fetch interrupted by SIGINT or SIGTERM during its
# download removes what it wrote in DB/tmp before the process ends (SPEC
# §12.9, symdb_fetch_opts.cancel), rather than leaving it to `symdb gc`:
#   1. build --build-id from an upstream store whose body never ends
#      (slow_store.py's endless.HEX), SIGINT: exit status 130 (ended by
#      SIGINT, as before), one line "symdb: HEX: URL: interrupted", no
#      download file and no lock file left in DB/tmp, no fetcher running
#   2. query --uuid from a debuginfod that never answers, SIGTERM: exit
#      status 143, one line naming the server, its DB/tmp/fetch-HEX-PID-N
#      directory gone; verify --grace 0 is clean; nothing remembered
# Before, the download file (hundreds of MB here), the directory and the
# lock file stayed until gc.
# The same once the download is complete and being indexed: a real
# debuginfod serves the fixture, and the indexer (symdb-indexer-test
# --test-hook hang, named indexer-hang-ID) hangs after it wrote its output
# file, with one image already in the catalog:
#   3. build --build-id, SIGINT: exit status 130 within 3 s, one line
#      "symdb: HEX: URL: executable: interrupted", DB/tmp empty (no
#      fetch-HEX-PID-N, no staged file, no lock), no indexer left, the
#      catalog's listing and index files unchanged, verify clean
#   4. query --uuid, SIGTERM: the same with exit status 143
#   5. symdb serve stopped (SIGTERM) while its fetch worker indexes: exits
#      0 within 3 s, DB/tmp empty, no indexer left
#   6. the next query, without the hook, fetches and answers as
#      llvm-symbolizer-14 does on the served files
# Before, the signal was acted on only when the indexer ended (here: its
# 120 s limit): symdb was still running 10 s after the signal; serve exited
# after its 1 s wait for its fetch worker and left the fetch's directory,
# the staged file and the lock file in DB/tmp.
source "$(dirname "$0")/lib.sh"
require curl gcc objcopy llvm-symbolizer-14 llvm-nm-14
here=$(cd "$(dirname "$0")" && pwd)
U=dddd$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')
DB=$SCRATCH/db

mkdir -p "$SCRATCH/tree"
touch "$SCRATCH/tree/endless.$U"
python3 "$here/slow_store.py" "$SCRATCH/tree" "$SCRATCH/store.log" "$SCRATCH/store.port" &
FLEET_PIDS+=("$!")
for ((i = 0; i < 200; i++)); do [[ -s $SCRATCH/store.port ]] && break; sleep 0.05; done
[[ -s $SCRATCH/store.port ]] || fail "slow_store.py did not start"
STORE=http://127.0.0.1:$(cat "$SCRATCH/store.port")
hang_start

# start CMD...: CMD in the background with SIGINT and SIGTERM at their
# defaults (a script's background job ignores SIGINT), stdout and stderr in
# $OUT and $ERR; sets QPID
start() {
	env --default-signal=INT,TERM "$@" >"$OUT" 2>"$ERR" </dev/null &
	QPID=$!
	FLEET_PIDS+=("$QPID")
}
# wait_for GLOB: until DB/tmp holds a non-empty file or a directory matching GLOB
wait_for() {
	local f
	for ((i = 0; i < 200; i++)); do
		for f in "$DB"/tmp/$1; do
			[[ -d $f || -s $f ]] && return 0
		done
		sleep 0.05
	done
	fail "no DB/tmp/$1 while the fetch runs: $(ls -A "$DB/tmp" 2>&1)"
}
# stop SIG: send SIG to QPID and wait for it (10 s at most); sets RC and
# STOP_MS (milliseconds from the signal to the exit, to 50 ms)
stop() {
	local t0
	t0=$(date +%s%N)
	kill -"$1" "$QPID"
	for ((i = 0; i < 200; i++)); do
		kill -0 "$QPID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$QPID" 2>/dev/null && fail "still running 10 s after SIG$1"
	STOP_MS=$((($(date +%s%N) - t0) / 1000000))
	set +e
	wait "$QPID"
	RC=$?
	set -e
}
# tmp_empty WHAT [ID]: DB/tmp empty and no fetcher of ID (default $U) left
tmp_empty() {
	local id=${2:-$U}
	[[ -z $(ls -A "$DB/tmp" 2>/dev/null) ]] || fail "$1: DB/tmp not empty: $(ls -A "$DB/tmp")"
	pgrep -f "symdb-fetch.*$id" >/dev/null && fail "$1: a fetcher of $id is still running"
	return 0
}

# interrupted WHAT PATTERN SIG STATUS LINE CMD...: CMD, stopped by SIG once
# its fetch wrote PATTERN in DB/tmp, exits STATUS with the one stderr line
# LINE and leaves DB/tmp empty.
interrupted() {
	local what=$1 pattern=$2 sig=$3 status=$4 line=$5
	shift 5
	start "$@"
	wait_for "$pattern"
	stop "$sig"
	((RC == status)) || fail "$what: exit status $RC, expected $status (ended by SIG$sig): $(cat "$ERR")"
	[[ $(wc -l <"$ERR") == 1 ]] && grep -qxF "$line" "$ERR" || fail "$what: stderr: $(cat "$ERR")"
	tmp_empty "$what"
}

note "1. build --build-id, an endless upstream download, SIGINT"
interrupted "build --build-id after SIGINT" "fetch-$U.??????" INT 130 \
	"symdb: $U: $STORE/symdb/v1/${U:0:2}/$U.symdb: interrupted" \
	"$SYMDB" build --db "$DB" --build-id "$U" --upstream "$STORE" --fetch-timeout 60

note "2. query --uuid, a debuginfod that never answers, SIGTERM"
interrupted "query --uuid after SIGTERM" "fetch-$U-*" TERM 143 \
	"symdb: $U: $HANG_URL: interrupted" \
	"$SYMDB" query --db "$DB" --debuginfod "$HANG_URL" --fetch-timeout 60 --uuid "$U" 0x1000
run "$SYMDB" verify --db "$DB" --grace 0
expect_ok "verify --grace 0 after the interrupted fetches: $(cat "$OUT")"
[[ -z $(ls -A "$DB/misses" 2>/dev/null) ]] || fail "an interrupted fetch was remembered as a miss"

# ---- the indexing phase -------------------------------------------------------
fleet_fixture "$SCRATCH/fx"
fleet_addrs "$SCRATCH/fx/prog" >"$SCRATCH/addrs"
dbgd_start "$SCRATCH/fx/srv" 2
# One image already held: the interrupted fetches must leave it as it is.
printf 'int main(void) { return 0; }\n' >"$SCRATCH/held.c"
gcc -g -Wl,--build-id -o "$SCRATCH/held" "$SCRATCH/held.c"
run "$SYMDB" build --db "$DB" "$SCRATCH/held"
expect_ok "build of the held image: $(cat "$ERR")"
catalog_state() {
	"$SYMDB" --db "$DB" list
	index_files "$DB" | xargs sha256sum
}
catalog_state >"$SCRATCH/catalog.before"
# The indexer that hangs, under a name of this test's own (pgrep).
MARK=indexer-hang-$PROG_ID
HOOK=$SCRATCH/$MARK
printf '#!/bin/bash\nexec -a %q %q --test-hook hang "$@"\n' "$MARK" "$SYMDB_INDEXER_TEST" >"$HOOK"
chmod +x "$HOOK"
# wait_indexing: until the hanging indexer runs and has written its output
wait_indexing() {
	wait_for "*.cage-*"
	for ((i = 0; i < 200; i++)); do
		pgrep -f "$MARK" >/dev/null && return 0
		sleep 0.05
	done
	fail "no indexer running: $(ls -A "$DB/tmp")"
}
# left_alone WHAT: DB/tmp empty, no indexer, the catalog as it was
left_alone() {
	tmp_empty "$1" "$PROG_ID"
	pgrep -f "$MARK" >/dev/null && fail "$1: the indexer is still running"
	catalog_state >"$SCRATCH/catalog.after"
	diff "$SCRATCH/catalog.before" "$SCRATCH/catalog.after" >&2 || fail "$1: the catalog changed"
	[[ ! -e $DB/misses/$PROG_ID ]] || fail "$1: remembered as a miss"
	run "$SYMDB" verify --db "$DB" --grace 0
	expect_ok "$1: verify --grace 0: $(cat "$OUT")"
}
# indexing_interrupted WHAT SIG STATUS CMD...: CMD, stopped by SIG while its
# debuginfod download is being indexed, exits STATUS within 3 s with one line
# and leaves everything as it was.
indexing_interrupted() {
	local what=$1 sig=$2 status=$3
	shift 3
	start env SYMDB_INDEXER="$HOOK" "$@"
	wait_indexing
	stop "$sig"
	note "$what: ended $STOP_MS ms after SIG$sig"
	((RC == status)) || fail "$what: exit status $RC, expected $status (ended by SIG$sig): $(cat "$ERR")"
	((STOP_MS < 3000)) || fail "$what: ended $STOP_MS ms after SIG$sig, expected < 3000"
	[[ $(wc -l <"$ERR") == 1 ]] &&
		grep -qxF "symdb: $PROG_ID: $DBGD_URL: executable: interrupted" "$ERR" ||
		fail "$what: stderr: $(cat "$ERR")"
	left_alone "$what"
}

note "3. build --build-id, the download being indexed, SIGINT"
indexing_interrupted "build --build-id while indexing, SIGINT" INT 130 \
	"$SYMDB" build --db "$DB" --build-id "$PROG_ID" --debuginfod "$DBGD_URL" --fetch-timeout 60

note "4. query --uuid, the download being indexed, SIGTERM"
indexing_interrupted "query --uuid while indexing, SIGTERM" TERM 143 \
	"$SYMDB" query --db "$DB" --debuginfod "$DBGD_URL" --fetch-timeout 60 --uuid "$PROG_ID" \
	$(cat "$SCRATCH/addrs")

note "5. symdb serve stopped while its fetch worker indexes"
# The request is answered "pending" after its budget; the fetch goes on.
node_serve_start "$DB" --debuginfod "$DBGD_URL" --indexer "$HOOK" --fetch-budget-ms 300 \
	--fetch-timeout 60
curl -s -m 30 -H 'Content-Type: application/json' -o "$SCRATCH/serve.out" \
	-d '{"modules":[{"build_id":"'"$PROG_ID"'","addresses":["0x1000"]}]}' \
	"$NODE_SERVE_URL/v1/symbolize" || fail "serve: the request failed"
QPID=$NODE_SERVE_PID
wait_indexing
stop TERM
note "symdb serve: ended $STOP_MS ms after SIGTERM"
((RC == 0)) || fail "serve: exit status $RC after SIGTERM: $(cat "$SCRATCH/serve.err")"
((STOP_MS < 3000)) || fail "serve: ended $STOP_MS ms after SIGTERM, expected < 3000"
left_alone "serve stopped while indexing"

note "6. the next query, without the hook, fetches and answers"
llvm-symbolizer-14 --obj "$SCRATCH/fx/srv/prog" $(cat "$SCRATCH/addrs") >"$SCRATCH/want"
grep -q middle "$SCRATCH/want" || fail "the oracle names no function: the fixture is not what it should be"
run "$SYMDB" query --db "$DB" --debuginfod "$DBGD_URL" --fetch-timeout 60 --uuid "$PROG_ID" \
	$(cat "$SCRATCH/addrs")
((RC == 0)) && [[ ! -s $ERR ]] || fail "query after the interruptions: exit $RC: $(cat "$ERR")"
diff -u "$SCRATCH/want" "$OUT" || fail "query after the interruptions: answers differ from llvm-symbolizer-14"
tmp_empty "query after the interruptions"
