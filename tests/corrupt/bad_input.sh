#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bad_input.sh CASE: `symdb build` on one kind of bad input.  Each case must
# give one line on stderr naming the file, a non-zero exit below 128, no
# sanitizer report, and leave the database exactly as it was (same `symdb
# list`, same index file bytes, nothing in DB/tmp).  Cases: not_elf empty
# truncated_elf shdr_outside directory missing et_core mixed readonly_db
# long_path.  (A file with no symbol and no DWARF is no bad input: it is
# indexed, tests/cli/empty_image.sh.)
source "$(dirname "$0")/../cli/lib.sh"
require gcc strip llvm-objcopy-14

case=${1:?usage: bad_input.sh CASE}
db=$SCRATCH/db
good=$BIN/lib_gcc_O2.so.symtab
run "$SYMDB" build --db "$db" "$good"
expect_ok "setup build"
state=$(db_state "$db")

bad=$SCRATCH/input-$case
case $case in
not_elf) printf 'this is not an ELF file, just text\n%.0s' {1..40} >"$bad" ;;
empty) : >"$bad" ;;
truncated_elf) head -c 3000 "$BIN/c_gcc_O2_pie.symtab" >"$bad" ;;
shdr_outside)
	# e_shoff (ELF64 offset 0x28) pointing past the end of the file
	cp "$BIN/c_gcc_O2_pie.symtab" "$bad"
	python3 - "$bad" <<'PY'
import os, struct, sys
p = sys.argv[1]
with open(p, "r+b") as f:
    f.seek(0x28)
    f.write(struct.pack("<Q", os.path.getsize(p) + 4096))
PY
	;;
directory) mkdir -p "$bad" ;;
missing) bad=$SCRATCH/no/such/file ;;
et_core)
	# e_type ET_CORE (offset 16): a core dump is not an image
	cp "$BIN/c_gcc_O2_pie.symtab" "$bad"
	printf '\004' | dd of="$bad" bs=1 seek=16 conv=notrunc status=none
	run "$SYMDB" build --db "$db" "$bad"
	expect_error "build $case" "ET_CORE (core dump) is not supported, only ET_EXEC, ET_DYN and ET_REL"
	;;
mixed)
	# a good file and a bad one in one call: the good one is indexed, the
	# bad one reported, the exit status non-zero
	: >"$bad"
	run "$SYMDB" build --db "$db" "$bad" "$BIN/c_clang_O2_pie.symtab"
	no_crash "mixed build"
	((RC != 0)) || fail "mixed build: exit 0 although one input was bad"
	grep -qF "$bad" "$ERR" || fail "mixed build: stderr does not name $bad"
	[[ $(index_files "$db" | wc -l) == 2 ]] || fail "mixed build: the good file was not indexed"
	echo "PASS bad_input mixed"
	exit 0
	;;
readonly_db)
	# Read-only database: as root, permissions do not stop writes, so
	# make the directory read-only with a bind mount in a private mount
	# namespace (EROFS), else run as nobody (EACCES), else skip.
	other=$BIN/c_gcc_O0_pie.symtab
	llvm_query "$good" 0x1100 0x1200 >"$SCRATCH/expect"
	cat >"$SCRATCH/ro.sh" <<RO
set -u
"$SYMDB" build --db "$db" "$other" >"$SCRATCH/build.out" 2>"$SCRATCH/build.err"
echo \$? >"$SCRATCH/build.rc"
"$SYMDB" query --db "$db" --obj "$good" 0x1100 0x1200 >"$SCRATCH/query.out" 2>"$SCRATCH/query.err"
echo \$? >"$SCRATCH/query.rc"
"$SYMDB" list --db "$db" >"$SCRATCH/list.out" 2>&1
echo \$? >"$SCRATCH/list.rc"
RO
	if unshare -m true 2>/dev/null; then
		how="read-only bind mount"
		unshare -m bash -c "mount --bind '$db' '$db' && mount -o remount,bind,ro '$db' && bash '$SCRATCH/ro.sh'" ||
			fail "could not set up the read-only mount"
	elif [[ $(id -u) != 0 ]]; then
		how="chmod a-w (not root)"
		chmod -R a-w "$db"
		bash "$SCRATCH/ro.sh"
		chmod -R u+w "$db"
	elif id nobody >/dev/null 2>&1 && runuser -u nobody -- true 2>/dev/null; then
		how="runuser -u nobody"
		chmod -R a+rX "$SCRATCH"
		chmod a+w "$SCRATCH"
		runuser -u nobody -- bash "$SCRATCH/ro.sh"
	else
		echo "SKIP: no way to make a read-only directory here"
		exit 77
	fi
	note "read-only database via $how"
	RC=$(cat "$SCRATCH/build.rc")
	cp "$SCRATCH/build.err" "$ERR"
	cp "$SCRATCH/build.out" "$OUT"
	expect_error "build into a read-only database" "$db" "$other"
	[[ $(cat "$SCRATCH/query.rc") == 0 ]] || fail "query on a read-only database failed: $(cat "$SCRATCH/query.err")"
	cmp -s "$SCRATCH/query.out" "$SCRATCH/expect" || fail "query on a read-only database differs from llvm-symbolizer"
	[[ $(cat "$SCRATCH/list.rc") == 0 ]] || fail "list on a read-only database failed: $(cat "$SCRATCH/list.out")"
	[[ $(db_state "$db") == "$state" ]] || fail "the read-only database changed"
	echo "PASS bad_input readonly_db"
	exit 0
	;;
