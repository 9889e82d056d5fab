#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# rebuild.sh: building an already-indexed image is a no-op (it says it
# skipped, the index file keeps its inode and mtime, the catalog does not
# change); --force writes a new file and renames it over the old one.
source "$(dirname "$0")/lib.sh"

db=$SCRATCH/db
bin=$BIN/cpp_g++_O2_pie.symtab
run "$SYMDB" build --db "$db" "$bin"
expect_ok "first build"
f=$(index_files "$db")
[[ -n $f ]] || fail "no index file after the first build"
before=$(stat -c '%i %Y.%y %s' "$f")
state=$(db_state "$db")
sleep 1.1

run "$SYMDB" build --db "$db" "$bin"
expect_ok "second build"
grep -qi skip "$OUT" "$ERR" || fail "second build does not say it skipped"
[[ $(stat -c '%i %Y.%y %s' "$f") == "$before" ]] || fail "second build touched $f"
[[ $(db_state "$db") == "$state" ]] || fail "second build changed the database"

cp "$bin" "$SCRATCH/copy-of-prog"
run "$SYMDB" build --db "$db" "$SCRATCH/copy-of-prog"
expect_ok "build of a copy (same build-id)"
grep -qi skip "$OUT" "$ERR" || fail "a copy with the same build-id was not skipped"

run "$SYMDB" build --db "$db" --force "$bin"
expect_ok "build --force"
[[ $(index_files "$db" | wc -l) == 1 ]] || fail "--force left more than one index file"
[[ $(stat -c '%i' "$f") != "${before%% *}" ]] || fail "--force did not replace the file (same inode)"
[[ -z $(find "$db/tmp" -mindepth 1) ]] || fail "--force left temp files"
echo "PASS rebuild"
