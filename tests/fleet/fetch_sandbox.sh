#!/bin/bash
# SPDX-License-Identifier: MIT
#
# fetch_sandbox.sh: symdb-fetch's sandbox (tools/fetch_sandbox.c), seen
# from the CLI.  symdb-fetch-test (the same program with test hooks) is
# given as $SYMDB_FETCH through a wrapper that adds --test-hook:
#   1. exec: "HEX: URL: fetcher violated its sandbox: execve", exit 1,
#      nothing published, not remembered as a negative answer
#   2. fork: "... violated its sandbox: clone" (in a sanitizer build too,
#      whose leak checker's own clone shares the memory); TIOCSTI: "...
#      violated its sandbox: ioctl TIOCSTI/TIOCLINUX"
#   3. a write outside the debuginfod cache is refused (Landlock), and the
#      file does not exist; in debuginfod mode a write inside the cache is
#      not refused; a file outside the system's trees (this test's scratch
#      directory, unless it is under one) cannot be read, /etc/os-release
#      can (skipped, with a note, on a kernel without Landlock)
#   4. TCP (Landlock ABI 4, Linux 6.7; skipped, with a note, before): a
#      connection to a listening port that neither the source (upstream or
#      debuginfod URL) nor a proxy variable names is refused, to the
#      source's port or a proxy's it is made; no port can be bound; a store
#      redirecting to such a port fails the fetch at once; on any kernel,
#      70 debuginfod ports (more than the fetcher's list holds) refuse the
#      sandbox, none silently left out
#   5. the real symdb-fetch, caught while it waits on a server that never
#      answers: NoNewPrivs 1, Seccomp 2 (a filter), in /proc/PID/status;
#      a session of its own and no controlling terminal (/proc/PID/stat)
# The real fetches of the other fleet tests (debuginfod's cache, nginx,
# proxies) run inside the same sandbox.
source "$(dirname "$0")/lib.sh"
require gcc objcopy
FETCH_TEST=$(dirname "$SYMDB")/symdb-fetch-test
[[ -x $FETCH_TEST ]] || fail "$FETCH_TEST not built"
DB=$SCRATCH/db
fleet_fixture "$SCRATCH/fx"
mkdir -p "$SCRATCH/empty"
http_start "$SCRATCH/empty"

# hooked HOOK: a wrapper running symdb-fetch-test with --test-hook HOOK
NHOOK=0
hooked() {
	local w=$SCRATCH/fetch-hook-$((++NHOOK))
	printf '#!/bin/sh\nexec %q --test-hook %q "$@"\n' "$FETCH_TEST" "$1" >"$w"
	chmod +x "$w"
	echo "$w"
}
fetch_with() { # HOOK [ARGS...]: symdb build --build-id PROG_ID with that fetcher
	local hook=$1
	shift
	SYMDB_FETCH=$(hooked "$hook") run "$SYMDB" build --db "$DB" --build-id "$PROG_ID" "$@"
}
nothing_published() {
	[[ -z $("$SYMDB" --db "$DB" list 2>/dev/null) ]] || fail "$1: something was published"
	[[ ! -e $DB/misses/$PROG_ID ]] || fail "$1: remembered as a negative answer"
	[[ -z $(find "$DB/tmp" -mindepth 1 2>/dev/null) ]] || fail "$1: files left in DB/tmp"
}

note "1. exec inside the fetcher"
fetch_with exec --upstream "$HTTP_URL"
expect_error "exec" "$PROG_ID: $HTTP_URL/symdb/v1/${PROG_ID:0:2}/$PROG_ID.symdb: fetcher violated its sandbox: execve"
((RC == 1)) || fail "exec: exit $RC, expected 1"
nothing_published exec

note "2. a new process; input pushed into a terminal"
fetch_with fork --upstream "$HTTP_URL"
expect_error "fork" "fetcher violated its sandbox: clone"
nothing_published fork
fetch_with tiocsti --upstream "$HTTP_URL"
expect_error "TIOCSTI" "fetcher violated its sandbox: ioctl TIOCSTI/TIOCLINUX"
nothing_published tiocsti

