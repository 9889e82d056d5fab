# SPDX-License-Identifier: MIT
#
# lib.sh: helpers sourced by the tests/fleet/*.sh scripts, on top of
# tests/cli/lib.sh (run, fail, note, require, expect_error, SCRATCH, SYMDB).
# Every server runs on 127.0.0.1 on a port chosen at test time, and every
# server started here is killed when the test exits, however it exits.
#
#   dbgd_start DIR NFILES
#       a real `debuginfod -F DIR` (Debian package debuginfod) on a free
#       loopback port with its request log (-v) in $DBGD_LOG, waited for
#       until it has scanned NFILES files (its /metrics).  Sets DBGD_PID,
#       DBGD_URL.  Skips the test (77) when debuginfod is not installed.
#   dbgd_gets HEX        how many requests for build-id HEX $DBGD_LOG holds
#   http_start DIR       a static HTTP server (python3 http.server) over DIR,
#                        its request log in $HTTP_LOG.  Sets HTTP_PID, HTTP_URL.
#   http_gets PATTERN    how many requests of $HTTP_LOG match PATTERN (ERE)
#   hang_start           a server that accepts every connection and never
#                        answers; one line per connection in $HANG_LOG.
#                        Sets HANG_URL.
#   dead_url             a loopback URL nobody listens on (prints it)
#   fleet_fixture DIR    builds DIR/prog (gcc -g -O2 with inlining, a GNU
#                        build-id), DIR/srv/prog (stripped, with a
#                        .gnu_debuglink) and DIR/srv/prog.debug; sets PROG_ID
#   fleet_addrs FILE     the addresses of prog's functions (vaddr, hex), one a line
#   nginx_conf_head DIR  the start of a test nginx's configuration (pid,
#                        logs, temp dirs in DIR) up to "http {"
#   nginx_start TREE [NAME]
#       a real nginx serving the directory TREE (the store tree of `symdb
#       export --tree`) with the server block of README.md's "Deployment"
#       section, its `listen` and `root` replaced; config, pid file, logs and
#       temp dirs in $SCRATCH/NAME (default nginx).  Waits until it answers.
#       Sets NGINX_URL (http://127.0.0.1:PORT), NGINX_ACCESS (its access
#       log) and NGINX_PID.
#   nginx_gets ACCESS_LOG PATH   how many GET requests for PATH the log holds
#   node_serve_start DB [ARG...]  a `symdb serve --db DB ARG...` on a free
#                        loopback port, its access log in
#                        $SCRATCH/serve-access.log, its stderr in
#                        $SCRATCH/serve.err.  Sets NODE_SERVE_URL,
#                        NODE_SERVE_LOG, NODE_SERVE_PID.
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

