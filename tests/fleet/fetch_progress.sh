#!/bin/bash
# SPDX-License-Identifier: MIT
#
# fetch_progress.sh: a download's progress line on a terminal.  The store
# (slow_store.py) sends image BIG a body that never ends; `symdb query
# --uuid HEX --fetch-timeout 3` runs under script(1), so that stderr is a
# terminal.  The fetcher draws "\rsymdb-fetch: URL: N KiB" and is killed at
# the deadline: the error must start a line of its own (it was glued to the
# unfinished progress line: "... 1542144 KiBsymdb: HEX: ..."), and the line
# is redrawn at most 4 times a second (it was redrawn at every libcurl
# callback: about 2,600 times in 3 s).
source "$(dirname "$0")/serve_lib.sh"
require readelf script
obj=$FIXTURES/full/c_gcc_O2_pie
BIG=$(build_id "$obj")
store_tree "$obj"
touch "$tree/endless.$BIG"
slow_store_start
cmd="'$SYMDB' query --db '$SCRATCH/db' --upstream '$store' --fetch-timeout 3 --uuid $BIG 0x1000"
script -qec "$cmd" /dev/null >"$SCRATCH/tty.out" 2>&1 || true
python3 - "$SCRATCH/tty.out" "$BIG" <<'PY' || fail "the terminal's output (above)"
import re, sys
raw, big = open(sys.argv[1], "rb").read().decode("utf-8", "replace"), sys.argv[2]
draws = len(re.findall(r"\rsymdb-fetch: [^\r\n]* KiB", raw))
at = raw.find("symdb: " + big + ":")
print("%d progress lines drawn; the error at %d, after %r" % (draws, at, raw[max(0, at - 8):at]))
assert at > 0, "no error line naming the build-id"
assert raw[:at].endswith(("\n", "\r\x1b[K")), "the error does not start a line of its own"
assert 1 <= draws <= 16, "%d progress lines in 3 s" % draws
PY
echo "PASS"
