# SPDX-License-Identifier: MIT
#
# lib.sh: helpers sourced by the tests/serve/*.sh scripts, on top of
# tests/cli/lib.sh (run, fail, note, require, SCRATCH, SYMDB, FIXTURES).
#
#   serve_start [SYMDB-SERVE-ARGS...]
#       starts `symdb serve --db $SERVE_DB` on a free loopback port
#       (--listen 127.0.0.1:0 unless the arguments name a --listen), with
#       the access log in $SERVE_LOG and stderr in $SERVE_ERR, waits for its
#       "listening on ADDR" line and then for GET /healthz to answer 200.
#       Sets SERVE_PID, SERVE_ADDR (HOST:PORT, [V6]:PORT or unix:/path) and,
#       for TCP, SERVE_URL (http://ADDR).  Every server started here is
#       killed when the test exits, however it exits.
#   serve_stop [SIGNAL]   SIGTERM (default; "wait": none, it was sent already)
#                         and wait for the server; SERVE_RC = its exit code
#   serve_req METHOD PATH [serve_client.py options]
#       one request; STATUS = the HTTP status (0: no answer), the body in
#       $OUT (serve_client.py is the client; python3 standard library only)
#   serve_wait_log ERE [N]   waits (at most 10 s) until N (default 1) lines of
#                         the access log match ERE: a line is written when a
#                         request ends, which can be just after its client has
#                         read the whole answer
#   serve_wait_metric LINE   waits (at most 10 s) until GET /metrics has LINE
#                         (a whole line, an ERE)
#   serve_alive           fails the test unless the server still answers
#   serve_hwm_kb          the server's peak RSS (VmHWM) in KiB; the bad-request
#                         tests check it against SERVE_RSS_BOUND_KB, the bound
#                         README states (default limits, small databases)
#
# SERVE_DB defaults to $SCRATCH/db (symdb serve creates it when missing) and
# may be set before serve_start.  Several tests run servers at once: never a fixed port.
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

SERVE_CLIENT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve_client.py
SERVE_DB=${SERVE_DB:-$SCRATCH/db}
SERVE_LOG=$SCRATCH/access.log
SERVE_ERR=$SCRATCH/serve.err
SERVE_PID=
SERVE_ADDR=
SERVE_URL=
SERVE_RC=
SERVE_PIDS=()
STATUS=0
SERVE_RSS_BOUND_KB=$((64 * 1024))

serve_kill_all() {
	local p
	for p in "${SERVE_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}
# cli/lib.sh's EXIT trap (skipped parts end as 77), with the servers killed
trap 'rc=$?; serve_kill_all; if ((rc == 0)) && [[ -f $SERVE_ERR ]] && grep -qE "AddressSanitizer|runtime error:|ThreadSanitizer" "$SERVE_ERR"; then echo "FAIL: sanitizer report from the server" >&2; rc=1; fi; if ((rc == 0 && SKIPPED_PARTS)); then echo "SKIP: $SKIPPED_PARTS part(s) could not run"; exit 77; fi; exit $rc' EXIT

serve_start() {
	local listen=(--listen 127.0.0.1:0) a i
	for a; do
		[[ $a == --listen || $a == --listen=* ]] && listen=()
	done
	: >"$SERVE_ERR"
	"$SYMDB" serve --db "$SERVE_DB" "${listen[@]}" --log "$SERVE_LOG" "$@" 2>"$SERVE_ERR" &
	SERVE_PID=$!
	SERVE_PIDS+=("$SERVE_PID")
	SERVE_ADDR=
	for ((i = 0; i < 400; i++)); do
		SERVE_ADDR=$(sed -n 's/^symdb: serve: listening on \([^ ]*\) .*/\1/p' "$SERVE_ERR")
		[[ -n $SERVE_ADDR ]] && break
		kill -0 "$SERVE_PID" 2>/dev/null || fail "symdb serve $*: exited at start: $(cat "$SERVE_ERR")"
		sleep 0.05
	done
	[[ -n $SERVE_ADDR ]] || fail "symdb serve $*: no 'listening on' line in 20 s"
	SERVE_URL=
	[[ $SERVE_ADDR == unix:* ]] || SERVE_URL=http://$SERVE_ADDR
	for ((i = 0; i < 200; i++)); do
		serve_req GET /healthz
		((STATUS == 200)) && return 0
		sleep 0.05
	done
	fail "symdb serve: /healthz did not answer 200 within 10 s (last: $STATUS)"
}

serve_stop() {
	local sig=${1:-TERM}
	[[ $sig == wait ]] || kill -"$sig" "$SERVE_PID" 2>/dev/null || true
	set +e
	wait "$SERVE_PID"
	SERVE_RC=$?
	set -e
	serve_no_sanitizer_report
}

# a sanitizer build (.ci/run's second pass) reports into the server's stderr
serve_no_sanitizer_report() {
	if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|ThreadSanitizer' "$SERVE_ERR"; then
		fail "sanitizer report from the server: $(grep -m3 -E 'Sanitizer|runtime error' "$SERVE_ERR")"
	fi
}

serve_req() {
	local m=$1 p=$2
	shift 2
	set +e
	python3 "$SERVE_CLIENT" "$SERVE_ADDR" "$m" "$p" "$@" >"$OUT.raw" 2>"$ERR"
	local rc=$?
	set -e
	if ((rc != 0)); then
		STATUS=0
		: >"$OUT"
		return 0
	fi
	STATUS=$(head -n1 "$OUT.raw")
	tail -n +2 "$OUT.raw" >"$OUT"
}

serve_wait_log() {
	local ere=$1 n=${2:-1} i
	for ((i = 0; i < 200; i++)); do
		(($(grep -cE -- "$ere" "$SERVE_LOG" 2>/dev/null || true) >= n)) && return 0
		sleep 0.05
	done
	fail "the access log has $(grep -cE -- "$ere" "$SERVE_LOG" || true) lines matching '$ere', expected $n"
}

serve_wait_metric() {
	local i
	for ((i = 0; i < 200; i++)); do
		serve_req GET /metrics
		grep -qxE -- "$1" "$OUT" && return 0
		sleep 0.05
	done
	fail "/metrics has no line '$1'"
}

serve_alive() {
	kill -0 "$SERVE_PID" 2>/dev/null || fail "the server died: $(tail -n 5 "$SERVE_ERR")"
	serve_no_sanitizer_report
	serve_req GET /healthz
	((STATUS == 200)) || fail "the server no longer answers /healthz (status $STATUS)"
}

serve_hwm_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$SERVE_PID/status"
}