long_path)
	# a path of ~4000 bytes (PATH_MAX is 4096): the error keeps its reason
	# and names the whole path, for build and for info
	d=$SCRATCH
	while ((${#d} < 3900)); do d=$d/$(printf 'd%.0s' {1..90}); done
	mkdir -p "$d"
	bad=$d/not-elf-with-a-long-path
	printf 'this is not an ELF file, just text\n%.0s' {1..40} >"$bad"
	run "$SYMDB" build --db "$db" "$bad"
	expect_error "build $case" "not an ELF file"
	grep -qF -- "symdb: $bad: not an ELF file" "$ERR" || fail "build $case: the line is not 'symdb: PATH: not an ELF file'"
	[[ $(db_state "$db") == "$state" ]] || fail "$case: database changed"
	run "$SYMDB" info --db "$db" "$bad"
	expect_error "info $case" "not an ELF"
	grep -qF -- "symdb: $bad: not an ELF" "$ERR" || fail "info $case: the line does not name the path"
	# the indexer's ELF reader: section headers past the end of the file
	head -c 3000 "$BIN/c_gcc_O2_pie.symtab" >"$d/truncated"
	run "$SYMDB" build --db "$db" "$d/truncated"
	expect_error "build truncated $case" "section headers lie outside the file"
	grep -qF -- "symdb: $d/truncated: section headers lie outside the file" "$ERR" ||
		fail "build truncated $case: the line is not 'symdb: PATH: reason'"
	# the indexer's section reader: .debug_info's sh_size past the end
	python3 - "$FIXTURES/full/c_gcc_O2_pie" "$d/dwarf" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
stroff, = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)
for i in range(shnum):
    h = shoff + i * shentsize
    n, = struct.unpack_from("<I", data, h)
    if data[stroff + n:data.index(b"\0", stroff + n)] == b".debug_info":
        struct.pack_into("<Q", data, h + 0x20, 4 * len(data))
        break
else:
    raise SystemExit("no .debug_info")
open(sys.argv[2], "wb").write(data)
PY
	run "$SYMDB" build --db "$db" "$d/dwarf"
	expect_error "build dwarf $case" "section .debug_info lies outside the file"
	grep -qF -- "symdb: $d/dwarf: section .debug_info lies outside the file" "$ERR" ||
		fail "build dwarf $case: the line is not 'symdb: PATH: reason'"
	[[ $(db_state "$db") == "$state" ]] || fail "$case: database changed"
	# a database ~3900 bytes deep: the catalog file checks keep their reason
	ldb=$d/db
	run "$SYMDB" build --db "$ldb" "$good"
	expect_ok "build into $ldb"
	cat=$ldb/catalog
	mv "$cat/data.mdb" "$cat/data.real"
	ln -s data.real "$cat/data.mdb"
	run "$SYMDB" list --db "$ldb"
	expect_error "list, data.mdb a symlink, $case" \
		"data.mdb: is a symbolic link; symdb does not follow links inside a database"
	rm "$cat/data.mdb"
	mkdir "$cat/data.mdb"
	run "$SYMDB" list --db "$ldb"
	expect_error "list, data.mdb a directory, $case" "data.mdb: not a regular file"
	rmdir "$cat/data.mdb"
	run "$SYMDB" list --db "$ldb"
	expect_error "list, data.mdb missing, $case" "data.mdb: missing (run 'symdb reindex')"
	mv "$cat/data.real" "$cat/data.mdb"
	run "$SYMDB" list --db "$ldb"
	expect_ok "list, data.mdb back, $case"
	# ... and its catalog on a read-only mount (as in readonly_db)
	if unshare -m true 2>/dev/null; then
		RC=0
		unshare -m bash -c "mount --bind '$ldb' '$ldb' && mount -o remount,bind,ro '$ldb' &&
			'$SYMDB' build --db '$ldb' '$BIN/c_gcc_O0_pie.symtab' >'$OUT' 2>'$ERR'" || RC=$?
		expect_error "build into a read-only $case database" \
			"catalog: catalog is not writable: Read-only file system"
	else
		note "no private mount namespace: the read-only catalog case is not run"
	fi
	echo "PASS bad_input long_path (${#bad} bytes)"
	exit 0
	;;
*) fail "unknown case $case" ;;
esac

run "$SYMDB" build --db "$db" "$bad"
expect_error "build $case" "$bad"
[[ $(db_state "$db") == "$state" ]] || fail "$case: database changed: $(diff <(echo "$state") <(db_state "$db"))"
run "$SYMDB" info --db "$db" "$bad"
no_crash "info $case"
((RC != 0)) || fail "info on bad input ($case) exited 0"
echo "PASS bad_input $case"
