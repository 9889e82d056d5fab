#!/bin/bash
# SPDX-License-Identifier: MIT
#
# sigterm_twice.sh: a second SIGTERM during a graceful stop exits at once
# (README "symdb serve", Signals).  An upload whose indexer hangs (the
# symdb-indexer-test hang hook) is in flight; the first SIGTERM starts the
# stop, which waits for that upload; the second makes the server exit
# with status 1 and its one stderr line, and the hanging indexer dies with
# it.  Before, the second signal was never taken (signals are blocked in
# every thread but the main one, which was busy stopping): the server
# waited for the indexer's own time limit, then exited 0.
source "$(dirname "$0")/lib.sh"
[[ -n ${SYMDB_INDEXER_TEST:-} ]] || { echo "SKIP: no symdb-indexer-test (hanging indexer)"; exit 77; }

hang=$SCRATCH/indexer-hang
printf '#!/bin/sh\nexec "%s" --test-hook hang "$@"\n' "$SYMDB_INDEXER_TEST" >"$hang"
chmod +x "$hang"
serve_start --indexer "$hang"

# the upload: a fixture's bytes, answered (if ever) into up.out
python3 "$SERVE_CLIENT" "$SERVE_ADDR" POST /v1/images --body-file "$FIXTURES/full/c_gcc_O2_pie" \
	--header 'Content-Type: application/octet-stream' --timeout 600 >"$SCRATCH/up.out" 2>&1 &
up=$!
kid=
for ((i = 0; i < 600; i++)); do
	kid=$(pgrep -P "$SERVE_PID" | head -1 || true)
	[[ -n $kid ]] && break
	sleep 0.1
done
[[ -n $kid ]] || fail "no indexer started for the upload"

kill -TERM "$SERVE_PID"
for ((i = 0; i < 200; i++)); do
	grep -q "finishing the requests in flight" "$SERVE_ERR" && break
	sleep 0.05
done
grep -q "finishing the requests in flight" "$SERVE_ERR" || fail "no stop line after the first SIGTERM"
kill -0 "$SERVE_PID" 2>/dev/null || fail "the server exited at the first SIGTERM with the upload in flight"
kill -TERM "$SERVE_PID"
serve_stop wait
((SERVE_RC == 1)) || fail "exit $SERVE_RC after the second SIGTERM, expected 1"
msg="symdb: serve: second signal: exiting now, abandoning the requests in flight"
grep -qxF "$msg" "$SERVE_ERR" || fail "stderr does not say: $msg ($(cat "$SERVE_ERR"))"
for ((i = 0; i < 200; i++)); do
	kill -0 "$kid" 2>/dev/null || break
	sleep 0.05
done
kill -0 "$kid" 2>/dev/null && { kill -KILL "$kid"; fail "the hanging indexer outlived the server"; }
wait "$up" || true
note "second SIGTERM: exit 1, the indexer gone"
