#!/bin/bash
# SPDX-License-Identifier: MIT
#
# listen.sh: the listeners of `symdb serve --listen` (README "symdb serve",
# Listeners), loopback and unix sockets only:
#   1. [::1]:0 answers over IPv6 (skipped where ::1 cannot be bound);
#   2. unix:PATH answers over the socket, the socket file has mode 0600,
#      the log names the peer "unix", and the file is removed at exit;
#   3. a stale socket at PATH (nobody listens) is replaced;
#   4. a regular file at PATH is refused with one line, exit 1, and left
#      as it was;
#   5. the socket of a running server is refused, and that server goes on;
#   6. malformed addresses are one line each, exit 1.
source "$(dirname "$0")/lib.sh"

note "1. [::1]"
if python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
	serve_start --listen '[::1]:0'
	[[ $SERVE_ADDR == \[::1\]:[0-9]* ]] || fail "listening on '$SERVE_ADDR'"
	serve_alive
	grep -q 'peer=\[::1\]:[0-9]* method=GET path=/healthz status=200' "$SERVE_LOG" ||
		fail "no IPv6 peer in the log"
	serve_stop
else
	skip_part "[::1] cannot be bound here"
fi

note "2. unix socket"
SOCK=$SCRATCH/s.sock
serve_start --listen "unix:$SOCK"
[[ $SERVE_ADDR == "unix:$SOCK" ]] || fail "listening on '$SERVE_ADDR'"
[[ -S $SOCK ]] || fail "$SOCK is not a socket"
[[ $(stat -c %a "$SOCK") == 600 ]] || fail "$SOCK has mode $(stat -c %a "$SOCK"), expected 600"
serve_alive
grep -q 'peer=unix method=GET path=/healthz status=200' "$SERVE_LOG" || fail "no unix peer in the log"

note "5. the socket of a running server"
run "$SYMDB" serve --db "$SERVE_DB" --listen "unix:$SOCK"
((RC == 1)) || fail "a live server's socket: exit $RC, expected 1"
expect_error "live socket" "a server is listening on this socket"
serve_alive
serve_stop
((SERVE_RC == 0)) || fail "exit $SERVE_RC"
[[ ! -e $SOCK ]] || fail "$SOCK is left behind after exit"

note "3. a stale socket"
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$SOCK"
[[ -S $SOCK ]] || fail "could not make a stale socket"
serve_start --listen "unix:$SOCK"
serve_alive
serve_stop

note "4. a regular file"
echo precious >"$SOCK"
run "$SYMDB" serve --db "$SERVE_DB" --listen "unix:$SOCK"
((RC == 1)) || fail "a regular file: exit $RC, expected 1"
expect_error "regular file" "exists and is not a socket (not replaced)"
[[ $(cat "$SOCK") == precious ]] || fail "the regular file was changed"

note "6. malformed addresses"
for a in nonsense 127.0.0.1:99999 127.0.0.1:-1 '[::1]8630' '[::1' 127.0.0.1: unix: \
	"unix:$SCRATCH/$(printf 'x%.0s' {1..120})"; do
	run "$SYMDB" serve --db "$SERVE_DB" --listen "$a"
	((RC == 1)) || fail "--listen '$a': exit $RC, expected 1"
	expect_error "--listen '$a'" "--listen"
done
