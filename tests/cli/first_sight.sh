#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# first_sight.sh: `symdb query` indexes a binary it meets unindexed, and a
# database that cannot take the index does not stop the answers.
#   - a database directory that does not exist is created, the index
#     published there, the answers llvm-symbolizer-14's, stderr empty;
#   - the next run answers from the published index: an indexer that fails
#     (and records that it ran) is never started;
#   - --no-build: no indexing, "??" answers, symdb's "not indexed" line,
#     exit 1; a missing database stays missing (exit 3);
#   - a database that cannot be created, a read-only one (a read-only bind
#     mount, else a user who may not write it) and a full one (a small
#     tmpfs): answers as llvm-symbolizer-14's, exactly ONE warning line
#     naming the database, exit 0, nothing left in $TMPDIR, and nothing
#     written to the database.
# The read-only and full cases need root (mount) or setpriv; without them
# those parts are skipped.
source "$(dirname "$0")/lib.sh"

F=$FIXTURES/full
a=$F/c_gcc_O2_pie
b=$F/cpp_g++_O2_pie
c=$F/cpplib_g++_O2.so
mkdir -p "$SCRATCH/tmp"
export TMPDIR=$SCRATCH/tmp
unset SYMDB_INDEXER

# addrs BIN N: N function addresses of BIN
addrs() {
	llvm-nm-14 --defined-only "$1" | awk '$2 ~ /^[tTwW]$/ { print "0x" $1 }' | sort -u | head -"$2"
}
# requests: "FILE ADDR" lines over a, b and c (per-line mode)
for bin in "$a" "$b" "$c"; do
	for x in $(addrs "$bin" 5); do echo "$bin $x"; done
done >"$SCRATCH/requests"
llvm-symbolizer-14 --debug-file-directory=/nonexistent <"$SCRATCH/requests" >"$SCRATCH/expect"
# query_all DB [ENV...]: symdb's answers to the requests
query_all() {
	local db=$1
	shift
	set +e
	env "$@" "$SYMDB" query --db "$db" <"$SCRATCH/requests" >"$OUT" 2>"$ERR"
	RC=$?
	set -e
}
no_leftovers() {
	[[ -z $(ls -A "$SCRATCH/tmp") ]] || fail "$1: left in \$TMPDIR: $(ls -A "$SCRATCH/tmp")"
}
# one_warning WHAT DB: exit 0, llvm's answers, one warning line naming DB
one_warning() {
	no_crash "$1"
	((RC == 0)) || fail "$1: exit $RC, expected 0"
	cmp -s "$OUT" "$SCRATCH/expect" || fail "$1: answers differ from llvm-symbolizer-14's"
	[[ $(wc -l <"$ERR") == 1 ]] || fail "$1: $(wc -l <"$ERR") lines on stderr, expected one warning"
	grep -q "^symdb: warning: database $2 cannot be written (.*); indexing into a private temporary directory for this process\$" "$ERR" ||
		fail "$1: not the warning: $(cat "$ERR")"
	note "$1: $(cat "$ERR")"
	no_leftovers "$1"
}

note "a database that does not exist is created"
db=$SCRATCH/new/db
query_all "$db"
expect_ok "first sight"
cmp -s "$OUT" "$SCRATCH/expect" || fail "first sight: answers differ from llvm-symbolizer-14's"
[[ ! -s $ERR ]] || fail "first sight: stderr: $(cat "$ERR")"
(($(index_files "$db" | wc -l) == 3)) || fail "first sight: $(index_files "$db" | wc -l) index files, expected 3"
no_leftovers "first sight"

note "the next run answers from the published indexes"
printf '#!/bin/sh\ntouch "%s"\nexit 1\n' "$SCRATCH/indexer-ran" >"$SCRATCH/no-indexer"
chmod +x "$SCRATCH/no-indexer"
query_all "$db" SYMDB_INDEXER="$SCRATCH/no-indexer"
expect_ok "second run"
cmp -s "$OUT" "$SCRATCH/expect" || fail "second run: answers differ from llvm-symbolizer-14's"
[[ ! -e $SCRATCH/indexer-ran ]] || fail "second run: the indexer was started"
run "$SYMDB" query --db "$db" --obj "$a" $(addrs "$a" 3)
expect_ok "--obj, indexed"
SYMDB_INDEXER="$SCRATCH/no-indexer" run "$SYMDB" query --db "$db" --obj "$a" $(addrs "$a" 3)
[[ ! -e $SCRATCH/indexer-ran ]] || fail "--obj: the indexer was started"

