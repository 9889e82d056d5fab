#!/bin/bash
# SPDX-License-Identifier: MIT
#
# catalog_files.sh: the files of DB/catalog (SPEC §12.1, "Catalog files").
#   - a 0-byte data.mdb: one line "truncated: 0 bytes", exit 3 (was "Bad file
#     descriptor"), and reindex recovers; the same for a flipped byte in
#     either meta page's page size;
#   - DB/catalog, data.mdb or lock.mdb a symbolic link: refused with one line,
#     exit 3, the link's target unchanged and a dangling target not created;
#   - lock.mdb deleted under a running writer while a second writer starts:
#     the first refuses every later commit (SYMDB_E_LOCK_REPLACED) instead
#     of committing over the second (a commit racing the deletion is
#     reported as failed too), and every image either reported "indexed"
#     is in the catalog;
#   - the catalog's filesystem full at the commit (a small tmpfs on
#     DB/catalog; root only): "No space left on device", never LMDB's
#     "Input/output error" for its short write;
#   - the disk full before lock.mdb exists (a new database, or lock.mdb
#     deleted): no SIGBUS; list and query answer, build says why.
source "$(dirname "$0")/../cli/lib.sh"
require gcc

W=$SCRATCH/bin
mkdir -p "$W"
printf 'int f(int x) { return x * 3; }\nint main(int c, char **v) { (void)v; return f(c); }\n' >"$W/p.c"
gcc -g -O0 -c "$W/p.c" -o "$W/p.o"
numbered_images "$W/p.o" "$W" 300
f_addr=0x$(llvm-nm-14 "$W/p1" | awk '$3 == "f" { print $1 }')
want=$(llvm-symbolizer-14 --obj "$W/p1" "$f_addr")

one_line() { # one_line WHAT PATTERN: exit 3, one line on stderr matching
	no_crash "$1"
	((RC == 3)) || fail "$1: exit $RC, expected 3"
	[[ $(wc -l <"$ERR") == 1 ]] || fail "$1: not one line on stderr"
	grep -qF -- "$2" "$ERR" || fail "$1: expected '$2'"
}

# ---- 0-byte data.mdb -------------------------------------------------------
DB=$SCRATCH/db0
S=("$SYMDB" --db "$DB")
run "${S[@]}" build -q "$W/p1" "$W/p2"
expect_ok "build"
: >"$DB/catalog/data.mdb"
for c in list "query --no-build --obj $W/p1 $f_addr" "build $W/p3" verify; do
	# shellcheck disable=SC2086
	run "${S[@]}" $c
	one_line "$c with a 0-byte data.mdb" "$DB/catalog/data.mdb: truncated: 0 bytes"
done
run "${S[@]}" reindex
expect_ok "reindex of a 0-byte data.mdb"
[[ $("${S[@]}" query --obj "$W/p1" "$f_addr") == "$want" ]] || fail "query after reindex"
note "0-byte data.mdb: one line, exit 3; reindex recovers"

# ---- a meta page's page size flipped ---------------------------------------------
# LMDB maps data.mdb by the page size of the newer meta; only the first
# meta's was checked, so a flipped byte in the second (when current) had
# every command, reindex and verify --repair included, die of SIGBUS.
for which in current other; do
	DB=$SCRATCH/dbm-$which
	S=("$SYMDB" --db "$DB")
	run "${S[@]}" build -q "$W/p1" "$W/p2"
	expect_ok "build"
	python3 - "$DB/catalog/data.mdb" "$which" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    d = f.read(8192)
    t0, t1 = struct.unpack_from("<Q", d, 0x90)[0], struct.unpack_from("<Q", d, 4096 + 0x90)[0]
    m = 4096 if (t1 > t0) == (sys.argv[2] == "current") else 0
    f.seek(m + 0x29)  # the second byte of mm_psize: 0x1000 becomes 0xef00
    f.write(bytes([d[m + 0x29] ^ 0xff]))
PY
	for c in list "query --no-build --obj $W/p1 $f_addr" verify; do
		# shellcheck disable=SC2086
		run "${S[@]}" $c
		one_line "$c, $which meta's page size flipped" "$DB/catalog/data.mdb"
	done
	run "${S[@]}" reindex
	expect_ok "reindex, $which meta's page size flipped"
	[[ $("${S[@]}" query --obj "$W/p1" "$f_addr") == "$want" ]] || fail "query after reindex ($which)"
done
note "a meta page's page size flipped: one line, exit 3; reindex recovers"