FLEET_PIDS=()
# SIGTERM first: nginx's master stops its workers then, while a SIGKILLed
# master leaves them running; what is left after 5 s is killed with its
# children.
fleet_kill_all() {
	local p i
	for p in "${FLEET_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${FLEET_PIDS[@]}"; do
		for ((i = 0; i < 100; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.05
		done
		pkill -KILL -P "$p" 2>/dev/null || true
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}
trap 'rc=$?; fleet_kill_all; if ((rc == 0 && SKIPPED_PARTS)); then echo "SKIP: $SKIPPED_PARTS part(s) could not run"; exit 77; fi; exit $rc' EXIT

# A port free now (the kernel's choice); a server that loses it to another
# process in the meantime fails to start and is started again.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

DBGD_LOG=$SCRATCH/debuginfod.log
dbgd_start() {
	local dir=$1 nfiles=$2 port i try
	command -v debuginfod >/dev/null 2>&1 || { echo "SKIP: debuginfod not found (Debian package debuginfod)"; exit 77; }
	for try in 1 2 3; do
		port=$(free_port)
		: >"$DBGD_LOG"
		rm -f "$SCRATCH/debuginfod.sqlite"*
		# -F: ELF/DWARF files under DIR; -t0 -g0: no rescans or grooming
		# while the test runs; the log gets one line per request (-v).
		debuginfod -F -t0 -g0 -p "$port" -d "$SCRATCH/debuginfod.sqlite" -v "$dir" 2>"$DBGD_LOG" &
		DBGD_PID=$!
		FLEET_PIDS+=("$DBGD_PID")
		DBGD_URL=http://127.0.0.1:$port
		for ((i = 0; i < 300; i++)); do
			kill -0 "$DBGD_PID" 2>/dev/null || break
			if curl -s --max-time 2 "$DBGD_URL/metrics" 2>/dev/null |
				awk -v n="$nfiles" '/^scanned_files_total\{source="file"\}/ { if ($2 >= n) ok = 1 } END { exit !ok }'; then
				note "debuginfod on $DBGD_URL scanned $nfiles files"
				return 0
			fi
			sleep 0.1
		done
		kill -KILL "$DBGD_PID" 2>/dev/null || true
		wait "$DBGD_PID" 2>/dev/null || true
	done
	fail "debuginfod did not start or scan $dir within 30 s: $(tail -3 "$DBGD_LOG")"
}
dbgd_gets() { grep -c "GET /buildid/$1/" "$DBGD_LOG" || true; }

HTTP_LOG=$SCRATCH/http.log
http_start() {
	local dir=$1 i port
	: >"$HTTP_LOG"
	: >"$SCRATCH/http.out" # before the background job's own redirection
	# Port 0: python binds a free port and prints it ("Serving HTTP on
	# 127.0.0.1 port N"); requests are logged on stderr.
	python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$dir" >"$SCRATCH/http.out" 2>"$HTTP_LOG" &
	HTTP_PID=$!
	FLEET_PIDS+=("$HTTP_PID")
	for ((i = 0; i < 200; i++)); do
		port=$(sed -n 's/^Serving HTTP on [^ ]* port \([0-9]*\).*/\1/p' "$SCRATCH/http.out")
		[[ -n $port ]] && { HTTP_URL=http://127.0.0.1:$port; return 0; }
		sleep 0.05
	done
	fail "python3 http.server did not start"
}
http_gets() { grep -cE "$1" "$HTTP_LOG" || true; }

HANG_LOG=$SCRATCH/hang.log
hang_start() {
	local i port
	: >"$HANG_LOG"
	# Created here: the background job's redirection may come later than
	# the first read below.
	: >"$SCRATCH/hang.port"
	python3 -u -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1])
log = open(sys.argv[1], "a", buffering=1)
held = []
while True:
    c, _ = s.accept()
    log.write("accepted\n")
    held.append(c)  # never read, never answered, never closed
' "$HANG_LOG" >"$SCRATCH/hang.port" &
	FLEET_PIDS+=("$!")
	for ((i = 0; i < 200; i++)); do
		port=$(head -1 "$SCRATCH/hang.port")
		[[ -n $port ]] && { HANG_URL=http://127.0.0.1:$port; return 0; }
		sleep 0.05
	done
	fail "the hanging server did not start"
}

dead_url() { echo "http://127.0.0.1:$(free_port)"; }

fleet_fixture() {
	local d=$1
	mkdir -p "$d/srv"
	cat >"$d/prog.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
static inline int leaf(int x) { return x * 7 + (x >> 3); }
static int __attribute__((noinline)) middle(int x) { return leaf(x) + leaf(x + 1); }
int __attribute__((noinline)) outer(int x) { int s = 0; for (int i = 0; i < x; i++) s += middle(i); return s; }
int main(int argc, char **argv) { printf("%d\n", outer(argc > 1 ? atoi(argv[1]) : 3)); return 0; }
CEOF
	gcc -g -O2 -Wl,--build-id -o "$d/prog" "$d/prog.c"
	objcopy --only-keep-debug "$d/prog" "$d/srv/prog.debug"
	objcopy --strip-all --add-gnu-debuglink="$d/srv/prog.debug" "$d/prog" "$d/srv/prog"
	PROG_ID=$(build_id "$d/prog")
	[[ -n $PROG_ID ]] || fail "no build-id in $d/prog"
}

fleet_addrs() {
	llvm-nm-14 --defined-only "$1" | awk '$2 ~ /^[tT]$/ { print "0x" $1 }' | sort -u
}

FLEET_README=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/README.md
# The first ```nginx block of README.md's "## Deployment" section.
nginx_readme_block() {
	awk '/^## Deployment/ { d = 1; next } d && /^## / { exit }
	     d && /^```nginx$/ { b = 1; next } b && /^```$/ { exit } b { print }' "$FLEET_README"
}

# nginx_conf_head DIR: what every test nginx's configuration starts with
# (pid, logs and temp directories in DIR), up to the open "http {"; the
# caller adds its server block and the closing "}".
nginx_conf_head() {
	local dir=$1 t
	echo "worker_processes 1;"
	echo "pid $dir/nginx.pid;"
	echo "error_log $dir/error.log;"
	echo "events { worker_connections 64; }"
	echo "http {"
	echo "    access_log $dir/access.log;"
	for t in client_body proxy fastcgi uwsgi scgi; do
		echo "    ${t}_temp_path $dir/tmp/$t;"
	done
}

nginx_start() {
	local tree=$1 name=${2:-nginx} dir port i try
	command -v nginx >/dev/null 2>&1 || { echo "SKIP: nginx not found (Debian package nginx)"; exit 77; }
	dir=$SCRATCH/$name
	mkdir -p "$dir/tmp"
	nginx_readme_block >"$dir/server.conf"
	grep -q '^ *listen ' "$dir/server.conf" && grep -q '^ *root ' "$dir/server.conf" ||
		fail "README.md: no nginx block with listen and root in the Deployment section"
	for try in 1 2 3; do
		port=$(free_port)
		{
			nginx_conf_head "$dir"
			sed -e "s|^\( *\)listen [^;]*;|\1listen 127.0.0.1:$port;|" \
				-e "s|^\( *\)root [^;]*;|\1root $tree;|" "$dir/server.conf"
			echo "}"
		} >"$dir/nginx.conf"
		: >"$dir/error.log"
		nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -g 'daemon off;' 2>>"$dir/error.log" &
		NGINX_PID=$!
		FLEET_PIDS+=("$NGINX_PID")
		NGINX_URL=http://127.0.0.1:$port
		NGINX_ACCESS=$dir/access.log
		for ((i = 0; i < 200; i++)); do
			kill -0 "$NGINX_PID" 2>/dev/null || break
			# any HTTP answer (the layout's 404) means it is serving
			curl -s -o /dev/null -m 2 "$NGINX_URL/" && return 0
			sleep 0.05
		done
		kill -TERM "$NGINX_PID" 2>/dev/null || true
		wait "$NGINX_PID" 2>/dev/null || true
		grep -q 'Address already in use' "$dir/error.log" || break
	done
	fail "nginx did not start: $(tail -n 3 "$dir/error.log")"
}

nginx_gets() { grep -cF "\"GET $2 HTTP/" "$1" 2>/dev/null || true; }

node_serve_start() {
	local db=$1 i addr=
	local pid
	shift
	NODE_SERVE_LOG=$SCRATCH/serve-access.log
	# Created before the background job's own redirection: the loop below
	# may read it before the child has opened it (seen under ASan, where
	# the fork is slow; sed's error then ended the test through set -e).
	: >"$SCRATCH/serve.err"
	"$SYMDB" serve --db "$db" --listen 127.0.0.1:0 --log "$NODE_SERVE_LOG" "$@" 2>"$SCRATCH/serve.err" &
	pid=$!
	NODE_SERVE_PID=$pid
	FLEET_PIDS+=("$pid")
	for ((i = 0; i < 400; i++)); do
		addr=$(sed -n 's/^symdb: serve: listening on \([^ ]*\) .*/\1/p' "$SCRATCH/serve.err")
		[[ -n $addr ]] && break
		kill -0 "$pid" 2>/dev/null || fail "symdb serve exited at start: $(cat "$SCRATCH/serve.err")"
		sleep 0.05
	done
	[[ -n $addr ]] || fail "symdb serve did not start: $(cat "$SCRATCH/serve.err")"
	NODE_SERVE_URL=http://$addr
	for ((i = 0; i < 200; i++)); do
		curl -s -o /dev/null -m 2 "$NODE_SERVE_URL/healthz" && return 0
		sleep 0.05
	done
	fail "symdb serve: /healthz did not answer"
}
