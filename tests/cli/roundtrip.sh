#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# roundtrip.sh: catalog round trip build -> list -> info -> query, through
# --db and through $SYMDB_DIR; query by --obj and by --uuid; addresses as
# arguments and on stdin; help, version and usage-error exit codes; a query
# on a file that is not indexed names the file and exits non-zero.
source "$(dirname "$0")/lib.sh"

db=$SCRATCH/db
lib=$BIN/lib_gcc_O2.so.symtab
prog=$BIN/c_gcc_O2_pie.symtab
id=$(build_id "$lib")
[[ -n $id ]] || fail "fixture $lib has no build-id"

run "$SYMDB" --help
expect_ok "symdb --help"
grep -q build "$OUT" && grep -q query "$OUT" || fail "--help lists no commands"
run "$SYMDB" --version
expect_ok "symdb --version"
run "$SYMDB" no-such-command
no_crash "symdb no-such-command"
((RC == 2)) || fail "unknown command: exit $RC, expected 2 (usage error)"
run "$SYMDB" query --db "$db" --no-such-flag
no_crash "symdb query --no-such-flag"
((RC == 2)) || fail "unknown flag: exit $RC, expected 2 (usage error)"

note "build"
run "$SYMDB" build --db "$db" "$lib" "$prog"
expect_ok "symdb build"
[[ $(index_files "$db" | wc -l) == 2 ]] || fail "expected 2 index files, got: $(index_files "$db")"
index_files "$db" | grep -q "/${id:0:2}/$id.symdb\$" || fail "no images/${id:0:2}/$id.symdb"
[[ -z $(find "$db/tmp" -mindepth 1 2>/dev/null) ]] || fail "DB/tmp not empty after build"

note "list"
run "$SYMDB" list --db "$db"
expect_ok "symdb list"
[[ $(grep -c . "$OUT") -ge 2 ]] || fail "list shows fewer than 2 lines"
grep -q "$id" "$OUT" || fail "list does not show uuid $id"
grep -q "lib_gcc_O2.so.symtab" "$OUT" || fail "list does not show the image name"

note "File_Size: the header field and list equal the file's size (stat)"
for f in $(index_files "$db"); do
	size=$(stat -c %s "$f")
	# SPEC §5: File_Size, 8 bytes big-endian at offset 16
	hdr=$(od -An -tx1 -j16 -N8 "$f" | tr -d ' \n')
	((16#$hdr == size)) || fail "$f: File_Size $((16#$hdr)), stat says $size bytes"
	u=$(basename "$f" .symdb)
	listed=$(awk -v u="$u" '$1 == u {print $3}' "$OUT")
	[[ $listed == "$size" ]] || fail "list says $listed bytes for $u, stat says $size"
done
# One byte more or less than File_Size: refused, naming File_Size.
f=$(index_files "$db" | head -1)
cp "$f" "$SCRATCH/long.symdb"
printf 'x' >>"$SCRATCH/long.symdb"
head -c $(($(stat -c %s "$f") - 1)) "$f" >"$SCRATCH/short.symdb"
for bad in long short; do
	run "$SYMDB" info --db "$db" "$SCRATCH/$bad.symdb"
	expect_error "info on an index file $bad by one byte" File_Size
done

note "info by uuid, by file, by index file"
run "$SYMDB" info --db "$db" "$id"
expect_ok "symdb info UUID"
grep -q "$id" "$OUT" || fail "info UUID does not show the uuid"
run "$SYMDB" info --db "$db" "$lib"
expect_ok "symdb info FILE"
grep -q "$id" "$OUT" || fail "info FILE does not show the uuid"
run "$SYMDB" info --db "$db" "$(index_files "$db" | grep "$id")"
expect_ok "symdb info INDEX.symdb"

note "query: stdin, arguments, --uuid, \$SYMDB_DIR"
llvm-nm-14 --defined-only "$lib" | awk '{print "0x"$1}' | sort -u >"$SCRATCH/addrs"
echo 0x0 >>"$SCRATCH/addrs"
echo 0xffffff >>"$SCRATCH/addrs"
llvm_query "$lib" <"$SCRATCH/addrs" >"$SCRATCH/expect"
run_in "$SCRATCH/addrs" "$SYMDB" query --db "$db" --obj "$lib"
expect_ok "query --obj (stdin)"
cmp -s "$OUT" "$SCRATCH/expect" || fail "query --obj differs from llvm-symbolizer: $(diff "$OUT" "$SCRATCH/expect" | head -5)"
run "$SYMDB" query --db "$db" --obj "$lib" $(cat "$SCRATCH/addrs")
expect_ok "query --obj ADDR..."
cmp -s "$OUT" "$SCRATCH/expect" || fail "query with arguments differs from llvm-symbolizer"
run_in "$SCRATCH/addrs" "$SYMDB" query --db "$db" --uuid "$id"
expect_ok "query --uuid"
cmp -s "$OUT" "$SCRATCH/expect" || fail "query --uuid differs from llvm-symbolizer (LLVM style): $(diff "$OUT" "$SCRATCH/expect" | head -5)"
SYMDB_DIR=$db run_in "$SCRATCH/addrs" "$SYMDB" query --obj "$lib"
expect_ok "query with \$SYMDB_DIR"
cmp -s "$OUT" "$SCRATCH/expect" || fail "query via \$SYMDB_DIR differs"
XDG_CACHE_HOME=$SCRATCH/xdg SYMDB_DIR= run "$SYMDB" build "$lib"
expect_ok "build into \$XDG_CACHE_HOME/symdb"
[[ -n $(index_files "$SCRATCH/xdg/symdb") ]] || fail "nothing in \$XDG_CACHE_HOME/symdb"

note "not indexed"
run "$SYMDB" query --db "$db" --no-build --obj "$BIN/c_clang_O0_pie.symtab" 0x1000
expect_error "query on a file not indexed" "c_clang_O0_pie.symtab"
run "$SYMDB" query --db "$db" --uuid 0123456789abcdef 0x1000
no_crash "query unknown uuid"
((RC != 0)) || fail "query on an unknown uuid exited 0"
run "$SYMDB" info --db "$SCRATCH/no-such-db" "$id"
no_crash "info on a missing database"
((RC != 0)) || fail "info on a missing database exited 0"
echo "PASS roundtrip"