# ---- symbolic links --------------------------------------------------------
DB=$SCRATCH/dbl
S=("$SYMDB" --db "$DB")
run "${S[@]}" build -q "$W/p1"
expect_ok "build"
mv "$DB/catalog" "$SCRATCH/elsewhere"
ln -s "$SCRATCH/elsewhere" "$DB/catalog"
sum=$(sha256sum <"$SCRATCH/elsewhere/data.mdb")
for c in list "build $W/p2" "query --no-build --obj $W/p1 $f_addr" "verify --repair" reindex; do
	# shellcheck disable=SC2086
	run "${S[@]}" $c
	one_line "$c with DB/catalog a symlink" "$DB/catalog: is a symbolic link"
done
[[ $(sha256sum <"$SCRATCH/elsewhere/data.mdb") == "$sum" ]] || fail "written through the symlink"
rm "$DB/catalog"
mv "$SCRATCH/elsewhere" "$DB/catalog"
for f in data.mdb lock.mdb; do
	mv "$DB/catalog/$f" "$SCRATCH/$f"
	ln -s "$SCRATCH/$f" "$DB/catalog/$f"
	sum=$(sha256sum <"$SCRATCH/$f")
	for c in list "build $W/p2"; do
		# shellcheck disable=SC2086
		run "${S[@]}" $c
		one_line "$c with $f a symlink" "$DB/catalog/$f: is a symbolic link"
	done
	[[ $(sha256sum <"$SCRATCH/$f") == "$sum" ]] || fail "written through the $f symlink"
	rm "$DB/catalog/$f"
	mv "$SCRATCH/$f" "$DB/catalog/$f"
done
rm "$DB/catalog/lock.mdb"
ln -s "$SCRATCH/planted" "$DB/catalog/lock.mdb"
run "${S[@]}" build "$W/p2"
one_line "build with a dangling lock.mdb symlink" "lock.mdb: is a symbolic link"
[[ ! -e $SCRATCH/planted ]] || fail "the dangling lock.mdb symlink's target was created"
note "DB/catalog, data.mdb, lock.mdb as symlinks: refused, nothing written through them"

# ---- lock.mdb deleted under a running writer --------------------------------
DB=$SCRATCH/dbk
S=("$SYMDB" --db "$DB")
run "${S[@]}" build -q "$W/p1"
expect_ok "build"
first=() second=()
for i in $(seq 2 150); do first+=("$W/p$i"); done
for i in $(seq 151 300); do second+=("$W/p$i"); done
"${S[@]}" build "${first[@]}" >"$SCRATCH/out1" 2>"$SCRATCH/err1" &
b1=$!
for ((t = 0; t < 600; t++)); do # until the first builder committed 10
	(($(grep -c '^indexed' "$SCRATCH/out1" || true) >= 10)) && break
	sleep 0.05
