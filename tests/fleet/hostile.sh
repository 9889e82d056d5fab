#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# hostile.sh: downloads are hostile input.  A static HTTP server holds an
# upstream index tree (BASE/symdb/v1/XX/HEX.symdb) and a debuginfod URL
# layout (BASE/buildid/HEX/executable) with, besides one good index file:
# text, a truncated index file, another image's index file under this
# build-id, an index file with a flipped byte, text and a truncated ELF as
# executables; a good executable with another build's debuginfo, or with a
# truncated one.  Each gives one line on stderr, nothing published, nothing
# left in DB/tmp, no negative-cache entry (a damaged download is not "no
# source has it"), and nothing of it kept to answer once the server is right.  Upstreams are tried in order: a dead one, then a good one.
source "$(dirname "$0")/lib.sh"
require gcc objcopy
t0=$(date +%s%N)

fleet_fixture "$SCRATCH/fx"
T=$SCRATCH/tree
# The good index file, built here and laid out as an upstream store.
"$SYMDB" build --db "$SCRATCH/src" "$SCRATCH/fx/prog" >/dev/null
good=$(find "$SCRATCH/src/images" -name "$PROG_ID.symdb")
[[ -f $good ]] || fail "no index file for $PROG_ID"
put() { mkdir -p "$T/symdb/v1/${1:0:2}"; cat >"$T/symdb/v1/${1:0:2}/$1.symdb"; }
put "$PROG_ID" <"$good"
TEXT=aaaa000000000000000000000000000000000001
TRUNC=aaaa000000000000000000000000000000000002
OTHER=aaaa000000000000000000000000000000000003
FLIP=$PROG_ID
echo "<html>not found</html>" | put "$TEXT"
head -c $(( $(stat -c %s "$good") / 2 )) "$good" | put "$TRUNC"
put "$OTHER" <"$good"
# A second tree holding the good file with one byte flipped in its middle
# (a table payload): its checksum catches it.
T2=$SCRATCH/tree2
mkdir -p "$T2/symdb/v1/${PROG_ID:0:2}"
python3 - "$good" "$T2/symdb/v1/${PROG_ID:0:2}/$PROG_ID.symdb" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[len(b) // 2] ^= 0x40
open(sys.argv[2], 'wb').write(b)
PY
# debuginfod's layout: text, and the first 2 KiB of the real executable.
EXE_TEXT=bbbb000000000000000000000000000000000001
mkdir -p "$T/buildid/$EXE_TEXT" "$T/buildid/$PROG_ID"
echo "hello" >"$T/buildid/$EXE_TEXT/executable"
head -c 2048 "$SCRATCH/fx/srv/prog" >"$T/buildid/$PROG_ID/executable"
head -c 2048 "$SCRATCH/fx/srv/prog.debug" >"$T/buildid/$PROG_ID/debuginfo"
http_start "$T"

DB=$SCRATCH/db
nothing_published() {
	[[ -z $(find "$DB/images" -type f 2>/dev/null) ]] || fail "$1: something was published: $(find "$DB/images" -type f)"
	[[ -z $(ls -A "$DB/tmp" 2>/dev/null) ]] || fail "$1: DB/tmp not empty: $(ls -A "$DB/tmp")"
	[[ -z $(ls -A "$DB/misses" 2>/dev/null) ]] || fail "$1: a damaged download was remembered as a miss"
}

note "1. damaged index files from an upstream store"
run "$SYMDB" build --db "$DB" --upstream "$HTTP_URL" --build-id "$TEXT"
expect_error "text" "$TEXT: $HTTP_URL/symdb/v1/aa/$TEXT.symdb: invalid index file"
nothing_published text
run "$SYMDB" build --db "$DB" --upstream "$HTTP_URL" --build-id "$TRUNC"
expect_error "truncated" "$TRUNC: $HTTP_URL/symdb/v1/aa/$TRUNC.symdb: invalid index file"
nothing_published truncated
run "$SYMDB" query --db "$DB" --upstream "$HTTP_URL" --uuid "$OTHER" 0x1000
expect_error "another image's file" "$OTHER: $HTTP_URL/symdb/v1/aa/$OTHER.symdb: header UUID differs from the expected one"
nothing_published "another image's file"

note "2. a flipped byte: rejected by its checksum"
http_start "$T2"
FLIP_URL=$HTTP_URL
run "$SYMDB" build --db "$DB" --upstream "$FLIP_URL" --build-id "$FLIP"
expect_error "flipped byte" "$FLIP: $FLIP_URL/symdb/v1/${FLIP:0:2}/$FLIP.symdb: invalid index file"
nothing_published "flipped byte"
http_start "$T"

note "3. hostile debuginfod downloads (text, a truncated ELF)"
run "$SYMDB" build --db "$DB" --debuginfod "$HTTP_URL" --build-id "$EXE_TEXT"
expect_error "text executable" "$EXE_TEXT: $HTTP_URL: executable: not an object file with a build-id"
nothing_published "text executable"
run "$SYMDB" build --db "$DB" --debuginfod "$HTTP_URL" --build-id "$PROG_ID"
expect_error "truncated ELF" "$PROG_ID: $HTTP_URL: executable: " "$PROG_ID: $HTTP_URL: debuginfo: "
nothing_published "truncated ELF"

note "3b. a good executable with another build's debuginfo, or a truncated one"
# Another build of prog (one constant changed): its debug file carries
# another build-id.  It was published under PROG_ID, answering with the
# other program's lines.
sed 's/x \* 7/x * 9/' "$SCRATCH/fx/prog.c" >"$SCRATCH/prog2.c"
gcc -g -O2 -Wl,--build-id -o "$SCRATCH/prog2" "$SCRATCH/prog2.c"
objcopy --only-keep-debug "$SCRATCH/prog2" "$SCRATCH/prog2.debug"
ID2=$(build_id "$SCRATCH/prog2")
T3=$SCRATCH/tree3
mkdir -p "$T3/buildid/$PROG_ID"
cp "$SCRATCH/fx/srv/prog" "$T3/buildid/$PROG_ID/executable"
cp "$SCRATCH/prog2.debug" "$T3/buildid/$PROG_ID/debuginfo"
http_start "$T3"
run "$SYMDB" build --db "$DB" --debuginfod "$HTTP_URL" --build-id "$PROG_ID"
expect_error "another build's debuginfo" "$PROG_ID: $HTTP_URL: debuginfo: carries build-id $ID2"
nothing_published "another build's debuginfo"
# the first 2 KiB of the right debuginfo: it was published as the
# executable alone, without lines, and kept so
head -c 2048 "$SCRATCH/fx/srv/prog.debug" >"$T3/buildid/$PROG_ID/debuginfo"
run "$SYMDB" build --db "$DB" --debuginfod "$HTTP_URL" --build-id "$PROG_ID"
expect_error "a truncated debuginfo" "$PROG_ID: $HTTP_URL: "
nothing_published "a truncated debuginfo"
# Nothing of those downloads stays to answer for the server once it is
# right: the next fetch asks again and gets the real debuginfo.
cp "$SCRATCH/fx/srv/prog.debug" "$T3/buildid/$PROG_ID/debuginfo"
run "$SYMDB" query --db "$DB" --debuginfod "$HTTP_URL" --uuid "$PROG_ID" $(fleet_addrs "$SCRATCH/fx/prog")
((RC == 0)) && [[ ! -s $ERR ]] || fail "the repaired server: exit $RC: $(cat "$ERR")"
# the stripped executable with its debug file beside it, as served
llvm-symbolizer-14 --obj "$SCRATCH/fx/srv/prog" $(fleet_addrs "$SCRATCH/fx/prog") >"$SCRATCH/want3"
diff -u "$SCRATCH/want3" "$OUT" || fail "the repaired server: answers differ from llvm-symbolizer-14"
[[ ! -e $DB/debuginfod-cache && -z $(ls -A "$DB/tmp") ]] ||
	fail "a download cache was left: $(ls -A "$DB" "$DB/tmp")"
rm -rf "$DB/images" "$DB/catalog"
http_start "$T"

note "4. upstreams in order: a dead one, then the good store"
dead=$(dead_url)
run "$SYMDB" query --db "$DB" --upstream "$dead" --upstream "$HTTP_URL" --uuid "$PROG_ID" $(fleet_addrs "$SCRATCH/fx/prog")
((RC == 0)) && [[ ! -s $ERR ]] || fail "dead then good upstream: exit $RC: $(cat "$ERR")"
llvm-symbolizer-14 --obj "$SCRATCH/fx/prog" $(fleet_addrs "$SCRATCH/fx/prog") >"$SCRATCH/want"
diff -u "$SCRATCH/want" "$OUT" || fail "answers differ from llvm-symbolizer-14"
(( $(http_gets "GET /symdb/v1/${PROG_ID:0:2}/$PROG_ID.symdb") == 1 )) || fail "the good store was not asked exactly once"

note "wall time: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