note "3. files: writes refused outside the debuginfod cache, allowed inside; reads"
files_checks() {
	fetch_with "write:$SCRATCH/outside" --upstream "$HTTP_URL"
	expect_error "write outside" "test hook: cannot write $SCRATCH/outside: Permission denied"
	[[ ! -e $SCRATCH/outside ]] || fail "the fetcher created $SCRATCH/outside"
	fetch_with "write:$SCRATCH/outside" --debuginfod "$HTTP_URL"
	expect_error "write outside, debuginfod mode" "test hook: cannot write $SCRATCH/outside: Permission denied"
	[[ ! -e $SCRATCH/outside ]] || fail "the fetcher created $SCRATCH/outside (debuginfod mode)"
	# (a cache named by DEBUGINFOD_CACHE_PATH: the default one is the
	# fetch's own directory in DB/tmp, gone when the fetch ends)
	DEBUGINFOD_CACHE_PATH=$SCRATCH/dcache fetch_with "write:$SCRATCH/dcache/probe" \
		--debuginfod "$HTTP_URL"
	expect_error "write inside the cache" "test hook: wrote $SCRATCH/dcache/probe"
	[[ -f $SCRATCH/dcache/probe ]] || fail "the write inside the cache left no file"
	nothing_published "write inside the cache"
	echo secret >"$SCRATCH/secret"
	case $(realpath "$SCRATCH") in
	/etc/* | /usr/* | /lib*/* | /dev/* | /proc/* | /sys/* | /run/*)
		note "   (the scratch directory is under a tree the fetcher may read: not checked)" ;;
	*)
		fetch_with "read:$SCRATCH/secret" --upstream "$HTTP_URL"
		expect_error "read outside the system's trees" \
			"test hook: cannot read $SCRATCH/secret: Permission denied" ;;
	esac
	fetch_with "read:/etc/os-release" --upstream "$HTTP_URL"
	expect_error "read /etc/os-release" "test hook: read /etc/os-release"
}
# (a kernel without Landlock: the fetcher says so on stderr, and runs)
timeout 10 env -u http_proxy -u https_proxy -u all_proxy -u HTTPS_PROXY -u ALL_PROXY \
	"$FETCH_TEST" url "$(dead_url)/" 3>/dev/null >/dev/null 2>"$SCRATCH/probe.err" || true
if grep -q 'sandbox incomplete: no Landlock' "$SCRATCH/probe.err"; then
	note "   SKIP: $(cat "$SCRATCH/probe.err")"
	SKIPPED_PARTS=$((SKIPPED_PARTS + 1))
else
	files_checks
fi

note "4. TCP: the sources' and proxies' ports only; no port bound"
# More distinct ports than the list holds (on any kernel): refused, not
# some of them silently left out.
many=$(for p in $(seq 20001 20070); do printf 'http://127.0.0.1:%d ' "$p"; done)
mkdir -p "$SCRATCH/many-cache"
timeout 20 env DEBUGINFOD_URLS="$many" DEBUGINFOD_CACHE_PATH="$SCRATCH/many-cache" \
	"$FETCH_TEST" debuginfod "$PROG_ID" 3>/dev/null 4>/dev/null >"$SCRATCH/many.out" 2>/dev/null || true
grep -qx 'error cannot enter the sandbox: more than 64 ports to allow' "$SCRATCH/many.out" ||
	fail "70 debuginfod ports: '$(cat "$SCRATCH/many.out")', expected the sandbox refused"
hang_start
# landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION): the ABI
abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')
http_port=${HTTP_URL##*:}
hang_port=${HANG_URL##*:} # listening, and named by no source below
if ((abi < 4)); then
	note "   SKIP: Landlock ABI $abi in this kernel: no TCP rules before ABI 4"
	SKIPPED_PARTS=$((SKIPPED_PARTS + 1))
else
	fetch_with "connect:$hang_port" --upstream "$HTTP_URL"
	expect_error "connect to a port no source names" \
		"test hook: cannot connect to port $hang_port: Permission denied"
	fetch_with "connect:$hang_port" --debuginfod "$HTTP_URL"
	expect_error "connect to a port no source names, debuginfod mode" \
		"test hook: cannot connect to port $hang_port: Permission denied"
	fetch_with "connect:$http_port" --upstream "$HTTP_URL"
	expect_error "connect to the upstream's port" "test hook: could connect to port $http_port"
	fetch_with "connect:$hang_port" --debuginfod "$HANG_URL"
	expect_error "connect to the debuginfod server's port" \
		"test hook: could connect to port $hang_port"
	http_proxy=http://127.0.0.1:$hang_port fetch_with "connect:$hang_port" --upstream "$HTTP_URL"
	expect_error "connect to a proxy's port" "test hook: could connect to port $hang_port"
	fetch_with "bind:0" --upstream "$HTTP_URL"
	expect_error "bind" "test hook: cannot bind port 0: Permission denied"
	nothing_published "TCP hooks"
	# The real fetcher, from a store that redirects to a port no source
	# names (the hanging server: followed, the fetch would wait for it).
	: >"$SCRATCH/redir.port"
	python3 -u -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(302)
        self.send_header("Location", sys.argv[1] + self.path)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1])
s.serve_forever()
' "$HANG_URL" >"$SCRATCH/redir.port" &
	FLEET_PIDS+=("$!")
	for ((i = 0; i < 200; i++)); do
		[[ -s $SCRATCH/redir.port ]] && break
		sleep 0.05
	done
	[[ -s $SCRATCH/redir.port ]] || fail "the redirecting server did not start"
	redir_url=http://127.0.0.1:$(head -1 "$SCRATCH/redir.port")
	: >"$HANG_LOG"
	run "$SYMDB" build --db "$DB" --build-id "$PROG_ID" --upstream "$redir_url" --fetch-timeout 20
	expect_error "a redirect to a port no source names" \
		"Failed to connect to 127.0.0.1 port $hang_port"
	[[ ! -s $HANG_LOG ]] || fail "the fetcher followed the redirect to port $hang_port"
	nothing_published "redirect"
fi

note "5. the real fetcher's state while it waits"
hang_start
"$SYMDB" build --db "$DB" --build-id "$PROG_ID" --upstream "$HANG_URL" --fetch-timeout 20 \
	>"$SCRATCH/hang.out" 2>&1 &
bpid=$!
FLEET_PIDS+=("$bpid")
fpid=
for ((i = 0; i < 300; i++)); do
	fpid=$(pgrep -n -P "$bpid" -f 'symdb-fetch .*url' || true)
	[[ -n $fpid ]] && grep -q accepted "$HANG_LOG" && break
	sleep 0.05
done
[[ -n $fpid ]] || fail "no symdb-fetch child of the build appeared"
status=$(cat "/proc/$fpid/status")
grep -qP '^NoNewPrivs:\t1$' <<<"$status" || fail "symdb-fetch: NoNewPrivs is not 1: $(grep NoNewPrivs <<<"$status")"
grep -qP '^Seccomp:\t2$' <<<"$status" || fail "symdb-fetch: no seccomp filter: $(grep Seccomp <<<"$status")"
# /proc/PID/stat after the ") ": state ppid pgrp session tty_nr ...
read -r _ _ pgrp sid tty _ < <(sed 's/.*) //' "/proc/$fpid/stat")
[[ $sid == "$fpid" && $pgrp == "$fpid" && $tty == 0 ]] ||
	fail "symdb-fetch: session $sid, group $pgrp, tty $tty: not a session of its own without a terminal"
kill -KILL "$bpid" 2>/dev/null || true
wait "$bpid" 2>/dev/null || true
note "symdb-fetch $fpid: NoNewPrivs 1, Seccomp 2, its own session, no terminal"
echo PASS