note "--no-build"
db2=$SCRATCH/db2
run "$SYMDB" build --db "$db2" "$a"
expect_ok "setup build"
run "$SYMDB" query --db "$db2" --no-build --obj "$b" $(addrs "$b" 2)
expect_error "--no-build, not indexed" "$(build_id "$b")"
((RC == 1)) || fail "--no-build, not indexed: exit $RC, expected 1"
grep -qF "symdb build" "$ERR" || fail "--no-build: no hint to run symdb build"
[[ $(cat "$OUT") == $'??\n??:0:0\n\n??\n??:0:0' ]] || fail "--no-build: not one ?? answer per address: $(cat "$OUT")"
(($(index_files "$db2" | wc -l) == 1)) || fail "--no-build indexed something"
run "$SYMDB" query --db "$SCRATCH/none/db" --no-build --obj "$a" 0x1000
expect_error "--no-build, no database" "$SCRATCH/none/db"
((RC == 3)) || fail "--no-build, no database: exit $RC, expected 3"
[[ ! -e $SCRATCH/none ]] || fail "--no-build created the database"

note "a stripped libc.so.6 with libc6-dbg: .dynsym names, file:line from the debug file"
libc=/lib/x86_64-linux-gnu/libc.so.6
lid=$(build_id "$libc" 2>/dev/null || true)
if [[ -n $lid && -f /usr/lib/debug/.build-id/${lid:0:2}/${lid:2}.debug ]]; then
	llvm-nm-14 -D --defined-only "$libc" | awk '$2 ~ /^[tTiW]$/ { print "0x" $1 }' | sort -u |
		awk 'NR % 97 == 1' | head -40 >"$SCRATCH/libc.addrs"
	echo 0x98944 >>"$SCRATCH/libc.addrs"
	llvm-symbolizer-14 --obj "$libc" <"$SCRATCH/libc.addrs" >"$SCRATCH/libc.expect"
	run_in "$SCRATCH/libc.addrs" "$SYMDB" query --db "$SCRATCH/libc-db" --obj "$libc"
	expect_ok "libc.so.6 on first sight"
	cmp -s "$OUT" "$SCRATCH/libc.expect" || fail "libc.so.6: answers differ from llvm-symbolizer-14's"
	grep -q '^__libc_malloc$' "$OUT" || fail "libc.so.6: 0x98944 is not __libc_malloc"
else
	skip_part "libc6-dbg's debug file for $libc is not installed"
fi

note "a database that cannot be created"
: >"$SCRATCH/a-file"
query_all "$SCRATCH/a-file/db"
one_warning "uncreatable database" "$SCRATCH/a-file/db"

# snapshot DB: its files, sizes and contents
# (lock.mdb is LMDB's lock table, which every reader writes)
snapshot() { (cd "$1" && find . -type f ! -name lock.mdb -print0 | sort -z | xargs -0 sha256sum); }

note "a read-only database"
ro=$SCRATCH/ro
run "$SYMDB" build --db "$ro" "$a"
expect_ok "setup build"
before=$(snapshot "$ro")
if mkdir -p "$SCRATCH/ro-mnt" && mount --bind "$ro" "$SCRATCH/ro-mnt" 2>/dev/null; then
	if mount -o remount,bind,ro "$SCRATCH/ro-mnt" 2>/dev/null; then
		query_all "$SCRATCH/ro-mnt"
		umount "$SCRATCH/ro-mnt" # before any check can fail
		one_warning "read-only mount" "$SCRATCH/ro-mnt"
	else
		umount "$SCRATCH/ro-mnt"
		skip_part "cannot remount read-only"
	fi
elif command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$SYMDB"; then
	chmod -R a+rX,go-w "$ro" "$SCRATCH/tmp" && chmod 1777 "$SCRATCH/tmp"
	query_all "$ro" setpriv --reuid=65534 --regid=65534 --clear-groups
	one_warning "database not writable by this user" "$ro"
else
	skip_part "no way to make a read-only database here (not root, no setpriv)"
fi
[[ $(snapshot "$ro") == "$before" ]] || fail "the read-only database changed"

note "a full database"
full=$SCRATCH/full
mkdir -p "$full"
if mount -t tmpfs -o size=1m tmpfs "$full" 2>/dev/null; then
	run "$SYMDB" build --db "$full/db" "$a"
	if ((RC == 0)); then
		dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null || true
		before=$(snapshot "$full/db")
		query_all "$full/db"
		after=$(snapshot "$full/db")
		umount "$full" # before any check can fail
		one_warning "full disk" "$full/db"
		[[ $after == "$before" ]] || fail "the full database changed"
	else
		umount "$full"
		skip_part "a 1 MiB tmpfs cannot hold a database: $(cat "$ERR")"
	fi
else
	skip_part "cannot mount a small tmpfs (not root)"
fi
echo "PASS first_sight"
