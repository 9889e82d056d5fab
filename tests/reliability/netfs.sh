#!/bin/bash
# SPDX-License-Identifier: MIT
#
# netfs.sh: a database on a network filesystem is refused (SPEC §12.1) with
# one line naming the directory, exit 3, and nothing created.  No NFS mount
# is available to a test: netfs_shim (LD_PRELOAD) makes statfs(2) report
# NFS's f_type for every path.
source "$(dirname "$0")/../cli/lib.sh"

: "${NETFS_SHIM:?NETFS_SHIM (tests/reliability/netfs_shim) must be set}"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
f=$FIXTURES/full/c_gcc_O2_pie
db=$SCRATCH/db
run "$SYMDB" build --db "$db" -q "$f"
expect_ok "build on a local filesystem"

run env LD_PRELOAD="$NETFS_SHIM" "$SYMDB" build --db "$SCRATCH/new" "$f"
expect_error "build into a new database on NFS" "network filesystem"
((RC == 3)) || fail "build on NFS: exit $RC, expected 3"
[[ ! -e $SCRATCH/new ]] || fail "build on NFS created $SCRATCH/new"
grep -qF "$SCRATCH/new" "$ERR" || fail "the error does not name the directory"

for cmd in "list" "query --no-build --obj $f 0x1000" "build --force $f"; do
	before=$(db_state "$db")
	run env LD_PRELOAD="$NETFS_SHIM" "$SYMDB" $cmd --db "$db"
	expect_error "$cmd on NFS" "database is on a network filesystem"
	((RC == 3)) || fail "$cmd on NFS: exit $RC, expected 3"
	[[ $(db_state "$db") == "$before" ]] || fail "$cmd on NFS changed the database"
done
echo "PASS netfs"
