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
source "$(dirname "$0")/lib.sh"
require curl
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
# stop SIG: send SIG to QPID and wait for it (10 s at most); sets RC
stop() {
	kill -"$1" "$QPID"
	for ((i = 0; i < 200; i++)); do
		kill -0 "$QPID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$QPID" 2>/dev/null && fail "still running 10 s after SIG$1"
	set +e
	wait "$QPID"
	RC=$?
	set -e
}
tmp_empty() {
	[[ -z $(ls -A "$DB/tmp" 2>/dev/null) ]] || fail "$1: DB/tmp not empty: $(ls -A "$DB/tmp")"
	pgrep -f "symdb-fetch.*$U" >/dev/null && fail "$1: a fetcher of $U is still running"
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