done
rm "$DB/catalog/lock.mdb"
"${S[@]}" build "${second[@]}" >"$SCRATCH/out2" 2>"$SCRATCH/err2" || true
set +e
wait "$b1"
rc1=$?
set -e
((rc1 < 128)) || fail "first builder killed by a signal"
n1=$(grep -c '^indexed' "$SCRATCH/out1" || true)
((n1 < ${#first[@]})) || fail "the first builder committed all $n1 after lock.mdb was deleted"
grep -q 'SYMDB_E_LOCK_REPLACED: catalog/lock.mdb was deleted or replaced' "$SCRATCH/err1" ||
	fail "the first builder did not say lock.mdb was replaced: $(head -2 "$SCRATCH/err1")"
((rc1 == 1)) || fail "first builder: exit $rc1, expected 1"
listed=$("${S[@]}" list | awk '{ print $1 }' | sort)
missing=$(cat "$SCRATCH/out1" "$SCRATCH/out2" | awk '/^indexed/ { print $2 }' | sort |
	comm -23 - <(echo "$listed") | wc -l)
((missing == 0)) || fail "$missing images reported indexed are missing from the catalog"
note "lock.mdb deleted: the running writer refused $((${#first[@]} - n1)) commits, no entry lost"

# ---- ENOSPC at the commit ------------------------------------------------------
enospc_case() { # enospc_case KIB: DB/catalog on a tmpfs with KIB KiB free
	local DB=$SCRATCH/dbn$1 m i
	local S=("$SYMDB" --db "$DB")
	run "${S[@]}" build -q "$W/p1"
	expect_ok "build"
	mkdir "$DB/save"
	cp "$DB/catalog/"* "$DB/save/"
	if ! mount -t tmpfs -o size=160k tmpfs "$DB/catalog" 2>/dev/null; then
		skip_part "cannot mount a tmpfs (not root?): ENOSPC"
		return 0
	fi
	m=$DB/catalog
	cp "$DB/save/"* "$m/"
	head -c $((($(df -k --output=avail "$m" | tail -1) - $1) * 1024)) /dev/zero >"$m/filler"
	for ((i = 2; i < 300; i++)); do
		run "${S[@]}" build "$W/p$i"
		((RC == 0)) || break
	done
	umount "$m"
	no_crash "build on a full catalog filesystem"
	((RC == 1)) || fail "no build failed with $1 KiB free (exit $RC)"
	grep -q 'No space left on device' "$ERR" || fail "$1 KiB free: $(cat "$ERR")"
	! grep -q 'Input/output error' "$ERR" || fail "$1 KiB free: EIO reported"
}
# ---- a full disk before LMDB maps lock.mdb -----------------------------------------
# LMDB creates lock.mdb sparse and writes through its mapping: on a full
# disk that was SIGBUS for every command, query and list included.  A
# fresh database and an existing one whose lock.mdb was deleted, on a full
# tmpfs: build says why (exit 3), list and query --no-build answer (the
# read-only open without a reader table), query indexes privately (one
# warning), and no command dies of a signal.
enospc_lock_case() {
	local T=$SCRATCH/full DB
	mkdir -p "$T"
	if ! mount -t tmpfs -o size=2m tmpfs "$T" 2>/dev/null; then
		skip_part "cannot mount a tmpfs: lock.mdb on a full disk"
		return 0
	fi
	DB=$T/old
	run "$SYMDB" --db "$DB" build -q "$W/p1"
	expect_ok "build before the disk is full"
	rm "$DB/catalog/lock.mdb"
	head -c 100M /dev/zero >"$T/filler" 2>/dev/null || true
	run "$SYMDB" --db "$DB" list
	no_crash "list, lock.mdb gone, disk full"
	((RC == 0)) && grep -q "$W/p1" "$OUT" || { umount "$T"; fail "list on a full disk: exit $RC: $(cat "$OUT" "$ERR")"; }
	run "$SYMDB" --db "$DB" query --no-build --obj "$W/p1" "$f_addr"
	no_crash "query --no-build, lock.mdb gone, disk full"
	[[ $RC == 0 && $(cat "$OUT") == "$want" ]] || { umount "$T"; fail "query on a full disk: exit $RC: $(cat "$OUT" "$ERR")"; }
	run "$SYMDB" --db "$DB" build "$W/p2"
	no_crash "build, lock.mdb gone, disk full"
	((RC == 3)) && grep -q 'lock.mdb: cannot create the lock file: No space left on device' "$ERR" ||
		{ umount "$T"; fail "build on a full disk: exit $RC: $(cat "$ERR")"; }
	run "$SYMDB" --db "$T/new" query --obj "$W/p1" "$f_addr"
	no_crash "query of a new database on a full disk"
	[[ $RC == 0 && $(cat "$OUT") == "$want" ]] ||
		{ umount "$T"; fail "query, new database, full disk: exit $RC: $(cat "$OUT" "$ERR")"; }
	run "$SYMDB" --db "$T/new2" build "$W/p1"
	no_crash "build of a new database on a full disk"
	((RC == 3)) || { umount "$T"; fail "build, new database, full disk: exit $RC: $(cat "$ERR")"; }
	umount "$T"
}

# A bundle imported on a full disk: the database's trouble, not a damaged
# bundle (it said "bundle rejected ... cannot write a temporary file", exit
# 4): the temporary file and the reason, exit 1, nothing left in DB/tmp.
enospc_import_case() {
	local T=$SCRATCH/fullimp DB
	mkdir -p "$T"
	run "$SYMDB" --db "$SCRATCH/bsrc" build -q "$W/p3"
	"$SYMDB" --db "$SCRATCH/bsrc" export --all >"$SCRATCH/b.bundle" || fail "export"
	if ! mount -t tmpfs -o size=2m tmpfs "$T" 2>/dev/null; then
		skip_part "cannot mount a tmpfs: import on a full disk"
		return 0
	fi
	DB=$T/db
	run "$SYMDB" --db "$DB" build -q "$W/p1"
	head -c 100M /dev/zero >"$T/filler" 2>/dev/null || true
	run "$SYMDB" --db "$DB" import "$SCRATCH/b.bundle"
	local left
	left=$(find "$DB/tmp" -type f | wc -l)
	umount "$T"
	no_crash "import on a full disk"
	((RC == 1)) || fail "import on a full disk: exit $RC, expected 1: $(cat "$ERR")"
	[[ $(wc -l <"$ERR") == 1 ]] && grep -q "$DB/tmp/bundle\..*: cannot write: No space left on device" "$ERR" ||
		fail "import on a full disk: $(cat "$ERR")"
	((left == 0)) || fail "import on a full disk left $left files in DB/tmp"
}

if (($(id -u) == 0)); then
	for k in 4 8 24; do enospc_case "$k"; done
	enospc_import_case
	note "bundle import on a full disk: the temporary file and ENOSPC, exit 1"
	note "catalog filesystem full at commit: No space left on device"
	enospc_lock_case
	note "lock.mdb on a full disk: no SIGBUS; read-only commands answer"
else
	skip_part "not root: cannot mount a small tmpfs for ENOSPC"
fi