# serve_py [ARGS...] <<'PY' ... PY: a python3 script on stdin, with
# serve_client importable and sys.argv[1] = $SERVE_ADDR
serve_py() {
	PYTHONPATH=$(dirname "$SERVE_CLIENT") python3 - "$SERVE_ADDR" "$@"
}

# oracle_cases "FIXTURE..." LIBC_N PY_N MACHO_N: indexes what the oracle tests
# (json_oracle.sh, binary.sh) compare -- the named DWARF fixtures, the C++ one
# under every option, a path left to first sight, libc (with libc6-dbg),
# libpython and the Mach-O fixtures -- and fills cases[] in json_oracle.py's
# case format.  An empty *_N keeps the Python side's default sample size.
# Needs build_id and index from the calling script.
oracle_cases() {
	local f obj cpp o libc id pydir libpython mfx n dw uuid
	local nlibc=${2:+|-||$2} npy=${3:+|-||$3} nmacho=${4:-300}
	cases=()
	for f in $1; do
		obj=$FIXTURES/full/$f
		index "$obj"
		cases+=("build_id|$(build_id "$obj")|$obj")
	done
	cpp=$FIXTURES/full/cpp_g++_O2_pie
	for o in nodemangle noinlines short none noinlines,short; do
		cases+=("build_id|$(build_id "$cpp")|$cpp|-|$o|500")
	done
	cases+=("path|-|$FIXTURES/full/c_gcc_O2_rdyn")
	libc=/lib/x86_64-linux-gnu/libc.so.6
	id=$(build_id "$libc")
	if [[ -f /usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug ]]; then
		index "$libc"
		cases+=("build_id|$id|$libc$nlibc")
	else
		skip_part "libc6-dbg is not installed (libc)"
	fi
	pydir=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')
	libpython=$pydir/libpython3.11.so.1.0
	if [[ -f $libpython ]]; then
		index "$libpython"
		cases+=("build_id|$(build_id "$libpython")|$libpython$npy")
	else
		skip_part "no libpython3.11.so.1.0 in $pydir"
	fi
	mfx=${MACHO_FIXTURES:-}
	if [[ -n $mfx && -f $mfx/.done ]]; then
		for n in app_arm64 app_x86_64 libmo_arm64.dylib libmo_x86_64.dylib; do
			index "$mfx/$n.dSYM"
			dw=$mfx/$n.dSYM/Contents/Resources/DWARF/$n
			uuid=$(llvm-dwarfdump-14 --uuid "$dw" | awk '{ print $2; exit }')
			cases+=("uuid|$uuid|$dw|-||$nmacho")
		done
		index "$mfx/app_fat.dSYM"
		cases+=("path|-|$mfx/app_fat|arm64||$nmacho" "path|-|$mfx/app_fat|x86_64||$nmacho")
	else
		skip_part "no Mach-O fixtures (the macho.fixtures test did not build them)"
	fi
}

# build_pair: index the C++ and the C -O2 PIE fixtures into $SERVE_DB; sets
# A and B (their paths), ua and ub (their build-ids) and fa (A's index file).
build_pair() {
	A=$FIXTURES/full/cpp_g++_O2_pie
	B=$FIXTURES/full/c_gcc_O2_pie
	run "$SYMDB" build --db "$SERVE_DB" "$A" "$B"
	expect_ok "build"
	ua=$(build_id "$A")
	ub=$(build_id "$B")
	fa=$SERVE_DB/images/${ua:0:2}/$ua.symdb
	[[ -f $fa ]] || fail "no index file $fa"
}

# func_addrs_json BIN: the start and the middle of every function of BIN
# (llvm-nm-14's sizes, not symdb's), as a comma-separated list of JSON strings
func_addrs_json() {
	llvm-nm-14 -S --defined-only "$1" | python3 -c '
import sys
out = []
for l in sys.stdin:
    f = l.split()
    if len(f) == 4 and f[2] in "tTwW":
        a, s = int(f[0], 16), int(f[1], 16)
        out += ["0x%x" % a, "0x%x" % (a + s // 2)]
print(",".join("\"%s\"" % x for x in out))
'
}
